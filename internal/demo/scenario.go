package demo

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/apitype"
	mt "github.com/maestro-run/maestro/maestrotype"
)

const callerNumber = "+14155550100"

// play runs the call. Each step states what maestro claims and then checks
// the claim against the provider's own API.
func (s *scenario) play() error {
	for _, step := range []func() error{
		s.listTools,
		s.lookupTenant,
		s.textCaller,
		s.escalate,
		s.createWorkOrder,
		s.repeatWorkOrder,
		s.takeMessage,
		s.gatedCalls,
		s.refusals,
		s.rollbackCall,
		s.endCall,
	} {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

func (s *scenario) listTools() error {
	s.step("The agent asks which tools it may use (deny by default)")
	list, err := s.agent.Tools(s.ctx)
	if err != nil {
		return err
	}
	for _, t := range list.Tools {
		fmt.Fprintf(s.out, "   %-24s %-6s %-16s %-13s → %s\n", t.Name, t.Effect, t.Delivery, t.Reversibility, t.Route)
	}
	return expect(len(list.Tools) > 0, "no tools listed")
}

func (s *scenario) lookupTenant() error {
	s.step("Read: look up the caller's tenancy (reads never pause)")
	resp, err := s.invoke("lookup_tenant", "lookup", `{"tenant_id":"t_100"}`)
	if err != nil {
		return err
	}
	fmt.Fprintf(s.out, "   payload: %s\n", resp.Observation.Payload)
	return isState(resp, mt.InvocationSucceeded)
}

func (s *scenario) textCaller() error {
	s.step("Real-sync: text the number the caller is calling from (the agent's word alone approves nothing)")
	resp, err := s.invoke("send_sms", "sms-confirm", `{"to":"`+callerNumber+`","body":"We have your report and will follow up today."}`)
	if err != nil {
		return err
	}
	// The catalog rule would spare a human for the caller's own number, but
	// only on a fact a platform signed or an operator set: this number is
	// merely what the agent stated, so a manager decides.
	if err := expect(resp.Pending && resp.ApprovalID != "", "a text rested on a fact the agent declared and was not held"); err != nil {
		return err
	}
	req, err := s.ops.Approval(s.ctx, resp.ApprovalID)
	if err != nil {
		return err
	}
	for _, f := range req.Facts {
		fmt.Fprintf(s.out, "   session fact: %s = %s (%s)\n", f.Name, f.Value, f.Provenance)
	}
	s.confirm("approval %s waits for role %q: the rule does not rest on agent-declared facts", req.ID, req.ApproverRole)
	if _, err := s.ops.Approve(s.ctx, resp.ApprovalID, "the caller's number matches the call record"); err != nil {
		return err
	}
	done, err := s.agent.Wait(s.ctx, resp.InvocationID)
	if err != nil {
		return err
	}
	s.printObservation(done)
	if err := isState(done, mt.InvocationSucceeded); err != nil {
		return err
	}
	return s.confirmSMS(done.Observation.Receipt.Fields[mt.ReceiptMessageSID])
}

func (s *scenario) escalate() error {
	s.step("Real-sync: page the on-call manager by SMS and email (one receipt from each provider)")
	resp, err := s.invoke("escalate_to_human", "escalate",
		`{"reason":"Water is coming through the kitchen ceiling.","urgency":"emergency","callback_number":"`+callerNumber+`"}`)
	if err != nil {
		return err
	}
	if err := isState(resp, mt.InvocationSucceeded); err != nil {
		return err
	}
	r := resp.Observation.Receipt
	if err := s.confirmSMS(r.Fields[mt.ReceiptMessageSID]); err != nil {
		return err
	}
	return s.confirmEmail(r.Fields[mt.ReceiptMessageID])
}

func (s *scenario) createWorkOrder() error {
	s.step("Compensable write: open a work order (its undo entry is stored before the call)")
	resp, err := s.invoke("create_work_order", "work-order",
		`{"tenant_id":"t_100","category":"plumbing","description":"Water through the kitchen ceiling","priority":"emergency"}`)
	if err != nil {
		return err
	}
	if err := isState(resp, mt.InvocationSucceeded); err != nil {
		return err
	}
	return s.confirmWorkOrder(resp.Observation.Receipt.ID)
}

func (s *scenario) repeatWorkOrder() error {
	s.step("Exactly once: the agent retries the same call with the same operation key")
	before := s.standins.Sandbox.CountWorkOrders()
	resp, err := s.invoke("create_work_order", "work-order",
		`{"priority":"emergency","description":"Water through the kitchen ceiling","category":"plumbing","tenant_id":"t_100"}`)
	if err != nil {
		return err
	}
	after := s.standins.Sandbox.CountWorkOrders()
	s.confirm("the sandbox holds %d work order(s) before and %d after the retry", before, after)
	return expect(after == before && resp.State == mt.InvocationSucceeded, "a retry created a second work order")
}

func (s *scenario) takeMessage() error {
	s.step("Record-deferred: take a message for the office (delivered after the call, so no receipt yet)")
	sent := s.standins.Twilio.CountMessages() + s.standins.SES.CountEmails()
	resp, err := s.invoke("take_message", "message", `{"message":"Please call me back about my lease renewal.","callback_number":"`+callerNumber+`"}`)
	if err != nil {
		return err
	}
	if err := isState(resp, mt.InvocationRecorded); err != nil {
		return err
	}
	now := s.standins.Twilio.CountMessages() + s.standins.SES.CountEmails()
	s.confirm("nothing was delivered during the call (%d messages before, %d after)", sent, now)
	return expect(sent == now && resp.Observation.Receipt == nil, "a deferred tool delivered in-call")
}

func (s *scenario) gatedCalls() error {
	s.step("Money: a refund stops at the approval gate with its arguments frozen")
	refunds := s.standins.Sandbox.CountRefunds()
	refund, err := s.invoke("issue_refund", "refund", `{"tenant_id":"t_100","amount_cents":12500,"reason":"Duplicate rent payment"}`)
	if err != nil {
		return err
	}
	if err := expect(refund.Pending && refund.ApprovalID != "" && s.standins.Sandbox.CountRefunds() == refunds,
		"the refund was not held for approval"); err != nil {
		return err
	}
	req, err := s.ops.Approval(s.ctx, refund.ApprovalID)
	if err != nil {
		return err
	}
	s.confirm("approval %s for role %q, args hash %s…; nothing has run", req.ID, req.ApproverRole, req.ArgsHash[:12])

	s.step("The manager approves; the refund runs once with a single-use token bound to that hash")
	if _, err := s.ops.Approve(s.ctx, refund.ApprovalID, "duplicate payment confirmed"); err != nil {
		return err
	}
	done, err := s.agent.Wait(s.ctx, refund.InvocationID)
	if err != nil {
		return err
	}
	s.printObservation(done)
	if err := isState(done, mt.InvocationSucceeded); err != nil {
		return err
	}
	if err := s.confirmRefund(done.Observation.Receipt.ID); err != nil {
		return err
	}
	req, err = s.ops.Approval(s.ctx, refund.ApprovalID)
	if err != nil {
		return err
	}
	for _, e := range req.Events {
		fmt.Fprintf(s.out, "   audit log: %-14s by %s\n", e.Kind, e.Actor)
	}

	s.step("Irreversible: deleting an account waits for ops, who reject it")
	del, err := s.invoke("delete_tenant_account", "delete", `{"tenant_id":"t_101"}`)
	if err != nil {
		return err
	}
	if _, err := s.ops.Reject(s.ctx, del.ApprovalID, "tenant must ask in writing"); err != nil {
		return err
	}
	done, err = s.agent.Wait(s.ctx, del.InvocationID)
	if err != nil {
		return err
	}
	s.printObservation(done)
	tenant, _ := s.standins.Sandbox.Tenant("t_101")
	s.confirm("back-office API: tenant t_101 still exists (deleted=%v)", tenant.Deleted)
	if err := expect(done.State == mt.InvocationRejected && !tenant.Deleted, "a rejected call ran"); err != nil {
		return err
	}
	if err := s.resolveRejection(); err != nil {
		return err
	}

	s.step("Audit scan: every money effect has a human approval and a spent token")
	rep, err := s.ops.Audit(s.ctx)
	if err != nil {
		return err
	}
	s.confirm("%d divergence(s)", len(rep.Findings))
	return expect(rep.Clean, "audit found divergences: %+v", rep.Findings)
}

// resolveRejection shows the session a rejection halted, and an operator
// resolving it so the call can go on.
func (s *scenario) resolveRejection() error {
	sess, err := s.agent.Session(s.ctx, s.session)
	if err != nil {
		return err
	}
	s.confirm("session %s is %s: %s", sess.SessionID, sess.State, sess.HaltReason)
	if err := expect(sess.State == mt.SessionHalted, "a rejection left the session %s", sess.State); err != nil {
		return err
	}
	s.step("An operator resolves the halted session; the agent may act again")
	sess, err = s.ops.Resolve(s.ctx, s.session, "told the caller the account stays open")
	if err != nil {
		return err
	}
	s.confirm("session %s is %s (resolved by %s)", sess.SessionID, sess.State, sess.ResolvedBy)
	return expect(sess.State == mt.SessionActive, "resolving left the session %s", sess.State)
}

func (s *scenario) refusals() error {
	s.step("Refusals run nothing and say why")
	for _, c := range []struct{ tool, key, args string }{
		{"wire_money_abroad", "unknown", `{}`},
		{"send_sms", "bad-args", `{"to":"call me maybe","body":"hi"}`},
		{"cancel_refund", "not-allowed", `{"refund_id":"re_1"}`},
	} {
		_, err := s.invoke(c.tool, c.key, c.args)
		var ref *apiclient.Error
		if !errors.As(err, &ref) {
			return fmt.Errorf("demo expectation failed: %s was not refused (%v)", c.tool, err)
		}
		fmt.Fprintf(s.out, "   refused (HTTP %d, %s): %s\n   next: %s\n", ref.StatusCode, ref.Observation.Code,
			ref.Observation.Summary, strings.TrimSpace(ref.Observation.NextActions.Remediation))
	}
	return nil
}

// rollbackCall is a second call whose caller changes their mind: the work
// order it opened is cancelled at the sandbox by the saga.
func (s *scenario) rollbackCall() error {
	s.session = "demo-call-2"
	s.step("A second call opens two work orders and takes a message, then the caller changes their mind")
	var ids []string
	for _, k := range []string{"wo-kitchen", "wo-bath"} {
		resp, err := s.invoke("create_work_order", k, `{"tenant_id":"t_100","category":"plumbing","description":"`+k+`","priority":"routine"}`)
		if err != nil {
			return err
		}
		if err := isState(resp, mt.InvocationSucceeded); err != nil {
			return err
		}
		ids = append(ids, resp.Observation.Receipt.ID)
	}
	if _, err := s.invoke("take_message", "msg", `{"message":"Never mind the repairs, I'm moving out."}`); err != nil {
		return err
	}
	sess, err := s.agent.Session(s.ctx, s.session)
	if err != nil {
		return err
	}
	for _, u := range sess.UndoStack {
		fmt.Fprintf(s.out, "   undo stack #%d: %s for %s (%s)\n", u.Seq, u.Tool, u.OperationKey, u.Status)
	}

	s.step("Rollback: compensations run newest first, each keyed undo-{undo_id} at the provider")
	res, err := s.agent.Rollback(s.ctx, s.session, "caller changed their mind")
	if err != nil {
		return err
	}
	for i, st := range res.Steps {
		fmt.Fprintf(s.out, "   %d. %s %s → %s\n", i+1, st.Tool, st.OperationKey, st.Status)
	}
	for _, id := range ids {
		wo, _ := s.standins.Sandbox.WorkOrder(id)
		s.confirm("back-office API: work order %s %s (cancelled %s)", id, statusPhrase(wo.Status), times(wo.CancelCount))
		if err := expect(wo.Status == "cancelled" && wo.CancelCount == 1, "work order %s was not cancelled exactly once", id); err != nil {
			return err
		}
	}
	return expect(len(res.Steps) == 2 && !res.Halted && res.Steps[0].OperationKey == s.session+":wo-bath", "rollback did not run LIFO")
}

// endCall ends the second call with a transcript: the recorded message and
// what the caller asked for are delivered after the call, with receipts.
func (s *scenario) endCall() error {
	s.step("Call ended: the post-call workflow delivers deferred work (gather → judge → dispatch → persist)")
	transcript := mt.Transcript{Turns: []mt.Turn{
		{Speaker: "agent", Text: "Is there anything else?", At: time.Now().UTC()},
		{Speaker: "caller", Text: "Yes, the radiator in the hallway is broken.", At: time.Now().UTC()},
		{Speaker: "caller", Text: "Please call me back this afternoon.", At: time.Now().UTC()},
	}}
	for _, t := range transcript.Turns {
		fmt.Fprintf(s.out, "   transcript %s: %q\n", t.Speaker, t.Text)
	}
	end, err := s.agent.End(s.ctx, s.session, apitype.EndRequest{Transcript: &transcript})
	if err != nil {
		return err
	}
	sess, err := s.waitPostCall()
	if err != nil {
		return err
	}
	for _, it := range sess.PostCall {
		rid := ""
		if it.Receipt != nil {
			rid = it.Receipt.Provider + " " + it.Receipt.ID
		}
		fmt.Fprintf(s.out, "   %-24s → %-17s %-9s %s\n", it.Source, it.Tool, it.Status, rid)
		if err := expect(it.Status == "delivered" && it.Receipt != nil, "post-call item %s was not delivered", it.Key); err != nil {
			return err
		}
		if err := s.confirmReceipt(it.Receipt); err != nil {
			return err
		}
	}
	again, err := s.agent.End(s.ctx, s.session, apitype.EndRequest{Transcript: &transcript})
	if err != nil {
		return err
	}
	s.confirm("a repeated call-ended was accepted once (first=%v, repeat=%v); nothing was delivered twice", end.Ended, again.Ended)
	return expect(end.Ended && !again.Ended, "call-ended was not idempotent")
}

// waitPostCall polls the session until its post-call workflow completed.
func (s *scenario) waitPostCall() (apitype.Session, error) {
	ctx, cancel := context.WithTimeout(s.ctx, time.Minute)
	defer cancel()
	for {
		sess, err := s.agent.Session(ctx, s.session)
		if err != nil {
			return sess, err
		}
		switch sess.PostCallStatus {
		case "completed":
			return sess, nil
		case "failed":
			return sess, errors.New("demo expectation failed: the post-call workflow failed")
		}
		select {
		case <-ctx.Done():
			return sess, fmt.Errorf("post-call delivery did not finish: %w", ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
