package server_test

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/codec"
	"github.com/maestro-run/maestro/internal/codec/codectest"
	"github.com/maestro-run/maestro/internal/connectors"
	"github.com/maestro-run/maestro/internal/server"
	"github.com/maestro-run/maestro/tools"
)

const exampleCatalog = "../../docs/deploy/catalog.example.yaml"

// httpOnlyCatalog calls one HTTP service and nothing else.
const httpOnlyCatalog = `version: 1
agents:
  - id: agent
    api_key_sha256: ` + "0000000000000000000000000000000000000000000000000000000000000001" + `
    on_failure: none
    allow: [lookup_customer]
tools:
  - name: lookup_customer
    description: Call when you need a customer's details.
    owner: support
    effect: read
    delivery: readonly
    reversibility: none
    input_schema:
      type: object
      additionalProperties: false
      required: [customer_id]
      properties:
        customer_id: {type: string, pattern: "^[a-z0-9]{1,16}$"}
    connector:
      kind: http
      service: crm
      method: GET
      path: "/customers/{{pathescape .Args.customer_id}}"
    wording:
      success: "Here is customer {{.Args.customer_id}}."
      failure: "I couldn't look that customer up."
`

type required map[string][]string

func requiredOf(t *testing.T, cat *tools.Catalog) required {
	t.Helper()
	out := required{}
	for _, s := range server.RequiredProviderSettings(cat) {
		out[s.Env] = s.Tools
	}
	return out
}

// TestRequiredProviderSettingsFollowTheCatalog: Twilio's settings are
// required by the tools that text or page, SES's by those that email or
// page, and each HTTP service's URL by the tools that call it; nothing
// else.
func TestRequiredProviderSettingsFollowTheCatalog(t *testing.T) {
	t.Parallel()
	demo, err := tools.Load(tools.DemoCatalogYAML)
	require.NoError(t, err)
	texts := []string{"escalate_to_human", "request_callback", "send_sms"}
	emails := []string{"deliver_message", "email_property_manager", "escalate_to_human"}
	require.Equal(t, required{
		"TWILIO_ACCOUNT_SID": texts, "TWILIO_AUTH_TOKEN": texts, "TWILIO_FROM": texts,
		"SES_REGION": emails, "SES_FROM": emails,
		"MAESTRO_HTTP_SERVICE_SANDBOX_URL": {"cancel_refund", "cancel_work_order", "create_work_order", "delete_tenant_account", "issue_refund", "lookup_tenant"},
	}, requiredOf(t, demo))

	example, err := tools.LoadFile(exampleCatalog)
	require.NoError(t, err)
	require.Equal(t, required{
		"TWILIO_ACCOUNT_SID": {"text_customer"}, "TWILIO_AUTH_TOKEN": {"text_customer"}, "TWILIO_FROM": {"text_customer"},
		"SES_REGION": {"email_support"}, "SES_FROM": {"email_support"},
		"MAESTRO_HTTP_SERVICE_BACKOFFICE_URL": {"create_ticket", "lookup_customer"},
	}, requiredOf(t, example))

	httpOnly, err := tools.Load([]byte(httpOnlyCatalog))
	require.NoError(t, err)
	require.Equal(t, required{"MAESTRO_HTTP_SERVICE_CRM_URL": {"lookup_customer"}}, requiredOf(t, httpOnly))
}

// startProduction starts maestro outside dev mode with nothing listening
// for PostgreSQL or Temporal, and returns the step that failed.
func startProduction(t *testing.T, catalog []byte, p server.Providers) *server.StartError {
	t.Helper()
	_, err := server.Start(t.Context(), server.Config{
		HTTPAddr:          "127.0.0.1:0",
		DatabaseURL:       "postgres://postgres@" + freeAddr(t) + "/test?sslmode=disable",
		TemporalAddress:   freeAddr(t),
		CatalogPath:       filepathIn(t, "catalog.yaml", catalog),
		Providers:         p,
		Codec:             codec.Config{Keys: codectest.Env("providers")},
		DependencyTimeout: 50 * time.Millisecond,
		Logger:            slog.New(slog.DiscardHandler),
	})
	var se *server.StartError
	require.True(t, errors.As(err, &se), "want a StartError, got %v", err)
	return se
}

// TestStartRequiresOnlyTheProvidersTheCatalogUses: a catalog that never
// texts or emails starts without Twilio or SES settings, and one that
// does is refused with every missing variable and the tools that need it.
func TestStartRequiresOnlyTheProvidersTheCatalogUses(t *testing.T) {
	t.Parallel()
	crm := map[string]connectors.HTTPService{"crm": {BaseURL: "http://" + freeAddr(t)}}
	se := startProduction(t, []byte(httpOnlyCatalog), server.Providers{HTTP: crm})
	require.Equal(t, "opening the ledger", se.What, "the connectors were configured: %v", se)

	se = startProduction(t, []byte(httpOnlyCatalog), server.Providers{})
	require.Equal(t, "configuring the connectors", se.What)
	require.EqualError(t, se.Err, "MAESTRO_HTTP_SERVICE_CRM_URL is not set, and the catalog's tools lookup_customer need it")

	example, err := tools.ReplacingDemoKeys(tools.DemoCatalogYAML, "agent-key", "ops-key")
	require.NoError(t, err)
	se = startProduction(t, example, server.Providers{
		Twilio: connectors.TwilioConfig{AccountSID: "AC1", From: "+15550100"},
		SES:    connectors.SESConfig{From: "maestro@example.com"},
		HTTP:   map[string]connectors.HTTPService{"sandbox": {BaseURL: "http://" + freeAddr(t)}},
	})
	require.Equal(t, "configuring the connectors", se.What)
	require.EqualError(t, se.Err, "TWILIO_AUTH_TOKEN is not set, and the catalog's tools escalate_to_human, request_callback, send_sms need it\n"+
		"SES_REGION is not set, and the catalog's tools deliver_message, email_property_manager, escalate_to_human need it")
	require.Contains(t, se.Error(), "to fix: set the variables named above")
}

// TestStartRefusesDemoKeysOutsideDevMode: the demo keys are published, so
// a catalog holding their hashes is refused outside dev mode, naming who
// holds them and how to make keys.
func TestStartRefusesDemoKeysOutsideDevMode(t *testing.T) {
	t.Parallel()
	se := startProduction(t, tools.DemoCatalogYAML, server.Providers{})
	require.True(t, strings.HasPrefix(se.What, "checking the catalog "), se.What)
	require.EqualError(t, se.Err, `the demo keys published with maestro (demo-agent-key, demo-ops-key) authenticate agent "voice-agent" and operator "demo-manager"; they are accepted only in dev mode`)
	require.Contains(t, se.Fix, "`starter keys new`")
	require.Contains(t, se.Fix, "`starter keys hash`")

	// Reusing the agent's demo key for an operator is caught too.
	doc, err := tools.ReplacingDemoKeys(tools.DemoCatalogYAML, "agent-key", tools.DemoAgentKey)
	require.NoError(t, err)
	se = startProduction(t, doc, server.Providers{})
	require.ErrorContains(t, se.Err, `authenticate operator "demo-manager";`)
	require.NotContains(t, se.Err.Error(), "voice-agent")
}

// TestStartRefusesACatalogTheFenceRefuses: a start runs the fence a reload
// runs, so a catalog that starts is never refused on its first reload.
func TestStartRefusesACatalogTheFenceRefuses(t *testing.T) {
	t.Parallel()
	doc, err := tools.ReplacingDemoKeys(tools.DemoCatalogYAML, "agent-key", "ops-key")
	require.NoError(t, err)
	noNotice := strings.Replace(string(doc),
		"    safety_notice: >-\n      {{if eq .Args.urgency \"emergency\"}}If this is an emergency, hang up and dial 911.{{end}}\n", "", 1)
	require.NotEqual(t, string(doc), noNotice)
	se := startProduction(t, []byte(noNotice), server.Providers{})
	require.True(t, strings.HasPrefix(se.What, "checking the catalog "), se.What)
	require.ErrorContains(t, se.Err, "fence: escalate_to_human: emergency-without-notice")
	require.Contains(t, se.Fix, "starter catalog check")
}
