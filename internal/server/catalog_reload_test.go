package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/ledger"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// catalogFile stands in for a process's catalog file, which a test
// rewrites between reloads.
type catalogFile struct {
	mu   sync.Mutex
	data []byte
}

func newCatalogFile(t *testing.T, yaml string) *catalogFile {
	f := &catalogFile{}
	f.write(t, yaml)
	return f
}

// write replaces the file, trusting declared facts as setup's catalogs do.
func (f *catalogFile) write(t *testing.T, yaml string) {
	t.Helper()
	data, err := tools.TrustingDeclaredFacts([]byte(yaml))
	require.NoError(t, err)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.data = data
}

// reader is the service's CatalogFile: nil without a file, so a process
// started without one does not reload.
func (f *catalogFile) reader() func() ([]byte, error) {
	if f == nil {
		return nil
	}
	return f.read
}

func (f *catalogFile) read() ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]byte(nil), f.data...), nil
}

func (f *catalogFile) version(t *testing.T) string {
	data, err := f.read()
	require.NoError(t, err)
	return tools.Hash(data)
}

func withCatalogFile(f *catalogFile) func(*options) {
	return func(o *options) {
		o.catalogFile = f
		// The file trusts declared facts already.
		o.catalog, _ = f.read()
		o.strictFacts = true
	}
}

var demoYAML = string(tools.DemoCatalogYAML)

// withLookupUnit is the demo catalog with one more read tool, allowed to
// the voice agent.
func withLookupUnit(yaml string) string {
	yaml = strings.Replace(yaml, "    allow:\n      - lookup_tenant\n", "    allow:\n      - lookup_tenant\n      - lookup_unit\n", 1)
	return strings.Replace(yaml, "  - name: send_sms\n", `  - name: lookup_unit
    description: Call when you need the unit a tenant rents, to name it back to them.
    owner: resident-services
    effect: read
    delivery: readonly
    reversibility: none
    input_schema:
      type: object
      additionalProperties: false
      required: [tenant_id]
      properties:
        tenant_id:
          type: string
          pattern: "^t_[0-9]+$"
          description: tenant ID
          examples: [t_1001]
    connector:
      kind: http
      service: sandbox
      method: GET
      path: "/v1/tenants/{{pathescape .Args.tenant_id}}"
    wording:
      success: "Here is the unit of tenant {{.Args.tenant_id}}."
      failure: "I couldn't look up that unit right now."

  - name: send_sms
`, 1)
}

func TestCatalogReloadAddsACallableTool(t *testing.T) {
	t.Parallel()
	file := newCatalogFile(t, demoYAML)
	e := setup(t, withCatalogFile(file))
	v1 := file.version(t)

	_, err := e.invoke("lookup_unit", e.key("before"), `{"tenant_id":"t_100"}`)
	require.True(t, apiclient.IsRefusal(err, mt.CodeUnknownTool), "%v", err)

	file.write(t, withLookupUnit(demoYAML))
	res, err := e.ops.ReloadCatalog(e.ctx)
	require.NoError(t, err)
	require.True(t, res.Changed)
	require.Equal(t, v1, res.Previous)
	require.Equal(t, file.version(t), res.Version)

	resp, err := e.invoke("lookup_unit", e.key("after"), `{"tenant_id":"t_100"}`)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, resp.State, "%+v", resp.Observation)
	require.Contains(t, resp.Observation.Wording, "the unit of tenant t_100")

	// The ledger names the new version current and mirrors its tools.
	current, err := e.store.CatalogCurrent(e.ctx)
	require.NoError(t, err)
	require.Equal(t, res.Version, current)
	rows, err := e.store.ToolRegistryList(e.ctx)
	require.NoError(t, err)
	require.True(t, hasTool(rows, "lookup_unit", res.Version))

	// The same file again changes nothing.
	again, err := e.ops.ReloadCatalog(e.ctx)
	require.NoError(t, err)
	require.False(t, again.Changed)

	// The history lists both versions, the new one current and served.
	versions, err := e.ops.CatalogVersions(e.ctx)
	require.NoError(t, err)
	require.Equal(t, res.Version, versions.Current)
	require.Equal(t, res.Version, versions.Served)
	require.Len(t, versions.Activations, 2, "a reload of the same file adds nothing")
	require.Equal(t, res.Version, versions.Activations[0].Version)
	require.Equal(t, v1, versions.Activations[1].Version)
	_, err = e.agent.CatalogVersions(e.ctx)
	requireRefusal(t, err, http.StatusUnauthorized, mt.CodeUnauthorized)
}

func TestCatalogReloadRefusesABadFileAndChangesNothing(t *testing.T) {
	t.Parallel()
	file := newCatalogFile(t, demoYAML)
	e := setup(t, withCatalogFile(file))
	v1 := file.version(t)

	cases := map[string]struct {
		yaml string
		want []string
	}{
		"schema errors": {
			// Two faults in one row: both are reported.
			yaml: strings.Replace(strings.Replace(withLookupUnit(demoYAML),
				"    effect: read\n    delivery: readonly\n    reversibility: none\n    input_schema:\n      type: object\n      additionalProperties: false\n      required: [tenant_id]\n      properties:\n        tenant_id:\n          type: string\n          pattern: \"^t_[0-9]+$\"\n          description: tenant ID\n          examples: [t_1001]\n    connector:\n      kind: http\n      service: sandbox\n      method: GET\n      path: \"/v1/tenants/{{pathescape .Args.tenant_id}}\"\n    wording:\n      success: \"Here is the unit",
				"    effect: sometimes\n    delivery: readonly\n    reversibility: none\n    input_schema:\n      type: object\n      additionalProperties: false\n      required: [tenant_id]\n      properties:\n        tenant_id:\n          type: string\n          pattern: \"^t_[0-9]+$\"\n          description: tenant ID\n          examples: [t_1001]\n    connector:\n      kind: http\n      service: sandbox\n      method: GET\n      path: \"/v1/tenants/{{pathescape .Args.tenant_id}}\"\n    wording:\n      success: \"Here is the unit", 1),
				"      - lookup_unit\n", "      - lookup_unit\n      - no_such_tool\n", 1),
			want: []string{`"lookup_unit"`, "effect", "no_such_tool"},
		},
		"fence violation": {
			// The loader accepts it; the fence does not.
			yaml: strings.Replace(demoYAML,
				"    safety_notice: >-\n      {{if eq .Args.urgency \"emergency\"}}If this is an emergency, hang up and dial 911.{{end}}\n", "", 1),
			want: []string{"fence: escalate_to_human: emergency-without-notice"},
		},
	}
	for name, c := range cases {
		file.write(t, c.yaml)
		_, err := e.ops.ReloadCatalog(e.ctx)
		var refused *apiclient.CatalogRefusedError
		require.ErrorAs(t, err, &refused, name)
		require.Equal(t, v1, refused.Reload.Version, "%s: the catalog in use is kept", name)
		require.False(t, refused.Reload.Changed)
		all := strings.Join(refused.Reload.Violations, "\n")
		for _, w := range c.want {
			require.Contains(t, all, w, name)
		}
		if name == "schema errors" {
			require.GreaterOrEqual(t, len(refused.Reload.Violations), 2, "every violation is reported: %q", refused.Reload.Violations)
		}
		current, err := e.store.CatalogCurrent(e.ctx)
		require.NoError(t, err)
		require.Equal(t, v1, current, name)
	}
	// The answer is a 422 on the wire.
	req, err := http.NewRequestWithContext(e.ctx, http.MethodPost, e.url+"/v1/catalog/reload", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+tools.DemoOpsKey)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusUnprocessableEntity, resp.StatusCode)

	_, err = e.invoke("lookup_unit", e.key("refused"), `{"tenant_id":"t_100"}`)
	require.True(t, apiclient.IsRefusal(err, mt.CodeUnknownTool), "nothing of a refused file is served: %v", err)
}

func TestCatalogReloadKeepsTheAdmittedVersionThroughApproval(t *testing.T) {
	t.Parallel()
	file := newCatalogFile(t, demoYAML)
	e := setup(t, withCatalogFile(file))
	pending := e.requestRefund("refund")

	// v2 rewords the refund and caps it below the pending call's amount.
	v2 := strings.Replace(demoYAML, `success: "I've issued refund {{.Receipt.ID}} of`, `success: "Version two issued refund {{.Receipt.ID}} of`, 1)
	v2 = strings.Replace(v2, "          maximum: 50000\n          description: the amount in US cents, at most 50000\n",
		"          maximum: 100\n          description: the amount in US cents, at most 100\n", 1)
	file.write(t, v2)
	res, err := e.ops.ReloadCatalog(e.ctx)
	require.NoError(t, err)
	require.True(t, res.Changed)

	// An approver's edit is checked against v1's schema, which allows it.
	_, err = e.ops.Modify(e.ctx, pending.ApprovalID, []byte(`{"tenant_id":"t_100","amount_cents":2400,"reason":"Duplicate payment"}`), "v1 allows it")
	require.NoError(t, err)
	done, err := e.agent.Wait(e.ctx, pending.InvocationID)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, done.State, "%+v", done.Observation)
	require.True(t, strings.HasPrefix(done.Observation.Wording, "I've issued refund"), "v1's wording: %q", done.Observation.Wording)

	// A call admitted now runs under v2.
	_, err = e.invoke("issue_refund", e.key("v2"), refundArgs)
	require.True(t, apiclient.IsRefusal(err, mt.CodeInvalidArgs), "v2 caps refunds at 100 cents: %v", err)
}

func TestCatalogReloadCompensatesByTheVersionTheEffectRanUnder(t *testing.T) {
	t.Parallel()
	file := newCatalogFile(t, demoYAML)
	e := setup(t, withCatalogFile(file))
	wo := e.createWorkOrder("wo")

	// v2's compensation would cancel another work order.
	file.write(t, strings.Replace(demoYAML, `        work_order_id: "{{.Receipt.ID}}"`, `        work_order_id: "wo_other"`, 1))
	res, err := e.ops.ReloadCatalog(e.ctx)
	require.NoError(t, err)
	require.True(t, res.Changed)

	rb, err := e.agent.Rollback(e.ctx, e.session, "caller changed their mind")
	require.NoError(t, err)
	require.False(t, rb.Halted, "%+v", rb.Steps)
	require.Len(t, rb.Steps, 1)
	require.Equal(t, wo, rb.Steps[0].Receipt.ID)
	got, ok := e.standins.Sandbox.WorkOrder(wo)
	require.True(t, ok)
	require.Equal(t, "cancelled", got.Status)
	require.Equal(t, 1, got.CancelCount)
}

func TestCatalogReloadConvergesAcrossProcesses(t *testing.T) {
	t.Parallel()
	fileA, fileB := newCatalogFile(t, demoYAML), newCatalogFile(t, demoYAML)
	poll := func(o *options) { o.catalogPoll = 50 * time.Millisecond }
	a := setup(t, withCatalogFile(fileA), poll)
	b := setup(t, withCatalogFile(fileB), poll, alongside(a))
	v1 := fileA.version(t)

	// A reloads; B's file is still v1, so B keeps v1 and says why.
	fileA.write(t, withLookupUnit(demoYAML))
	res, err := a.ops.ReloadCatalog(a.ctx)
	require.NoError(t, err)
	v2 := res.Version
	require.Eventually(t, func() bool {
		r := readiness(t, b)
		return r.Catalog == v1 && strings.Contains(r.CatalogDrift, v2)
	}, time.Minute, 20*time.Millisecond, "B reports its file differs")

	// B's file catches up: B follows without being asked.
	fileB.write(t, withLookupUnit(demoYAML))
	require.Eventually(t, func() bool {
		r := readiness(t, b)
		return r.Catalog == v2 && r.CatalogDrift == ""
	}, time.Minute, 20*time.Millisecond, "B converges on v2")
	resp, err := b.invoke("lookup_unit", b.key("on-b"), `{"tenant_id":"t_100"}`)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, resp.State, "%+v", resp.Observation)
}

func readiness(t *testing.T, e *env) apitype.Readiness {
	t.Helper()
	var r apitype.Readiness
	resp, err := http.Get(e.url + "/readyz")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.NoError(t, jsonDecode(resp.Body, &r))
	return r
}

func hasTool(rows []ledger.ToolRegistryRow, name, version string) bool {
	for _, r := range rows {
		if r.Name == name && r.CatalogHash == version {
			return true
		}
	}
	return false
}

func jsonDecode(r io.Reader, v any) error {
	return json.NewDecoder(r).Decode(v)
}

func TestCatalogReloadWithoutAFileIsNotServed(t *testing.T) {
	t.Parallel()
	e := setup(t)
	_, err := e.ops.ReloadCatalog(e.ctx)
	require.True(t, apiclient.IsRefusal(err, mt.CodeNotFound), "%v", err)
	_, err = e.agent.ReloadCatalog(e.ctx)
	require.True(t, apiclient.IsRefusal(err, mt.CodeUnauthorized), "an agent key may not reload: %v", err)
}
