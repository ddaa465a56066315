package console

import (
	"net/http"

	"github.com/maestro-run/maestro/apitype"
)

// refusalsView is one page of the refusal log.
type refusalsView struct {
	Refusals []apitype.RefusalRecord
	Page     pageView
}

// handleRefusals lists the calls refused before anything ran, newest
// first, so operators see an agent held at a cap as well as a bad call.
func (c *Console) handleRefusals(w http.ResponseWriter, r *http.Request, v *visit) {
	f, ok := c.readListFilter(w, r, v)
	if !ok {
		return
	}
	list, err := v.api.Refusals(r.Context(), f.query(""))
	if err != nil {
		c.apiProblem(w, r, err)
		return
	}
	c.renderPage(w, r, v, http.StatusOK, "refusals.html", "Refusals", refusalsView{
		Refusals: list.Refusals,
		Page:     newPageView("/console/refusals", f, len(list.Refusals), list.Paging),
	})
}
