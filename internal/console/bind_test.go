package console

import (
	"strings"
	"testing"
)

func TestBoundProblemNamesTheFieldAndTheRule(t *testing.T) {
	t.Parallel()
	const id = "x/../../approvals/apr_1/approve?"
	for _, tc := range []struct {
		name, target, action, want string
	}{
		{"matches", id, "facts", ""},
		{"no target", "", "facts", `"target_id" must repeat the ID`},
		{"another object", "apr_1", "facts", `"target_id" must repeat the ID`},
		{"an escaped twin", "x%2F..%2F..%2Fapprovals%2Fapr_1%2Fapprove%3F", "facts", `"target_id" must repeat the ID`},
		{"no action", id, "", `"target_action" must repeat the action`},
		{"another action", id, "approve", `"target_action" must repeat the action`},
	} {
		got := boundProblem(id, "facts", tc.target, tc.action)
		if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
			t.Errorf("%s: boundProblem = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestFormsRepeatWhatTheirAddressSays(t *testing.T) {
	t.Parallel()
	f := reconciliationForm("postcall:call-1:msg/held", "retry")
	if f.URL != "/console/reconciliations/postcall:call-1:msg%2Fheld/retry" || f.Target != "postcall:call-1:msg/held" || f.Action != "retry" {
		t.Errorf("reconciliationForm = %+v", f)
	}
	f = approvalForm("apr_1", "modify/confirm")
	if f.URL != "/console/approvals/apr_1/modify/confirm" || f.Action != "modify/confirm" {
		t.Errorf("approvalForm = %+v", f)
	}
}
