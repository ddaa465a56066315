package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/syncbuf"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// auditorKey belongs to an operator whose one role the catalog's
// permissions grant nothing.
const auditorKey = "auditor-key"

// withAuditor adds that operator to a catalog document.
func withAuditor(doc string) string {
	return strings.Replace(doc, "operators:\n",
		"operators:\n  - id: auditor\n    api_key_sha256: "+tools.HashKey(auditorKey)+"\n    roles: [auditor]\n", 1)
}

// requireNotPermitted checks a refusal names the permission and the roles
// that grant it.
func requireNotPermitted(t *testing.T, err error, perm tools.Permission, roles ...string) {
	t.Helper()
	obs := requireRefusal(t, err, http.StatusForbidden, mt.CodeNotPermitted)
	require.Contains(t, obs.Summary, strings.Join(roles, ", "))
	var payload struct {
		Permission string   `json:"permission"`
		Roles      []string `json:"roles"`
	}
	raw, err := json.Marshal(obs.Payload)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &payload))
	require.Equal(t, string(perm), payload.Permission)
	require.Equal(t, roles, payload.Roles)
}

// Each operator action beside deciding approvals needs a role the catalog
// names: an operator without it is refused, logged, and changes nothing;
// the demo's manager, who holds them all, gets through.
func TestOperatorActionsNeedTheirPermission(t *testing.T) {
	t.Parallel()
	logs := &syncbuf.Buffer{}
	doc := withAuditor(string(canaryCatalog(t)))
	file := newCatalogFile(t, doc)
	e := setup(t, withCatalogFile(file), withShortProviderTimeout, func(o *options) { o.logs = logs })
	auditor := apiclient.New(e.url, auditorKey, apiclient.Options{HTTPClient: openAPIClient(t)})

	t.Run("settle_reconciliations", func(t *testing.T) {
		loseNextAnswer(t, e.standins.SES.Faults())
		key := e.key("mail")
		resp, err := e.invoke("email_property_manager", key, emailArgs)
		require.NoError(t, err)
		require.Equal(t, mt.InvocationNeedsReconciliation, resp.State, "%+v", resp.Observation)

		_, err = auditor.ResolveReconciliation(e.ctx, key, apitype.OutcomeNotDelivered, "not in my inbox")
		requireNotPermitted(t, err, tools.PermSettleReconciliations, "admin", "manager")
		e.requireHeld(key)

		r, err := e.ops.ResolveReconciliation(e.ctx, key, apitype.OutcomeDelivered, "seen in the manager's inbox")
		require.NoError(t, err)
		require.Equal(t, string(mt.EffectSucceeded), r.Status)
	})

	t.Run("vouch_facts", func(t *testing.T) {
		_, err := auditor.SetFact(e.ctx, e.session, "caller_number", "+14155550177")
		requireNotPermitted(t, err, tools.PermVouchFacts, "ops", "manager")
		sess, err := e.ops.Session(e.ctx, e.session)
		require.NoError(t, err)
		require.Equal(t, sessionFacts["caller_number"], sess.Facts["caller_number"], "the fact is as the agent stated it")
		require.Equal(t, "agent-declared", sess.FactProvenance["caller_number"])

		sess, err = e.ops.SetFact(e.ctx, e.session, "caller_number", "+14155550177")
		require.NoError(t, err)
		require.Equal(t, "operator:demo-manager", sess.FactProvenance["caller_number"])
	})

	t.Run("run_canary", func(t *testing.T) {
		_, err := auditor.CanaryRun(e.ctx)
		requireNotPermitted(t, err, tools.PermRunCanary, "admin", "ops")
		st, err := e.ops.Canary(e.ctx)
		require.NoError(t, err)
		require.Equal(t, apitype.CanaryNone, canaryTool(t, st, "send_sms").State, "nothing ran")

		st, err = e.ops.CanaryRun(e.ctx)
		require.NoError(t, err)
		require.Equal(t, apitype.CanaryGreen, canaryTool(t, st, "send_sms").State)
	})

	t.Run("reload_catalog", func(t *testing.T) {
		before, err := e.ops.CatalogVersions(e.ctx)
		require.NoError(t, err)
		file.write(t, withLookupUnit(doc))

		_, err = auditor.ReloadCatalog(e.ctx)
		requireNotPermitted(t, err, tools.PermReloadCatalog, "admin")
		after, err := e.ops.CatalogVersions(e.ctx)
		require.NoError(t, err)
		require.Equal(t, before.Current, after.Current, "the catalog in use was kept")

		res, err := e.ops.ReloadCatalog(e.ctx)
		require.NoError(t, err)
		require.Equal(t, file.version(t), res.Version)
	})

	t.Run("decode_payloads", func(t *testing.T) {
		p := encrypted(t, "the caller at +14155550100 smells gas")
		resp := e.codecRequest("Bearer "+auditorKey, []*commonpb.Payload{p}, testUIOrigin)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusForbidden, resp.StatusCode)
		require.Equal(t, testUIOrigin, resp.Header.Get("Access-Control-Allow-Origin"), "the UI can say why it shows nothing")
		require.NotContains(t, string(body), "smells gas")
		require.Contains(t, string(body), "decode_payloads")

		resp = e.codecRequest("Bearer "+tools.DemoOpsKey, []*commonpb.Payload{p}, testUIOrigin)
		body, err = io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	})

	// Every refusal is logged, naming who, what and where.
	for _, perm := range []string{"settle_reconciliations", "vouch_facts", "run_canary", "reload_catalog", "decode_payloads"} {
		require.True(t, refusalLogged(t, logs.String(), perm), "%s refusal logged:\n%s", perm, logs.String())
	}
}

// refusalLogged reports whether the JSON log has the auditor's refusal of
// perm, with its route.
func refusalLogged(t *testing.T, log, perm string) bool {
	t.Helper()
	for _, line := range strings.Split(log, "\n") {
		var rec struct {
			Msg, Operator, Permission, Route string
		}
		if json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		if strings.HasPrefix(rec.Msg, "operator refused") && rec.Operator == "auditor" && rec.Permission == perm && rec.Route != "" {
			return true
		}
	}
	return false
}

// withPermission grants perm to roles in the catalog setup loads; apply
// it after any option that replaces the catalog.
func withPermission(perm tools.Permission, roles string) func(*options) {
	return func(o *options) {
		if o.catalog == nil {
			o.catalog = tools.DemoCatalogYAML
		}
		o.catalog = []byte(strings.Replace(string(o.catalog), "\ntools:\n", "\npermissions:\n  "+string(perm)+": ["+roles+"]\n\ntools:\n", 1))
	}
}
