// Package faults_test proves that maestro survives the faults its
// dependencies will have in production, with nothing lost and nothing done
// twice: the Temporal server restarting under in-flight invocations and
// approvals, and the ledger's PostgreSQL connections dropping while calls
// are made. Each test counts effects at the provider stand-ins, the
// receivers, not in maestro's own tables.
package faults_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/codec/codectest"
	"github.com/maestro-run/maestro/internal/connectors"
	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/server"
	"github.com/maestro-run/maestro/internal/standin"
	"github.com/maestro-run/maestro/tools"
)

// testCodec encrypts the payloads of every Temporal client the tests make,
// as maestro's own clients do.
var testCodec = codectest.New("faults")

// maestro is one maestro service wired to a ledger, a Temporal client and
// its own provider stand-ins.
type maestro struct {
	agent    *apiclient.Client
	ops      *apiclient.Client
	standins *standin.Set
	session  string
}

// config is what a test varies about its maestro.
type config struct {
	store    ledger.Store
	temporal client.Client
	// providerTimeout bounds each provider call; a test that holds a call
	// at the provider needs it longer than the hold.
	providerTimeout time.Duration
	// waitTimeout is how long the API holds a call before answering 202.
	waitTimeout time.Duration
	// leaseTTL is how long a claim on an operation key is exclusive.
	// Optional: the service's default.
	leaseTTL time.Duration
}

func startMaestro(t *testing.T, cfg config) *maestro {
	t.Helper()
	// The stand-ins sign no session facts, so the SMS rule rests on the
	// ones the test states: these tests drive delivery, not trust.
	doc, err := tools.TrustingDeclaredFacts(tools.DemoCatalogYAML)
	require.NoError(t, err)
	// The faults keep an approval and other writes of one session in
	// flight together.
	doc, err = tools.AllowingWritesWhileAwaiting(doc)
	require.NoError(t, err)
	cat, err := tools.Load(doc)
	require.NoError(t, err)
	sins, err := standin.Start()
	require.NoError(t, err)
	t.Cleanup(func() { _ = sins.Close() })

	tw, ses := sins.TwilioConfig(), sins.SESConfig()
	tw.Timeout, ses.Timeout = cfg.providerTimeout, cfg.providerTimeout
	conns, err := connectors.NewSet(tw, ses, connectors.HTTPConfig{Services: sins.HTTPServices(), Timeout: cfg.providerTimeout})
	require.NoError(t, err)

	svc, err := server.StartCore(t.Context(), server.CoreConfig{
		Store:       cfg.store,
		Catalog:     cat,
		Temporal:    cfg.temporal,
		Connectors:  conns,
		HTTPAddr:    "127.0.0.1:0",
		TaskQueue:   "tq-" + randomID(),
		WaitTimeout: cfg.waitTimeout,
		LeaseTTL:    cfg.leaseTTL,
		Logger:      slog.New(slog.DiscardHandler),
		Codec:       testCodec,
	})
	require.NoError(t, err)
	t.Cleanup(func() {
		// t.Context is already cancelled when cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = svc.Stop(ctx)
	})
	return &maestro{
		agent:    apiclient.New(svc.URL(), tools.DemoAgentKey, apiclient.Options{}),
		ops:      apiclient.New(svc.URL(), tools.DemoOpsKey, apiclient.Options{}),
		standins: sins,
		session:  "call-" + randomID(),
	}
}

// callerNumber is the caller's own number: an SMS to it needs no human.
const callerNumber = "+14155550100"

// request is a call in the test's session.
func (m *maestro) request(tool, key, args string) apitype.InvokeRequest {
	return apitype.InvokeRequest{
		SessionID: m.session, Tool: tool, OperationKey: m.session + ":" + key, Args: json.RawMessage(args),
		SessionContext: map[string]string{"caller_number": callerNumber, "tenant_id": "t_100"},
	}
}

// The demo catalog's calls the tests make.
const (
	workOrderArgs = `{"tenant_id":"t_100","category":"hvac","description":"No heat","priority":"urgent"}`
	refundArgs    = `{"tenant_id":"t_100","amount_cents":2500,"reason":"Duplicate payment"}`
	smsArgs       = `{"to":"` + callerNumber + `","body":"Your technician arrives at 9."}`
)

// waitFor polls cond until it holds or ctx ends. Tests poll only what
// nothing announces: a request reaching a stand-in, a workflow finishing.
func waitFor(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("gave up waiting for %s: %v", what, ctx.Err())
		case <-tick.C:
		}
	}
}

func randomID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
