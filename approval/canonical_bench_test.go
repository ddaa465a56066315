package approval_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/maestro-run/maestro/approval"
)

// BenchmarkCanonicalize measures freezing a call's arguments: parse,
// canonical re-encoding and sha256, done once per admitted call.
func BenchmarkCanonicalize(b *testing.B) {
	for _, c := range []struct {
		name string
		args json.RawMessage
	}{
		{"Refund", json.RawMessage(`{"tenant_id":"t_100","amount_cents":1250,"reason":"Duplicate late fee"}`)},
		// Keys out of order, whitespace and a number in exponent form: the
		// work canonicalisation exists to do.
		{"Unordered", json.RawMessage(`{ "reason" : "Duplicate late fee", "amount_cents" : 1.25E3, "tenant_id" : "t_100" }`)},
		{"Nested", json.RawMessage(`{"to":"+14155550100","items":[{"sku":"a","qty":1},{"sku":"b","qty":2}],"meta":{"source":"voice","tags":["x","y","z"]}}`)},
		{"LongText", json.RawMessage(`{"tenant_id":"t_100","summary":"` + strings.Repeat("The tenant reports a leak under the sink. ", 45) + `"}`)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.args)))
			for b.Loop() {
				if _, _, err := approval.Canonicalize(c.args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
