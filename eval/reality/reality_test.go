package reality_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/eval/reality"
	"github.com/maestro-run/maestro/internal/standin"
	"github.com/maestro-run/maestro/internal/standin/fault"
)

// realSyncTools are the demo catalog's real-sync tools, each with a
// fixture in demo.yaml.
const realSyncTools = 10

func startStandins(t *testing.T) *standin.Set {
	t.Helper()
	set, err := standin.Start()
	require.NoError(t, err)
	t.Cleanup(func() { _ = set.Close() })
	return set
}

// demoConfig loads the shipped demo config against set, with overrides.
func demoConfig(t *testing.T, set *standin.Set, overrides ...reality.Var) reality.Config {
	t.Helper()
	vars := append(overrides, reality.StandinVars(set)...)
	cfg, err := reality.LoadConfig("demo.yaml", reality.Lookup(vars, nil))
	require.NoError(t, err)
	return cfg
}

func run(t *testing.T, cfg reality.Config) *reality.Report {
	t.Helper()
	rep, err := reality.Run(t.Context(), cfg)
	require.NoError(t, err)
	var table bytes.Buffer
	require.NoError(t, rep.WriteTable(&table))
	t.Log("\n" + table.String())
	return rep
}

func result(t *testing.T, rep *reality.Report, tool string) reality.Result {
	t.Helper()
	for _, r := range rep.Results {
		if r.Tool == tool {
			return r
		}
	}
	t.Fatalf("no result for %s", tool)
	return reality.Result{}
}

func TestDemoCatalogPassesAgainstTheStandins(t *testing.T) {
	t.Parallel()
	set := startStandins(t)

	rep := run(t, demoConfig(t, set))

	require.True(t, rep.OK())
	require.Equal(t, realSyncTools, rep.Passed)
	for _, r := range rep.Results {
		require.NotNil(t, r.Receipt, r.Tool)
		require.NotEmpty(t, r.ReadBacks, r.Tool)
		for _, rb := range r.ReadBacks {
			require.Empty(t, rb.Error, r.Tool)
			require.NotEmpty(t, rb.Status, r.Tool)
		}
	}
	// The page proves both legs, each at its own provider.
	page := result(t, rep, "escalate_to_human")
	require.Len(t, page.ReadBacks, 2)
	require.Equal(t, "twilio", page.ReadBacks[0].Provider)
	require.Equal(t, "ses", page.ReadBacks[1].Provider)
	// The compensation acted on what its tool created in the same run.
	created, cancelled := result(t, rep, "create_work_order"), result(t, rep, "cancel_work_order")
	require.Equal(t, created.Receipt.ID, cancelled.Receipt.ID)
	require.Equal(t, "cancelled", cancelled.ReadBacks[0].Status)

	out, err := json.Marshal(rep)
	require.NoError(t, err)
	require.Contains(t, string(out), `"verdict":"PASS"`)
	require.NotContains(t, string(out), set.Twilio.AuthToken(), "credentials stay out of the report")
}

// The email really is sent, but its store cannot be read: the tool fails,
// and nothing stands in for the provider's answer.
func TestUnreadableProviderFailsWithoutFallback(t *testing.T) {
	t.Parallel()
	set := startStandins(t)
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "store unavailable", http.StatusInternalServerError)
	}))
	t.Cleanup(broken.Close)

	rep := run(t, demoConfig(t, set, reality.Var{Name: "SES_STORE_URL", Value: broken.URL}))

	require.False(t, rep.OK())
	for _, tool := range []string{"email_property_manager", "escalate_to_human", "deliver_message"} {
		r := result(t, rep, tool)
		require.Equal(t, reality.Fail, r.Verdict, tool)
		require.NotNil(t, r.Receipt, "%s: the connector did get a receipt", tool)
		require.Contains(t, r.Detail, "HTTP 500", tool)
	}
	require.Equal(t, 3, set.SES.CountEmails(), "the emails went out; only the proof is missing")
	require.Equal(t, reality.Pass, result(t, rep, "send_sms").Verdict, "other providers are unaffected")
	require.Equal(t, 3, rep.Failed)
}

func TestReadBackMustMatchWhatWasAsked(t *testing.T) {
	t.Parallel()
	set := startStandins(t)
	cfg := demoConfig(t, set)
	for i := range cfg.Fixtures {
		if cfg.Fixtures[i].Tool == "issue_refund" {
			cfg.Fixtures[i].Expect["amount_cents"] = 9999
		}
	}

	rep := run(t, cfg)

	refund := result(t, rep, "issue_refund")
	require.Equal(t, reality.Fail, refund.Verdict)
	require.Contains(t, refund.Detail, "amount_cents = 1500, want 9999")
	// Its compensation needs a receipt that passed, so it cannot run.
	cancel := result(t, rep, "cancel_refund")
	require.Equal(t, reality.Fail, cancel.Verdict)
	require.Contains(t, cancel.Detail, "issue_refund")
	require.Nil(t, cancel.Receipt, "nothing was sent for it")
}

func TestProviderRefusalFails(t *testing.T) {
	t.Parallel()
	set := startStandins(t)
	require.NoError(t, set.Sandbox.Faults().Add(fault.Rule{Action: fault.Fail, Status: http.StatusBadRequest, Path: "/v1/work_orders"}))

	rep := run(t, demoConfig(t, set))

	r := result(t, rep, "create_work_order")
	require.Equal(t, reality.Fail, r.Verdict)
	require.Contains(t, r.Detail, "the provider call failed")
	require.Equal(t, reality.Fail, result(t, rep, "cancel_work_order").Verdict)
}

func TestEveryRealSyncToolIsAccountedFor(t *testing.T) {
	t.Parallel()
	set := startStandins(t)
	cfg := demoConfig(t, set)
	cfg.Fixtures = []reality.Fixture{{Tool: "send_sms", Skip: "no test phone on this account"}}

	rep := run(t, cfg)

	require.Equal(t, reality.Skip, result(t, rep, "send_sms").Verdict)
	require.Equal(t, "no test phone on this account", result(t, rep, "send_sms").Detail)
	require.Equal(t, realSyncTools-1, rep.Failed, "a tool without a fixture fails")
	require.Contains(t, result(t, rep, "deliver_message").Detail, "no fixture")
	require.Zero(t, set.Twilio.CountMessages()+set.SES.CountEmails())
}

func TestBadFixtureStopsTheRunBeforeAnythingIsSent(t *testing.T) {
	t.Parallel()
	set := startStandins(t)
	for name, fx := range map[string]reality.Fixture{
		"unknown tool":     {Tool: "send_fax"},
		"not real-sync":    {Tool: "lookup_tenant"},
		"HTTP without GET": {Tool: "create_work_order", Args: map[string]any{}},
	} {
		cfg := demoConfig(t, set)
		cfg.Fixtures = append([]reality.Fixture{{Tool: "send_sms", Args: map[string]any{"to": "+14155550100", "body": "x"}}}, fx)
		_, err := reality.Run(t.Context(), cfg)
		require.Error(t, err, name)
		require.Contains(t, err.Error(), fx.Tool, name)
	}
	require.Zero(t, set.Twilio.CountMessages())
}

func TestConfigRefusesUnsetVariablesAndUnknownFields(t *testing.T) {
	t.Parallel()
	_, err := reality.LoadConfig("demo.yaml", reality.Lookup(nil, nil))
	require.ErrorContains(t, err, "TWILIO_AUTH_TOKEN")

	path := filepath.Join(t.TempDir(), "typo.yaml")
	require.NoError(t, os.WriteFile(path, []byte("fixtures:\n  - tool: send_sms\n    expects: {}\n"), 0o600))
	_, err = reality.LoadConfig(path, os.LookupEnv)
	require.ErrorContains(t, err, "expects")

	_, err = reality.ParseConfig([]byte("fixtures:\n  - tool: a\n  - tool: a\n"), os.LookupEnv)
	require.True(t, err != nil && strings.Contains(err.Error(), "has a fixture already"), "%v", err)
}
