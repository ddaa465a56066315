package ses_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/aws/aws-sdk-go-v2/service/sesv2/types"
	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/standin/fault"
	standin "github.com/maestro-run/maestro/internal/standin/ses"
)

const (
	office = "office@example.com"
	tenant = "maria.lopez@example.com"
)

// clock is a hand-driven time source so timestamps are exact in assertions.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type fixture struct {
	standin *standin.Server
	srv     *httptest.Server
	clock   *clock
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	c := &clock{t: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)}
	s := standin.New(standin.Options{Now: c.Now})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	// Runs before srv.Close, which would otherwise wait on hung requests.
	t.Cleanup(s.Faults().Reset)
	return &fixture{standin: s, srv: srv, clock: c}
}

// client returns the real SDK client pointed at the stand-in.
func (f *fixture) client(optFns ...func(*sesv2.Options)) *sesv2.Client {
	return f.clientWith(f.standin.AccessKeyID(), f.standin.SecretAccessKey(), optFns...)
}

func (f *fixture) clientWith(accessKeyID, secret string, optFns ...func(*sesv2.Options)) *sesv2.Client {
	return sesv2.New(sesv2.Options{
		BaseEndpoint: aws.String(f.srv.URL),
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider(accessKeyID, secret, ""),
	}, optFns...)
}

// noRetries makes the first failure final, so tests see it.
func noRetries(o *sesv2.Options) { o.RetryMaxAttempts = 1 }

// retriesWithoutBackoff keeps the SDK's retry decisions but not its waits.
func retriesWithoutBackoff(o *sesv2.Options) {
	o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
		so.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
	})
}

func simpleInput() *sesv2.SendEmailInput {
	return &sesv2.SendEmailInput{
		FromEmailAddress: aws.String(office),
		Destination:      &types.Destination{ToAddresses: []string{tenant}},
		Content: &types.EmailContent{Simple: &types.Message{
			Subject: &types.Content{Data: aws.String("Water shut-off Friday")},
			Body:    &types.Body{Text: &types.Content{Data: aws.String("Water is off 9-11am.")}},
		}},
	}
}

// readStore fetches GET /store the way an emulator reader would.
func (f *fixture) readStore(t *testing.T, query string) []map[string]any {
	t.Helper()
	status, body := f.get(t, "/store"+query)
	require.Equal(t, http.StatusOK, status, string(body))
	var view struct {
		Templates map[string]any `json:"templates"`
		Emails    []map[string]any
	}
	require.NoError(t, json.Unmarshal(body, &view))
	require.NotNil(t, view.Templates, "the emulator always sends templates")
	require.NotNil(t, view.Emails)
	return view.Emails
}

func (f *fixture) get(t *testing.T, path string) (int, []byte) {
	t.Helper()
	resp, err := f.srv.Client().Get(f.srv.URL + path)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, body
}

// signedRequest builds a SendEmail request signed with the stand-in's
// credentials, for bodies the SDK would refuse to send.
func (f *fixture) signedRequest(t *testing.T, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, f.srv.URL+"/v2/email/outbound-emails", bytes.NewReader([]byte(body)))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	sum := sha256.Sum256([]byte(body))
	creds := aws.Credentials{AccessKeyID: f.standin.AccessKeyID(), SecretAccessKey: f.standin.SecretAccessKey()}
	require.NoError(t, v4.NewSigner().SignHTTP(t.Context(), creds, req, hex.EncodeToString(sum[:]), "ses", "us-east-1", time.Now()))
	return req
}

type response struct {
	status    int
	errorType string
	body      map[string]any
}

func (f *fixture) do(t *testing.T, req *http.Request) response {
	t.Helper()
	resp, err := f.srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var body map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	return response{status: resp.StatusCode, errorType: resp.Header.Get("X-Amzn-ErrorType"), body: body}
}

// waitHeld waits until n requests are held by a fault, failing the test
// instead of hanging if the fault never triggers.
func waitHeld(t *testing.T, inj *fault.Injector, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	require.NoError(t, inj.WaitHeld(ctx, n))
}
