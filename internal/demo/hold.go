package demo

import (
	"fmt"
	"time"

	"github.com/maestro-run/maestro/apiclient"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// holdPoll is how often a held demo looks for the person's decision.
const holdPoll = time.Second

// hold opens a refund in a new call and leaves it for a person to decide
// in the console; it reports the outcome, read back from the back office,
// and serves on until ctx ends.
func (s *scenario) hold(baseURL string, held func(string, mt.InvocationState)) error {
	s.session = "demo-call-held"
	s.step("Held for you: a refund waits in the console for a manager's decision")
	if _, err := s.invoke("lookup_tenant", "held-lookup", `{"tenant_id":"t_100"}`); err != nil {
		return err
	}
	refund, err := s.invoke("issue_refund", "held-refund", `{"tenant_id":"t_100","amount_cents":4200,"reason":"Overcharged late fee"}`)
	if err != nil {
		return err
	}
	if err := expect(refund.Pending && refund.ApprovalID != "", "the held refund was not gated"); err != nil {
		return err
	}
	page := baseURL + "/console/approvals/" + refund.ApprovalID
	fmt.Fprintf(s.out, "\n   Open %s\n", page)
	fmt.Fprintf(s.out, "   sign in with the operator key %q, then approve, modify or reject it.\n", tools.DemoOpsKey)
	fmt.Fprintln(s.out, "   Press Ctrl-C to stop maestro.")
	if held != nil {
		held(page, "")
	}
	done, err := s.awaitDecision(refund)
	if s.ctx.Err() != nil {
		fmt.Fprintln(s.out, "\nStopped before a decision: the request stays pending in the ledger.")
		return nil
	}
	if err != nil {
		return err
	}
	s.printObservation(done)
	if done.State == mt.InvocationSucceeded && done.Observation.Receipt != nil {
		if err := s.confirmRefund(done.Observation.Receipt.ID); err != nil {
			return err
		}
	}
	if held != nil {
		held(page, done.State)
	}
	fmt.Fprintln(s.out, "\nmaestro keeps serving the console; press Ctrl-C to stop.")
	<-s.ctx.Done()
	return nil
}

// awaitDecision polls the held call until the person's decision has run,
// or ctx ends.
func (s *scenario) awaitDecision(refund apiclient.Response) (apiclient.Response, error) {
	t := time.NewTicker(holdPoll)
	defer t.Stop()
	for {
		resp, err := s.agent.Invocation(s.ctx, refund.InvocationID)
		if err != nil {
			return resp, err
		}
		if !resp.Pending {
			return resp, nil
		}
		select {
		case <-s.ctx.Done():
			return resp, s.ctx.Err()
		case <-t.C:
		}
	}
}
