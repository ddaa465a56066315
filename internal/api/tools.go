package api

import (
	"net/http"

	"github.com/maestro-run/maestro/apitype"
)

// handleTools lists what the calling agent may use, and nothing else.
func (s *Server) handleTools(w http.ResponseWriter, r *http.Request) {
	agent := agentFrom(r.Context())
	out := apitype.ToolList{Agent: agent.ID, Tools: []apitype.Tool{}}
	for _, t := range s.cfg.Catalog.Load().Tools() {
		if !agent.Allows(t.Name) || s.cfg.Canary.Withheld(t) {
			continue
		}
		out.Tools = append(out.Tools, apitype.Tool{
			Name:          t.Name,
			Description:   t.Description,
			Effect:        t.Effect,
			Delivery:      t.Delivery,
			Reversibility: t.Reversibility,
			Route:         t.Route(),
			RiskTags:      t.RiskTags,
			InputSchema:   t.InputSchema.JSON(),
			ReceiptFields: t.ReceiptFields,
		})
	}
	writeJSON(w, http.StatusOK, out)
}
