package console

import (
	"net/http"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/tools"
)

// canaryView is the canary's state, with whether the operator may run it.
type canaryView struct {
	apitype.CanaryStatus
	Run permit
}

func (c *Console) handleCanary(w http.ResponseWriter, r *http.Request, v *visit) {
	status, err := v.api.Canary(r.Context())
	if err != nil {
		c.apiProblem(w, r, err)
		return
	}
	c.renderPage(w, r, v, http.StatusOK, "canary.html", "Reality canary", canaryView{CanaryStatus: status, Run: c.permit(v.op, tools.PermRunCanary)})
}

func (c *Console) handleCanaryRun(w http.ResponseWriter, r *http.Request, v *visit) {
	if _, err := v.api.CanaryRun(r.Context()); err != nil {
		c.apiProblem(w, r, err)
		return
	}
	http.Redirect(w, r, "/console/canary?done=canary", http.StatusSeeOther)
}
