package api

import (
	"net/http"

	"github.com/maestro-run/maestro/activities"
	"github.com/maestro-run/maestro/apitype"
)

// handleMetrics answers the counters an operator alerts on. They count
// since this process started; the reconciliation list is the durable
// record of what is held now.
func handleMetrics(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, apitype.Metrics{PostCallHeldTotal: activities.HeldDeliveries.Value()})
}
