package console

import (
	"net/http"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/ledger"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// reconciliationsView is one page of the reconciliation queue.
type reconciliationsView struct {
	Reconciliations []apitype.Reconciliation
	Page            pageView
}

type reconciliationView struct {
	apitype.Reconciliation
	// Open says whether it still waits for a finding or a decision.
	Open bool
	// Typed keeps the reason typed when settling was refused.
	Typed string
	// Settle says whether the operator may declare the outcome by hand.
	Settle permit
}

func (c *Console) handleReconciliations(w http.ResponseWriter, r *http.Request, v *visit) {
	f, ok := c.readListFilter(w, r, v)
	if !ok {
		return
	}
	list, err := v.api.ReconciliationPage(r.Context(), f.query(""))
	if err != nil {
		c.apiProblem(w, r, err)
		return
	}
	c.renderPage(w, r, v, http.StatusOK, "reconciliations.html", "Reconciliations", reconciliationsView{
		Reconciliations: list.Reconciliations,
		Page:            newPageView("/console/reconciliations", f, len(list.Reconciliations), list.Paging),
	})
}

func (c *Console) handleReconciliation(w http.ResponseWriter, r *http.Request, v *visit) {
	c.showReconciliation(w, r, v, http.StatusOK, "")
}

func (c *Console) showReconciliation(w http.ResponseWriter, r *http.Request, v *visit, status int, problem string) {
	rec, err := v.api.Reconciliation(r.Context(), r.PathValue("key"))
	if err != nil {
		c.apiProblem(w, r, err)
		return
	}
	data := reconciliationView{Reconciliation: rec, Open: awaitsHuman(rec), Typed: r.PostFormValue("reason"),
		Settle: c.permit(v.op, tools.PermSettleReconciliations)}
	c.renderView(w, r, status, "reconciliation.html", viewOf(r, v, "Reconciliation "+rec.Tool, problem, data))
}

// awaitsHuman says whether a reconciliation still waits for a human: an effect
// whose outcome is unknown, or post-call work no channel delivered.
func awaitsHuman(rec apitype.Reconciliation) bool {
	if rec.Held != nil {
		return rec.Status == string(ledger.PostCallHeld)
	}
	return rec.Status == string(mt.EffectNeedsReconciliation)
}

func (c *Console) handleReconciliationCheck(w http.ResponseWriter, r *http.Request, v *visit) {
	key := r.PathValue("key")
	if _, err := v.api.CheckReconciliation(r.Context(), key); err != nil {
		status, msg := apiError(err)
		c.showReconciliation(w, r, v, status, msg)
		return
	}
	http.Redirect(w, r, reconciliationPath(key)+"?done=checked", http.StatusSeeOther)
}

func (c *Console) handleReconciliationResolve(w http.ResponseWriter, r *http.Request, v *visit) {
	key, outcome, reason := r.PathValue("key"), r.PostFormValue("outcome"), r.PostFormValue("reason")
	switch {
	case outcome != apitype.OutcomeDelivered && outcome != apitype.OutcomeNotDelivered:
		c.showReconciliation(w, r, v, http.StatusUnprocessableEntity, "Choose what happened at the provider: delivered or not delivered. Nothing was settled.")
		return
	case reason == "":
		c.showReconciliation(w, r, v, http.StatusUnprocessableEntity, "Settling needs a reason: say what you checked, and where. Nothing was settled.")
		return
	}
	if _, err := v.api.ResolveReconciliation(r.Context(), key, outcome, reason); err != nil {
		status, msg := apiError(err)
		c.showReconciliation(w, r, v, status, msg+" Nothing was settled.")
		return
	}
	http.Redirect(w, r, reconciliationPath(key)+"?done=settled", http.StatusSeeOther)
}

func (c *Console) handleReconciliationRetry(w http.ResponseWriter, r *http.Request, v *visit) {
	key := r.PathValue("key")
	if _, err := v.api.RetryReconciliation(r.Context(), key); err != nil {
		status, msg := apiError(err)
		c.showReconciliation(w, r, v, status, msg)
		return
	}
	http.Redirect(w, r, reconciliationPath(key)+"?done=retried", http.StatusSeeOther)
}
