package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/maestro-run/maestro/internal/codec/codectest"
	"github.com/maestro-run/maestro/tools"
)

// testUIOrigin is the Temporal UI origin the tests' maestro allows.
const testUIOrigin = "https://temporal.example.com"

// codecRequest posts payloads to the codec endpoint as the Temporal CLI
// does, with auth as the Authorization header when set.
func (e *env) codecRequest(auth string, payloads []*commonpb.Payload, origin string) *http.Response {
	e.t.Helper()
	body, err := protojson.Marshal(&commonpb.Payloads{Payloads: payloads})
	require.NoError(e.t, err)
	req, err := http.NewRequestWithContext(e.ctx, http.MethodPost, e.url+"/codec/default/decode", bytes.NewReader(body))
	require.NoError(e.t, err)
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	e.t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

func encrypted(t *testing.T, v any) *commonpb.Payload {
	t.Helper()
	p, err := testCodec.DataConverter().ToPayload(v)
	require.NoError(t, err)
	return p
}

func TestCodecEndpointDecodesForOperators(t *testing.T) {
	t.Parallel()
	e := setup(t)
	const secret = "the caller at +14155550100 smells gas"
	p := encrypted(t, secret)
	require.NotContains(t, string(p.Data), "smells gas")

	resp := e.codecRequest("Bearer "+tools.DemoOpsKey, []*commonpb.Payload{p}, testUIOrigin)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	require.Equal(t, testUIOrigin, resp.Header.Get("Access-Control-Allow-Origin"))
	var out commonpb.Payloads
	require.NoError(t, protojson.Unmarshal(body, &out))
	require.Len(t, out.Payloads, 1)
	var got string
	require.NoError(t, converter.GetDefaultDataConverter().FromPayload(out.Payloads[0], &got))
	require.Equal(t, secret, got)

	// A payload under a key maestro does not hold is a clear refusal
	// naming the key, not a silent pass-through.
	foreign, err := codectest.New("retired-2024").DataConverter().ToPayload(secret)
	require.NoError(t, err)
	resp = e.codecRequest("Bearer "+tools.DemoOpsKey, []*commonpb.Payload{foreign}, "")
	body, err = io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Contains(t, string(body), `key "retired-2024"`)

	// A body that is not a payload list is refused as such.
	req, err := http.NewRequestWithContext(e.ctx, http.MethodPost, e.url+"/codec/default/decode", strings.NewReader(`{"payloads":"nope"}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+tools.DemoOpsKey)
	bad, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer func() { _ = bad.Body.Close() }()
	require.Equal(t, http.StatusBadRequest, bad.StatusCode)
}

func TestCodecEndpointRefusesAllButOperators(t *testing.T) {
	t.Parallel()
	e := setup(t)
	p := []*commonpb.Payload{encrypted(t, "secret")}
	for name, auth := range map[string]string{
		"no key":    "",
		"wrong key": "Bearer not-a-key",
		"agent key": "Bearer " + tools.DemoAgentKey,
	} {
		resp := e.codecRequest(auth, p, testUIOrigin)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, name)
		require.NotContains(t, string(body), "secret", name)
		var refusal struct {
			Observation struct{ Code string } `json:"observation"`
		}
		require.NoError(t, json.Unmarshal(body, &refusal), name)
		require.Equal(t, "unauthorized", refusal.Observation.Code, name)
		require.Equal(t, testUIOrigin, resp.Header.Get("Access-Control-Allow-Origin"), "%s: the UI can read why", name)
	}
}

func TestCodecEndpointPreflightAllowsOnlyTheUIOrigin(t *testing.T) {
	t.Parallel()
	e := setup(t)
	preflight := func(origin string) *http.Response {
		req, err := http.NewRequestWithContext(e.ctx, http.MethodOptions, e.url+"/codec/default/decode", nil)
		require.NoError(t, err)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "authorization,content-type,x-namespace")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		return resp
	}
	ok := preflight(testUIOrigin)
	require.Equal(t, http.StatusNoContent, ok.StatusCode)
	require.Equal(t, testUIOrigin, ok.Header.Get("Access-Control-Allow-Origin"))
	require.Contains(t, ok.Header.Get("Access-Control-Allow-Methods"), "POST")
	require.Contains(t, ok.Header.Get("Access-Control-Allow-Headers"), "Authorization")
	require.Contains(t, ok.Header.Get("Access-Control-Allow-Headers"), "X-Namespace")

	other := preflight("https://evil.example.com")
	require.Equal(t, http.StatusForbidden, other.StatusCode)
	require.Empty(t, other.Header.Get("Access-Control-Allow-Origin"))

	// Nor does another origin's actual request get the header, so its
	// browser keeps the answer from it even with a stolen key.
	resp := e.codecRequest("Bearer "+tools.DemoOpsKey, []*commonpb.Payload{encrypted(t, "x")}, "https://evil.example.com")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"))
}

// The Temporal CLI fills {namespace} in its --codec-endpoint with its
// namespace, which may be empty, and appends /decode: every endpoint it
// can make from the documented one decodes, and none is redirected.
func TestCodecEndpointServesEveryNamespaceTheCLIFillsIn(t *testing.T) {
	t.Parallel()
	e := setup(t)
	const secret = "the caller at +14155550100 smells gas"
	for name, endpoint := range map[string]string{
		"namespace given":  strings.ReplaceAll(e.url+"/codec/{namespace}", "{namespace}", "default"),
		"namespace empty":  strings.ReplaceAll(e.url+"/codec/{namespace}", "{namespace}", ""),
		"without template": e.url + "/codec",
	} {
		remote := converter.NewRemotePayloadCodec(converter.RemotePayloadCodecOptions{
			Endpoint: endpoint,
			ModifyRequest: func(r *http.Request) error {
				r.Header.Set("Authorization", "Bearer "+tools.DemoOpsKey)
				return nil
			},
			Client: http.Client{CheckRedirect: func(*http.Request, []*http.Request) error {
				return fmt.Errorf("redirected from %s", endpoint)
			}},
		})
		decoded, err := remote.Decode([]*commonpb.Payload{encrypted(t, secret)})
		require.NoError(t, err, name)
		var got string
		require.NoError(t, converter.GetDefaultDataConverter().FromPayload(decoded[0], &got), name)
		require.Equal(t, secret, got, name)

		// Encode is refused with the reason, not redirected nor run.
		_, err = remote.Encode([]*commonpb.Payload{encrypted(t, secret)})
		require.ErrorContains(t, err, "only decodes", name)
	}

	// The empty namespace is still an operator's route.
	for _, path := range []string{"/codec//decode", "/codec/decode"} {
		req, err := http.NewRequestWithContext(e.ctx, http.MethodPost, e.url+path, strings.NewReader(`{"payloads":[]}`))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+tools.DemoAgentKey)
		resp, err := http.DefaultTransport.RoundTrip(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, path)
	}
}
