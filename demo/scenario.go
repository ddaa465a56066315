package demo

import (
	"errors"
	"fmt"
	"strings"

	"github.com/maestro-run/maestro/apiclient"
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
	resp, err := s.invoke("lookup_tenant", "lookup", `{"tenant_id":"t_100"}`, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(s.out, "   payload: %s\n", resp.Observation.Payload)
	return isState(resp, mt.InvocationSucceeded)
}

func (s *scenario) textCaller() error {
	s.step("Real-sync: text the caller's own number (a catalog rule pre-approves it)")
	resp, err := s.invoke("send_sms", "sms-confirm", `{"to":"`+callerNumber+`","body":"We have your report and will follow up today."}`,
		map[string]string{"caller_number": callerNumber})
	if err != nil {
		return err
	}
	if err := isState(resp, mt.InvocationSucceeded); err != nil {
		return err
	}
	return s.confirmSMS(resp.Observation.Receipt.Fields["message_sid"])
}

func (s *scenario) escalate() error {
	s.step("Real-sync: page the on-call manager by SMS and email (one receipt from each provider)")
	resp, err := s.invoke("escalate_to_human", "escalate",
		`{"reason":"Water is coming through the kitchen ceiling.","urgency":"emergency","callback_number":"`+callerNumber+`"}`, nil)
	if err != nil {
		return err
	}
	if err := isState(resp, mt.InvocationSucceeded); err != nil {
		return err
	}
	r := resp.Observation.Receipt
	if err := s.confirmSMS(r.Fields["message_sid"]); err != nil {
		return err
	}
	return s.confirmEmail(r.Fields["message_id"])
}

func (s *scenario) createWorkOrder() error {
	s.step("Compensable write: open a work order (its undo entry is stored before the call)")
	resp, err := s.invoke("create_work_order", "work-order",
		`{"tenant_id":"t_100","category":"plumbing","description":"Water through the kitchen ceiling","priority":"emergency"}`, nil)
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
		`{"priority":"emergency","description":"Water through the kitchen ceiling","category":"plumbing","tenant_id":"t_100"}`, nil)
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
	resp, err := s.invoke("take_message", "message", `{"message":"Please call me back about my lease renewal.","callback_number":"`+callerNumber+`"}`, nil)
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
	s.step("Money and irreversible calls stop at the approval gate")
	refunds := s.standins.Sandbox.CountRefunds()
	for _, c := range []struct{ tool, key, args string }{
		{"issue_refund", "refund", `{"tenant_id":"t_100","amount_cents":12500,"reason":"Duplicate rent payment"}`},
		{"delete_tenant_account", "delete", `{"tenant_id":"t_101"}`},
	} {
		resp, err := s.invoke(c.tool, c.key, c.args, nil)
		if err != nil {
			return err
		}
		if err := expect(resp.Pending && resp.ApprovalID != "", "%s was not held for approval", c.tool); err != nil {
			return err
		}
		s.confirm("approval %s is pending; nothing has run", resp.ApprovalID)
	}
	tenant, _ := s.standins.Sandbox.Tenant("t_101")
	return expect(s.standins.Sandbox.CountRefunds() == refunds && !tenant.Deleted, "a gated call ran without approval")
}

func (s *scenario) refusals() error {
	s.step("Refusals run nothing and say why")
	for _, c := range []struct{ tool, key, args string }{
		{"wire_money_abroad", "unknown", `{}`},
		{"send_sms", "bad-args", `{"to":"call me maybe","body":"hi"}`},
		{"cancel_refund", "not-allowed", `{"refund_id":"re_1"}`},
	} {
		_, err := s.invoke(c.tool, c.key, c.args, nil)
		var ref *apiclient.Error
		if !errors.As(err, &ref) {
			return fmt.Errorf("demo expectation failed: %s was not refused (%v)", c.tool, err)
		}
		fmt.Fprintf(s.out, "   refused (HTTP %d, %s): %s\n   next: %s\n", ref.StatusCode, ref.Observation.Code,
			ref.Observation.Summary, strings.TrimSpace(ref.Observation.NextActions.Remediation))
	}
	return nil
}
