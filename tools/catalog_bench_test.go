package tools_test

import (
	"encoding/json"
	"testing"

	"github.com/maestro-run/maestro/tools"
)

// BenchmarkLookupAndValidate measures what admission does first on every
// call: find the tool in the catalog and check the arguments against its
// JSON Schema.
func BenchmarkLookupAndValidate(b *testing.B) {
	cat, err := tools.Load(tools.DemoCatalogYAML)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name, tool string
		args       json.RawMessage
	}{
		{"Read", "lookup_tenant", json.RawMessage(`{"tenant_id":"t_100"}`)},
		{"WorkOrder", "create_work_order", json.RawMessage(`{"tenant_id":"t_100","category":"plumbing","description":"The kitchen tap drips.","priority":"routine"}`)},
		{"Refund", "issue_refund", json.RawMessage(`{"tenant_id":"t_100","amount_cents":1250,"reason":"Duplicate late fee"}`)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				tool, ok := cat.Tool(c.tool)
				if !ok {
					b.Fatalf("%s is not in the catalog", c.tool)
				}
				if err := tool.ValidateArgs(c.args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkValidateRefusal measures the refusal path, which also builds
// the explanation the agent gets back.
func BenchmarkValidateRefusal(b *testing.B) {
	cat, err := tools.Load(tools.DemoCatalogYAML)
	if err != nil {
		b.Fatal(err)
	}
	tool, _ := cat.Tool("send_sms")
	args := json.RawMessage(`{"to":"call me maybe","body":""}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := tool.ValidateArgs(args); err == nil {
			b.Fatal("invalid arguments were accepted")
		}
	}
}
