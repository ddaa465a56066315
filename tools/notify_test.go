package tools_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/maestro-run/maestro/tools"
)

// notifyDoc is the minimal catalog with a second operator, channels on
// both operators and the manager role, and an escalation.
func notifyDoc(t *testing.T) catalogDoc {
	t.Helper()
	d := minimalDoc(t)
	ops := d["operators"].([]any)
	ops[0].(map[string]any)["notify"] = []any{
		map[string]any{"channel": "sms", "to": "+15005550006"},
		map[string]any{"channel": "email", "to": "boss@example.com"},
	}
	d["operators"] = append(ops, map[string]any{
		"id":             "lead",
		"api_key_sha256": "1111111111111111111111111111111111111111111111111111111111111111",
		"roles":          []any{"ops"},
		"notify":         []any{map[string]any{"channel": "sms", "to": "+15005550007"}},
	})
	d["roles"] = []any{map[string]any{
		"name":           "manager",
		"notify":         []any{map[string]any{"channel": "webhook", "to": "https://hooks.example.com/T1", "secret_env": "SLACK_SIGNING"}},
		"escalate_after": "5m",
		"escalate_to":    map[string]any{"operators": []any{"lead"}},
	}}
	d.sub("refund", "approval")["notify_fields"] = []any{"cents"}
	return d
}

func loadNotifyDoc(t *testing.T, d catalogDoc) (*tools.Catalog, error) {
	t.Helper()
	data, err := yaml.Marshal(map[string]any(d))
	require.NoError(t, err)
	return tools.Load(data)
}

func TestNotificationChannelsLoad(t *testing.T) {
	t.Parallel()
	c, err := loadNotifyDoc(t, notifyDoc(t))
	require.NoError(t, err)

	var opened []string
	for _, r := range c.Recipients("manager", tools.StageOpened) {
		opened = append(opened, r.Key()+" "+r.Channel.To)
	}
	require.Equal(t, []string{
		"operator:boss:sms:0 +15005550006",
		"operator:boss:email:0 boss@example.com",
		"role:manager:webhook:0 https://hooks.example.com/T1",
	}, opened)
	esc := c.Recipients("manager", tools.StageEscalated)
	require.Len(t, esc, 1)
	require.Equal(t, "operator:lead:sms:0", esc[0].Key())
	role, ok := c.Role("manager")
	require.True(t, ok)
	require.Equal(t, 5*time.Minute, role.EscalateAfter)
	require.True(t, c.Notifies("manager"))
	require.False(t, c.Notifies("nobody"))
	require.Equal(t, []string{"SLACK_SIGNING"}, c.WebhookSecrets())
	refund, _ := c.Tool("refund")
	require.Equal(t, []string{"cents"}, refund.Approval.NotifyFields)
}

func TestBadNotificationConfigIsRefusedNamingRowAndField(t *testing.T) {
	t.Parallel()
	op := func(d catalogDoc) map[string]any { return d["operators"].([]any)[0].(map[string]any) }
	role := func(d catalogDoc) map[string]any { return d["roles"].([]any)[0].(map[string]any) }
	cases := []struct {
		name   string
		mutate func(d catalogDoc)
		row    string
		field  string
		says   string
	}{
		{"channel without address", func(d catalogDoc) {
			op(d)["notify"] = []any{map[string]any{"channel": "sms"}}
		}, `operators[0] "boss"`, "notify[0].to", "E.164"},
		{"unknown channel", func(d catalogDoc) {
			op(d)["notify"] = []any{map[string]any{"channel": "pager", "to": "x"}}
		}, `operators[0] "boss"`, "notify[0].channel", `unknown channel "pager"`},
		{"bad email", func(d catalogDoc) {
			op(d)["notify"] = []any{map[string]any{"channel": "email", "to": "boss at example"}}
		}, `operators[0] "boss"`, "notify[0].to", "email address"},
		{"webhook without secret", func(d catalogDoc) {
			delete(role(d)["notify"].([]any)[0].(map[string]any), "secret_env")
		}, `roles[0] "manager"`, "notify[0].secret_env", "required"},
		{"plain http webhook", func(d catalogDoc) {
			role(d)["notify"].([]any)[0].(map[string]any)["to"] = "http://hooks.example.com/x"
		}, `roles[0] "manager"`, "notify[0].to", "loopback"},
		{"secret on sms", func(d catalogDoc) {
			op(d)["notify"] = []any{map[string]any{"channel": "sms", "to": "+15005550006", "secret_env": "X"}}
		}, `operators[0] "boss"`, "notify[0].secret_env", "only a webhook"},
		{"unknown escalation operator", func(d catalogDoc) {
			role(d)["escalate_to"] = map[string]any{"operators": []any{"ghost"}}
		}, `roles[0] "manager"`, "escalate_to.operators[0]", `unknown operator "ghost"`},
		{"escalation operator without channels", func(d catalogDoc) {
			delete(d["operators"].([]any)[1].(map[string]any), "notify")
		}, `roles[0] "manager"`, "escalate_to.operators[0]", "no notify channels"},
		{"escalation without time", func(d catalogDoc) {
			delete(role(d), "escalate_after")
		}, `roles[0] "manager"`, "escalate_after", "required with escalate_to"},
		{"time without escalation", func(d catalogDoc) {
			delete(role(d), "escalate_to")
		}, `roles[0] "manager"`, "escalate_to", "required with escalate_after"},
		{"bad escalation time", func(d catalogDoc) {
			role(d)["escalate_after"] = "soon"
		}, `roles[0] "manager"`, "escalate_after", "positive duration"},
		{"unknown role", func(d catalogDoc) {
			role(d)["name"] = "janitor"
		}, `roles[0] "janitor"`, "name", "no operator holds"},
		{"notify field not an argument", func(d catalogDoc) {
			d.sub("refund", "approval")["notify_fields"] = []any{"amount"}
		}, `tools[4] "refund"`, "approval.notify_fields[0]", `"amount" is not an argument`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := notifyDoc(t)
			tc.mutate(d)
			_, err := loadNotifyDoc(t, d)
			require.Error(t, err)
			for _, p := range fieldErrors(err) {
				if p.Row == tc.row && p.Field == tc.field {
					require.Contains(t, p.Problem, tc.says)
					return
				}
			}
			require.Failf(t, "refusal does not name the row and field", "want %s: %s, got:\n%v", tc.row, tc.field, err)
		})
	}
}
