package console

import "net/http"

func (c *Console) handleAudit(w http.ResponseWriter, r *http.Request, v *visit) {
	report, err := v.api.Audit(r.Context())
	if err != nil {
		c.apiProblem(w, r, err)
		return
	}
	c.renderPage(w, r, v, http.StatusOK, "audit.html", "Audit", report)
}
