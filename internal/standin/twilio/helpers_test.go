package twilio_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	twilioapi "github.com/twilio/twilio-go"
	"github.com/twilio/twilio-go/client"
	openapi "github.com/twilio/twilio-go/rest/api/v2010"

	"github.com/maestro-run/maestro/internal/standin/fault"
	standin "github.com/maestro-run/maestro/internal/standin/twilio"
)

const (
	sender    = "+15005550006"
	recipient = "+14155550100"
)

// clock is a hand-driven time source so timestamps are exact in assertions.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock {
	return &clock{t: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)}
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
	return newFixtureWith(t, standin.Options{})
}

// newFixtureWith starts a stand-in with opts and the fixture's clock.
func newFixtureWith(t *testing.T, opts standin.Options) *fixture {
	t.Helper()
	c := newClock()
	opts.Now = c.Now
	s, err := standin.New(opts)
	require.NoError(t, err)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	// Runs before srv.Close: a request still hung by a fault would
	// otherwise keep Close waiting forever.
	t.Cleanup(s.Faults().Reset)
	return &fixture{standin: s, srv: srv, clock: c}
}

// client returns a real twilio-go client pointed at the stand-in.
func (f *fixture) client(t *testing.T) *twilioapi.RestClient {
	return f.clientWith(t, f.standin.AccountSID(), f.standin.AuthToken(), nil)
}

// clientWith builds a client with the given credentials; base, when set,
// carries the rewritten requests.
func (f *fixture) clientWith(t *testing.T, sid, token string, base http.RoundTripper) *twilioapi.RestClient {
	t.Helper()
	target, err := url.Parse(f.srv.URL)
	require.NoError(t, err)
	c := &client.Client{
		Credentials: client.NewCredentials(sid, token),
		HTTPClient:  &http.Client{Transport: &standin.RewriteTransport{Target: target, Base: base}},
	}
	// ClientParams.AccountSid is ignored when a Client is supplied.
	c.SetAccountSid(sid)
	return twilioapi.NewRestClientWithParams(twilioapi.ClientParams{
		Username:   sid,
		Password:   token,
		AccountSid: sid,
		Client:     c,
	})
}

// raw sends a request without the SDK, for checks on exact wire shapes.
func (f *fixture) raw(t *testing.T, method, path string, form url.Values) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, f.srv.URL+path, strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(f.standin.AccountSID(), f.standin.AuthToken())
	resp, err := f.srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, body
}

func (f *fixture) messagesPath() string {
	return "/2010-04-01/Accounts/" + f.standin.AccountSID() + "/Messages.json"
}

func (f *fixture) send(t *testing.T, c *twilioapi.RestClient, to, from, body string) *openapi.ApiV2010Message {
	t.Helper()
	m, err := c.Api.CreateMessage((&openapi.CreateMessageParams{}).SetTo(to).SetFrom(from).SetBody(body))
	require.NoError(t, err)
	return m
}

func decodeObject(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(body, &m), string(body))
	return m
}

func restError(t *testing.T, err error) *client.TwilioRestError {
	t.Helper()
	var restErr *client.TwilioRestError
	require.ErrorAs(t, err, &restErr)
	return restErr
}

// abandonTransport makes a client give up on its in-flight requests when
// the test closes abandon, as a timeout would, without waiting for one.
type abandonTransport struct {
	abandon <-chan struct{}
}

func (a abandonTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(req.Context())
	go func() {
		<-a.abandon
		cancel()
	}()
	return http.DefaultTransport.RoundTrip(req.WithContext(ctx))
}

// waitHeld waits until n requests are held by a fault, failing the test
// instead of hanging if the fault never triggers.
func waitHeld(t *testing.T, inj *fault.Injector, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	require.NoError(t, inj.WaitHeld(ctx, n))
}
