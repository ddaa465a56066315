package observation_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/maestro-run/maestro/internal/observation"
	mt "github.com/maestro-run/maestro/maestrotype"
)

var (
	benchSource  = &mt.Source{System: "http:sandbox", Tool: "create_work_order", OperationKey: "call-1:work-order", InvocationID: "inv_0123456789abcdef"}
	benchReceipt = &mt.Receipt{
		Provider: "http:sandbox",
		ID:       "wo_0123456789",
		Status:   "open",
		Fields:   map[string]string{"resource_id": "wo_0123456789", "status": "open"},
		IssuedAt: time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC),
	}
	// A work order as the sandbox returns it: well under the cap.
	smallPayload = json.RawMessage(`{"id":"wo_0123456789","object":"work_order","status":"open","tenant_id":"t_100",` +
		`"category":"plumbing","description":"The kitchen tap drips.","priority":"routine","created":1796117400}`)
	// A listing far over the cap, which is truncated to a preview.
	largePayload = json.RawMessage(`{"data":["` + strings.Repeat(`wo_0123456789","`, 1200) + `"]}`)
)

// BenchmarkSuccess measures building the success observation every
// real-sync call returns, with the payload capped, and encoding it for the
// agent.
func BenchmarkSuccess(b *testing.B) {
	for _, c := range []struct {
		name    string
		payload json.RawMessage
	}{
		{"Small", smallPayload},
		{"OverCap", largePayload},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				obs := observation.Success("Created work order wo_0123456789", "I've created work order wo_0123456789; its status is open.",
					c.payload, benchReceipt, benchSource)
				if _, err := json.Marshal(obs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCap measures capping alone, for a payload that arrives as a Go
// value and must be encoded first.
func BenchmarkCap(b *testing.B) {
	v := map[string]any{"approval_id": "apr_0123456789abcdef", "tenant_id": "t_100", "amount_cents": 1250}
	b.ReportAllocs()
	for b.Loop() {
		if observation.Cap(v) == nil {
			b.Fatal("the payload was dropped")
		}
	}
}
