package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/maestro-run/maestro/apitype"
)

// FuzzDecodeInvokeRequest drives arbitrary bodies through the decoding of
// POST /v1/invocations, up to the point where the admission gate takes
// over. Whatever the body, the answer is a decoded request or a 4xx
// refusal: never a panic, never a 5xx that would tell an agent maestro
// failed when the agent sent garbage.
func FuzzDecodeInvokeRequest(f *testing.F) {
	f.Add([]byte(`{"session_id":"s","tool":"lookup_tenant","args":{"tenant_id":"t_100"},"operation_key":"s:1"}`))
	s := &Server{cfg: Config{MaxBodyBytes: 4 << 10}.WithDefaults()}
	f.Fuzz(func(t *testing.T, body []byte) {
		r := httptest.NewRequest(http.MethodPost, "/v1/invocations", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()

		var req apitype.InvokeRequest
		ref := s.decodeJSON(w, r, &req)
		if ref != nil {
			if ref.HTTPStatus < 400 || ref.HTTPStatus >= 500 {
				t.Fatalf("body %q refused with HTTP %d", body, ref.HTTPStatus)
			}
			if ref.Observation.Code == "" || ref.Observation.Summary == "" {
				t.Fatalf("refusal of %q explains nothing: %+v", body, ref.Observation)
			}
			return
		}
		if int64(len(body)) > s.cfg.MaxBodyBytes {
			t.Fatalf("a %d-byte body passed the %d-byte limit", len(body), s.cfg.MaxBodyBytes)
		}
		// What decodes hands the gate arguments that are JSON or absent.
		if len(req.Args) > 0 && !json.Valid(req.Args) {
			t.Fatalf("body %q decoded to invalid args %q", body, req.Args)
		}
	})
}
