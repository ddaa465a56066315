package server_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/ledger"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

func TestConsoleShowsAmountsInTheCatalogsCurrency(t *testing.T) {
	t.Parallel()
	e := setup(t)
	pending := e.requestRefund("refund")
	page := "/console/approvals/" + pending.ApprovalID
	o := e.signIn(tools.DemoOpsKey)

	_, body := o.get("/console/approvals")
	require.Contains(t, textOf(body), "amount_cents $25.00 (raw 2500)", "the queue shows the amount and what was sent")
	_, body = o.get(page)
	require.Contains(t, textOf(body), "amount_cents $25.00 (raw 2500)")
	require.Contains(t, textOf(body), "tenant_id t_100", "other arguments are shown as they were sent")
	_, body = o.get(page + "/modify")
	require.Contains(t, textOf(body), "An amount of USD in its minor unit (cents for USD). 2500 is $25.00.")

	status, body := o.postForm(page+"/modify", page+"/modify", url.Values{
		"arg.tenant_id": {"t_100"}, "arg.amount_cents": {"125000"}, "arg.reason": {"Duplicate payment"}})
	require.Equal(t, http.StatusUnprocessableEntity, status, "over the schema's maximum")
	status, body = o.postForm(page+"/modify", page+"/modify", url.Values{
		"arg.tenant_id": {"t_100"}, "arg.amount_cents": {"12500"}, "arg.reason": {"Duplicate payment"}})
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, textOf(body), "amount_cents changed $25.00 (raw 2500) $125.00 (raw 12500)")
}

func TestConsoleShowsRawArgumentsWithoutAMoneyDeclaration(t *testing.T) {
	t.Parallel()
	const declared = "    money_fields:\n      amount_cents: USD\n"
	require.Contains(t, string(tools.DemoCatalogYAML), declared)
	e := setup(t, func(o *options) {
		o.catalog = []byte(strings.Replace(string(tools.DemoCatalogYAML), declared, "", 1))
	})
	pending := e.requestRefund("refund")
	o := e.signIn(tools.DemoOpsKey)
	_, body := o.get("/console/approvals/" + pending.ApprovalID)
	require.Contains(t, textOf(body), "amount_cents 2500 reason")
	require.NotContains(t, textOf(body), "$25.00", "no currency is guessed")
}

func TestConsoleDecidedRequestShowsItsOutcome(t *testing.T) {
	t.Parallel()
	e := setup(t)
	pending := e.requestRefund("refund")
	page := "/console/approvals/" + pending.ApprovalID
	o := e.signIn(tools.DemoOpsKey)
	_, body := o.get(page)
	require.NotContains(t, body, `id="outcome"`, "a pending request has no outcome yet")

	status, _ := o.postForm(page, page+"/approve", url.Values{})
	require.Equal(t, http.StatusOK, status)
	done, err := e.agent.Wait(e.ctx, pending.InvocationID)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, done.State)
	receipt := done.Observation.Receipt
	require.NotNil(t, receipt)

	a, err := e.ops.Approval(e.ctx, pending.ApprovalID)
	require.NoError(t, err)
	require.NotNil(t, a.Outcome)
	require.Equal(t, string(mt.InvocationSucceeded), a.Outcome.State)
	require.Equal(t, pending.InvocationID, a.Outcome.InvocationID)
	require.Equal(t, receipt.ID, a.Outcome.Receipt.ID)
	require.Equal(t, done.Observation.Wording, a.Outcome.Wording)

	_, body = o.get(page)
	outcome := textOf(body)
	require.Contains(t, outcome, "Outcome The call: succeeded · invocation "+pending.InvocationID)
	require.Contains(t, outcome, "The agent heard: "+done.Observation.Wording)
	require.Contains(t, outcome, "Receipt from "+receipt.Provider+" id "+receipt.ID)
	require.Contains(t, body, `href="/console/sessions/`+url.PathEscape(e.session)+`#call-`+pending.InvocationID+`"`)

	// A rejected request's outcome says nothing took effect.
	other := e.requestRefund("refund-2")
	_, err = e.ops.Reject(e.ctx, other.ApprovalID, "not owed")
	require.NoError(t, err)
	_, err = e.agent.Wait(e.ctx, other.InvocationID)
	require.NoError(t, err)
	_, body = o.get("/console/approvals/" + other.ApprovalID)
	require.Contains(t, textOf(body), "The call: rejected")
	require.Contains(t, textOf(body), "No receipt: nothing took effect at a provider.")
}

func TestConsoleSessionShowsWordingAndUndoAsWhatItIs(t *testing.T) {
	t.Parallel()
	e := setup(t)
	receiptID := e.approvedRefund("refund")
	sess, err := e.ops.Session(e.ctx, e.session)
	require.NoError(t, err)
	refund := sess.Calls[len(sess.Calls)-1]
	require.NotEmpty(t, refund.Wording)
	require.NotEqual(t, refund.Summary, refund.Wording)
	require.Contains(t, refund.Wording, receiptID, "the wording is rendered from the receipt")

	o := e.signIn(tools.DemoOpsKey)
	page := "/console/sessions/" + e.session
	_, body := o.get(page)
	require.Contains(t, textOf(body), "The agent heard: "+refund.Wording)
	require.Contains(t, textOf(body), "Summary: "+refund.Summary)
	undo := undoSection(t, body)
	require.Contains(t, undo, "undo available: cancel_refund")
	require.NotContains(t, undo, "pending", "a refund that stands is not being cancelled")

	// A rollback reaches the refund's undo, which waits for a manager.
	res, err := e.agent.Rollback(e.ctx, e.session, "caller changed their mind")
	require.NoError(t, err)
	require.Len(t, res.Steps, 1)
	_, body = o.get(page)
	require.Contains(t, undoSection(t, body), "undo under way: cancel_refund")

	_, err = e.ops.Approve(e.ctx, e.pendingCompensation("cancel_refund").ID, "tenant asked to keep the money in the account")
	require.NoError(t, err)
	require.Eventually(t, func() bool { return e.undoStatus(res.Steps[0].UndoID) == string(ledger.UndoCompensated) },
		30*time.Second, 50*time.Millisecond)
	_, body = o.get(page)
	require.Contains(t, undoSection(t, body), "undone by cancel_refund")
}

// undoSection is the text of a session page's undo stack.
func undoSection(t *testing.T, page string) string {
	t.Helper()
	_, rest, ok := strings.Cut(page, `id="undo"`)
	require.True(t, ok)
	section, _, _ := strings.Cut(rest, "</section>")
	return textOf(section)
}
