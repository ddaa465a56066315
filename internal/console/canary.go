package console

import "net/http"

func (c *Console) handleCanary(w http.ResponseWriter, r *http.Request, v *visit) {
	status, err := v.api.Canary(r.Context())
	if err != nil {
		c.apiProblem(w, r, err)
		return
	}
	c.renderPage(w, r, v, http.StatusOK, "canary.html", "Reality canary", status)
}

func (c *Console) handleCanaryRun(w http.ResponseWriter, r *http.Request, v *visit) {
	if _, err := v.api.CanaryRun(r.Context()); err != nil {
		c.apiProblem(w, r, err)
		return
	}
	http.Redirect(w, r, "/console/canary?done=canary", http.StatusSeeOther)
}
