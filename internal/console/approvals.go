package console

import (
	"cmp"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/apitype"
	mt "github.com/maestro-run/maestro/maestrotype"
)

// lastCalls is how many of a session's calls an approver sees.
const lastCalls = 5

// queueView is the approval queue.
type queueView struct {
	Approvals []apitype.Approval
	// PollMillis is how often the page refreshes the queue, and PollURL
	// what it fetches: this page of it, under the same filters.
	PollMillis int64
	PollURL    string
	Page       pageView
}

// queue reads this page of the queue under the URL's filters, or answers
// why it cannot.
func (c *Console) queue(w http.ResponseWriter, r *http.Request, v *visit) (queueView, bool) {
	f, ok := c.readListFilter(w, r, v)
	if !ok {
		return queueView{}, false
	}
	// Oldest first, as the API lists them: the caller who has waited
	// longest is decided first.
	list, err := v.api.ApprovalPage(r.Context(), f.query("pending"))
	if err != nil {
		c.apiProblem(w, r, err)
		return queueView{}, false
	}
	return queueView{Approvals: list.Approvals, PollMillis: c.cfg.PollInterval.Milliseconds(),
		PollURL: f.link("/console/approvals/queue", f.Cursor),
		Page:    newPageView("/console/approvals", f, len(list.Approvals), list.Paging)}, true
}

func (c *Console) handleQueue(w http.ResponseWriter, r *http.Request, v *visit) {
	if q, ok := c.queue(w, r, v); ok {
		c.renderPage(w, r, v, http.StatusOK, "approvals.html", "Approval queue", q)
	}
}

// handleQueueFragment is the queue alone, which the page fetches to stay
// live without a reload.
func (c *Console) handleQueueFragment(w http.ResponseWriter, r *http.Request, v *visit) {
	if q, ok := c.queue(w, r, v); ok {
		c.renderFragment(w, r, "approvals.html", "queue", view{Op: v.op, CSRF: v.csrf, Data: q})
	}
}

func (c *Console) handleApprovalLookup(w http.ResponseWriter, r *http.Request, v *visit) {
	id := r.URL.Query().Get("id")
	if id == "" {
		c.renderError(w, r, http.StatusUnprocessableEntity, "Enter an approval request ID to look up.")
		return
	}
	http.Redirect(w, r, approvalPath(id), http.StatusSeeOther)
}

// approvalView is one request with what an approver needs to decide it.
type approvalView struct {
	apitype.Approval
	// Calls are the session's latest calls other than this one, newest
	// first, as they stand now.
	Calls []apitype.SessionCall
	// Frozen are the calls the request recorded when it opened, for a
	// request without a readable session.
	Frozen []frozenCall
	// CanDecide says whether the operator holds the approver role.
	CanDecide bool
	// RejectReason keeps what was typed when a rejection was refused.
	RejectReason string
}

type frozenCall struct {
	Tool    string `json:"tool"`
	State   string `json:"state"`
	Summary string `json:"summary"`
	Wording string `json:"wording"`
}

func (c *Console) approvalView(r *http.Request, v *visit, id string) (approvalView, error) {
	a, err := v.api.Approval(r.Context(), id)
	if err != nil {
		return approvalView{}, err
	}
	out := approvalView{Approval: a, CanDecide: a.ApproverRole == "" || v.op.HasRole(a.ApproverRole)}
	if a.SessionID != "" {
		if sess, err := v.api.Session(r.Context(), a.SessionID); err == nil {
			for i := len(sess.Calls) - 1; i >= 0 && len(out.Calls) < lastCalls; i-- {
				if sess.Calls[i].InvocationID != a.InvocationID {
					out.Calls = append(out.Calls, sess.Calls[i])
				}
			}
			return out, nil
		}
	}
	_ = json.Unmarshal(a.Context, &out.Frozen)
	return out, nil
}

func (c *Console) handleApproval(w http.ResponseWriter, r *http.Request, v *visit) {
	c.showApproval(w, r, v, http.StatusOK, "")
}

// showApproval renders a request, with problem saying why the last
// action on it was refused.
func (c *Console) showApproval(w http.ResponseWriter, r *http.Request, v *visit, status int, problem string) {
	a, err := c.approvalView(r, v, r.PathValue("id"))
	if err != nil {
		c.apiProblem(w, r, err)
		return
	}
	a.RejectReason = r.PostFormValue("reason")
	c.renderView(w, r, status, "approval.html", view{Title: "Approval " + a.Tool, Op: v.op, CSRF: v.csrf, Notice: notice(r), Problem: problem, Data: a})
}

func (c *Console) handleApprove(w http.ResponseWriter, r *http.Request, v *visit) {
	id := r.PathValue("id")
	if _, err := v.api.Approve(r.Context(), id, r.PostFormValue("reason")); err != nil {
		c.refused(w, r, v, err)
		return
	}
	http.Redirect(w, r, approvalPath(id)+"?done=approved", http.StatusSeeOther)
}

func (c *Console) handleReject(w http.ResponseWriter, r *http.Request, v *visit) {
	id, reason := r.PathValue("id"), r.PostFormValue("reason")
	if reason == "" {
		c.showApproval(w, r, v, http.StatusUnprocessableEntity, "A rejection needs a reason: the agent relays it and the audit keeps it. Nothing was decided.")
		return
	}
	if _, err := v.api.Reject(r.Context(), id, reason); err != nil {
		c.refused(w, r, v, err)
		return
	}
	http.Redirect(w, r, approvalPath(id)+"?done=rejected", http.StatusSeeOther)
}

// refused shows the request again with the API's reason for refusing the
// decision.
func (c *Console) refused(w http.ResponseWriter, r *http.Request, v *visit, err error) {
	status, msg := apiError(err)
	c.showApproval(w, r, v, status, msg+" Nothing was decided.")
}

// apiProblem answers a page the API could not serve with its reason.
func (c *Console) apiProblem(w http.ResponseWriter, r *http.Request, err error) {
	status, msg := apiError(err)
	c.renderError(w, r, status, msg)
}

// apiError turns an API refusal into a status and the observation's words;
// anything else is the API not answering.
func apiError(err error) (int, string) {
	var refusal *apiclient.Error
	if errors.As(err, &refusal) {
		return cmp.Or(refusal.StatusCode, http.StatusBadGateway), refusalWords(refusal.Observation)
	}
	return http.StatusBadGateway, "maestro could not answer: " + err.Error()
}

// refusalWords is the observation's summary and, for a refusal under a
// rule (an identifier outside maestro's rule), its root cause, which names
// the rule: the summary alone names only the field.
func refusalWords(obs mt.Observation) string {
	var rule struct {
		Rule string `json:"rule"`
	}
	if obs.NextActions == nil || obs.NextActions.RootCause == "" ||
		json.Unmarshal(obs.Payload, &rule) != nil || rule.Rule == "" {
		return obs.Summary
	}
	return obs.Summary + ". " + obs.NextActions.RootCause + "."
}
