package server_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	temporallog "go.temporal.io/sdk/log"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/internal/api"
	"github.com/maestro-run/maestro/internal/callback"
	"github.com/maestro-run/maestro/internal/codec"
	"github.com/maestro-run/maestro/internal/connectors"
	"github.com/maestro-run/maestro/internal/devtemporal/devtemporaltest"
	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/ledger/ledgertest"
	"github.com/maestro-run/maestro/internal/outbox"
	"github.com/maestro-run/maestro/internal/pgwire"
	"github.com/maestro-run/maestro/internal/server"
	"github.com/maestro-run/maestro/internal/standin"
	"github.com/maestro-run/maestro/internal/syncbuf"
	"github.com/maestro-run/maestro/internal/telemetry"
	"github.com/maestro-run/maestro/internal/throttle"
	"github.com/maestro-run/maestro/internal/transcriptref"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// temporalServer is one Temporal server shared by the package's tests, in
// a process of its own; each test gets its own task queue, ledger schema,
// stand-ins and operation keys, so tests stay independent and run in
// parallel.
var (
	temporalServer *devtemporaltest.Server
	// temporalClient is the tests' client, made once.
	temporalClient client.Client
	// testCodec encrypts every payload of the tests' workflows, as
	// maestro's codec does in production, under the public test fixture
	// key, so that the histories recorded here replay in the workflows
	// package.
	testCodec = mustLoadCodec(codec.Config{KeyDir: filepath.Join("..", "..", "workflows", "testdata", "codec")})
)

func mustLoadCodec(cfg codec.Config) *codec.Codec {
	c, err := codec.Load(cfg)
	if err != nil {
		panic(err)
	}
	return c
}

func TestMain(m *testing.M) {
	var err error
	if temporalServer, err = devtemporaltest.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if temporalClient, err = client.Dial(temporalOptions(testCodec.Apply(client.Options{}))); err != nil {
		fmt.Fprintln(os.Stderr, errors.Join(err, temporalServer.Stop()))
		os.Exit(1)
	}
	code := m.Run()
	temporalClient.Close()
	if err := temporalServer.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(code)
}

// temporalOptions points opts at the tests' Temporal server.
func temporalOptions(opts client.Options) client.Options {
	opts.HostPort, opts.Namespace = temporalServer.HostPort(), devtemporaltest.Namespace
	return opts
}

// dialTemporal is a Temporal client of the test's own, made with opts and
// closed when the test ends.
func dialTemporal(t *testing.T, opts client.Options) client.Client {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = temporallog.NewStructuredLogger(slog.New(slog.DiscardHandler))
	}
	c, err := client.DialContext(t.Context(), temporalOptions(opts))
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

// env is one maestro wired to real Temporal, PostgreSQL and stand-ins.
type env struct {
	svc       *server.Core
	t         *testing.T
	ctx       context.Context
	agent     *apiclient.Client
	ops       *apiclient.Client
	url       string
	store     ledger.Store
	standins  *standin.Set
	temporal  client.Client
	session   string
	taskQueue string
	// stop stops this maestro; the test's cleanup stops it otherwise.
	stop func()
	// ledgerWire counts the ledger's work on the wire; nil unless the
	// test asked for it with countLedger.
	ledgerWire *pgwire.Proxy
	// uncounted is the same ledger opened beside the relay, for a test's
	// own reads that must not count as maestro's work; nil unless
	// countLedger.
	uncounted ledger.Store
}

type options struct {
	// providerTimeout bounds each provider call.
	providerTimeout time.Duration
	waitTimeout     time.Duration
	tokenTTL        time.Duration
	leaseTTL        time.Duration
	sweepIdle       time.Duration
	// listingLag is how long a lost answer's search waits to be trusted.
	listingLag time.Duration
	// rollbackWait bounds a rollback's wait for the calls in flight.
	rollbackWait time.Duration
	// standins configures the provider stand-ins.
	standins standin.Options
	// catalog overrides the demo catalog.
	catalog []byte
	// timeouts override the API server's connection timeouts.
	timeouts server.HTTPTimeouts
	// transcripts is the transcript_ref fetch policy.
	transcripts transcriptref.Policy
	// strictFacts keeps the catalog's rules on trusted facts only. Without
	// it the tests' own session facts count, as the stand-ins cannot sign
	// any: most tests drive delivery, not the trust model.
	strictFacts bool
	// signaller wraps the Temporal client the outbox relay signals with.
	signaller func(outbox.Signaller) outbox.Signaller
	// getenv is the environment the agents' callback secrets are read from.
	getenv func(string) string
	// callbacks tunes the callback relay.
	callbacks callback.Config
	// productionCallbacks treats callback and control URLs as outside dev
	// mode: https only, and no loopback host let through.
	productionCallbacks bool
	// logs receives the service's log as JSON lines. Optional: discarded.
	logs *syncbuf.Buffer
	// postCallBackoff paces post-call delivery attempts; tests keep it
	// short so an outage's end is noticed at once.
	postCallBackoff mt.Backoff
	// restartOf, when set, stops that maestro and starts this one on its
	// ledger, stand-ins, task queue and session: a redeploy, typically
	// with another catalog.
	restartOf *env
	// catalogFile is the process's catalog file, re-read on reload.
	// Optional: without it a reload is refused.
	catalogFile *catalogFile
	// catalogPoll is how often the process follows the ledger's current
	// catalog version. Optional: default the service's.
	catalogPoll time.Duration
	// secureCookies sends the console's cookies over https only, as
	// outside dev mode; the tests' browsers speak plain http.
	secureCookies bool
	// telemetry, when set, is the process's telemetry; it gets its own
	// Temporal client, made with the telemetry's client options.
	telemetry *telemetry.Telemetry
	// throttle limits failed key checks; tests set its clock.
	throttle throttle.Config
	// interceptors, when set, get the process its own Temporal client,
	// made with them: a test's hand on the calls maestro makes.
	interceptors []interceptor.ClientInterceptor
	// countLedger relays the ledger's connections through a counter,
	// env.ledgerWire.
	countLedger bool
	// noStatusCallbacks keeps the Twilio stand-in from reporting message
	// statuses, which maestro records as they arrive.
	noStatusCallbacks bool
	// sweepEvery and outboxInterval pace the invocation sweep and the
	// outbox relay's look for due signals. Optional: the service's.
	sweepEvery, outboxInterval time.Duration
	// alongside, when set, starts this maestro next to that one, which
	// keeps running, on its ledger, stand-ins, task queue and session: a
	// second process behind the same load balancer.
	alongside *env
}

// alongside starts a second maestro sharing e's ledger and stand-ins.
func alongside(e *env) func(*options) {
	return func(o *options) { o.alongside = e }
}

// withStrictFacts runs the catalog as deployed: agent-declared facts never
// auto-approve.
func withStrictFacts(o *options) { o.strictFacts = true }

func setup(t *testing.T, opts ...func(*options)) *env {
	t.Helper()
	o := options{providerTimeout: 5 * time.Second, waitTimeout: 20 * time.Second, listingLag: 300 * time.Millisecond,
		postCallBackoff: mt.Backoff{Initial: 100 * time.Millisecond, Max: 500 * time.Millisecond}}
	for _, f := range opts {
		f(&o)
	}
	ctx := t.Context()
	if o.catalog == nil {
		o.catalog = tools.DemoCatalogYAML
	}
	if !o.strictFacts {
		var err error
		o.catalog, err = tools.TrustingDeclaredFacts(o.catalog)
		require.NoError(t, err)
	}
	cat, err := tools.Load(o.catalog)
	require.NoError(t, err)
	var (
		st        ledger.Store
		wire      *pgwire.Proxy
		uncounted ledger.Store
		sins      *standin.Set
		taskQueue = "tq-" + randomID()
		session   = "call-" + randomID()
	)
	switch prev := o.restartOf; {
	case prev != nil:
		prev.stop()
		st, sins, taskQueue, session = prev.store, prev.standins, prev.taskQueue, prev.session
	case o.alongside != nil:
		other := o.alongside
		st, sins, taskQueue, session = other.store, other.standins, other.taskQueue, other.session
	case o.countLedger:
		st, wire, uncounted = countedLedger(t)
		sins, err = standin.StartWith(o.standins)
		require.NoError(t, err)
		t.Cleanup(func() { _ = sins.Close() })
		t.Cleanup(func() { deleteSchedules(taskQueue) })
	default:
		// The service runs as the PostgreSQL service role, as in production.
		st = ledgertest.PostgresService(t)
		sins, err = standin.StartWith(o.standins)
		require.NoError(t, err)
		t.Cleanup(func() { _ = sins.Close() })
		t.Cleanup(func() { deleteSchedules(taskQueue) })
	}

	// The API listens before the connectors exist so that Twilio can be
	// given its address for status callbacks, as the daemon does.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	publicURL := "http://" + ln.Addr().String()
	tw, ses := sins.TwilioConfig(), sins.SESConfig()
	tw.Timeout, ses.Timeout = o.providerTimeout, o.providerTimeout
	if !o.noStatusCallbacks {
		tw.StatusCallback = api.TwilioStatusCallbackURL(publicURL)
	}
	conns, err := connectors.NewSet(tw, ses, connectors.HTTPConfig{Services: sins.HTTPServices(), Timeout: o.providerTimeout})
	require.NoError(t, err)

	tc := temporalClient
	switch {
	case o.telemetry != nil:
		tc = telemetryClient(t, o.telemetry)
	case o.interceptors != nil:
		tc = interceptedClient(t, o.interceptors)
	}
	var signaller outbox.Signaller = tc
	if o.signaller != nil {
		signaller = o.signaller(tc)
	}
	logger := slog.New(slog.DiscardHandler)
	if o.logs != nil {
		logger = slog.New(slog.NewJSONHandler(o.logs, nil))
	}
	svc, err := server.StartCore(ctx, server.CoreConfig{
		Store:        st,
		Catalog:      cat,
		Temporal:     tc,
		Connectors:   conns,
		Listener:     ln,
		PublicURL:    publicURL,
		TaskQueue:    taskQueue,
		WaitTimeout:  o.waitTimeout,
		RollbackWait: o.rollbackWait,
		TokenTTL:     o.tokenTTL,
		LeaseTTL:     o.leaseTTL,
		SweepIdle:    o.sweepIdle,
		SweepEvery:   o.sweepEvery,
		ListingLag:   o.listingLag,

		PostCallBackoff: o.postCallBackoff,
		Signaller:       signaller,
		OutboxInterval:  o.outboxInterval,
		Logger:          logger,

		TwilioAuthToken: sins.Twilio.AuthToken(),
		Timeouts:        o.timeouts,
		Transcripts:     o.transcripts,

		Getenv:            o.getenv,
		LoopbackCallbacks: !o.productionCallbacks,
		InsecureCookies:   !o.secureCookies,
		Callbacks:         o.callbacks,
		Codec:             testCodec,
		CodecOrigin:       testUIOrigin,
		CatalogFile:       o.catalogFile.reader(),
		CatalogPoll:       o.catalogPoll,
		Canary:            server.CanaryConfig{Reader: sins.Reader(), Services: sins.HTTPServices()},
		Telemetry:         o.telemetry,
		Throttle:          o.throttle,
	})
	require.NoError(t, err)
	var stopOnce sync.Once
	stop := func() {
		stopOnce.Do(func() {
			stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = svc.Stop(stopCtx)
		})
	}
	t.Cleanup(stop)
	return &env{
		svc: svc,
		t:   t,
		ctx: ctx,
		// Every exchange is checked against api/openapi.yaml.
		agent:     apiclient.New(svc.URL(), tools.DemoAgentKey, apiclient.Options{HTTPClient: openAPIClient(t)}),
		ops:       apiclient.New(svc.URL(), tools.DemoOpsKey, apiclient.Options{HTTPClient: openAPIClient(t)}),
		url:       svc.URL(),
		store:     st,
		standins:  sins,
		temporal:  tc,
		session:   session,
		taskQueue: taskQueue,
		stop:      stop,

		ledgerWire: wire,
		uncounted:  uncounted,
	}
}

// countedLedger opens the service's ledger, as PostgresService does,
// through a relay that counts its work on the wire, and the same ledger
// again beside the relay for the test's own reads.
func countedLedger(t *testing.T) (ledger.Store, *pgwire.Proxy, ledger.Store) {
	t.Helper()
	dsn, role := ledgertest.PostgresServiceDSN(t)
	wire, relayed, err := pgwire.Start(dsn)
	require.NoError(t, err)
	// Registered first, so it runs after the stores have closed.
	t.Cleanup(func() { require.NoError(t, wire.Stop()) })
	st, err := ledger.OpenPostgresService(t.Context(), relayed, role)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })
	uncounted, err := ledger.OpenPostgres(t.Context(), dsn)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, uncounted.Close()) })
	return st, wire, uncounted
}

// deleteSchedules removes the schedules a test's maestro made on the
// Temporal server the package shares, so that finished tests leave no
// timers firing under the ones still running.
func deleteSchedules(taskQueue string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, id := range []string{server.AuditScheduleID(taskQueue), server.SweepScheduleID(taskQueue), server.CanaryScheduleID(taskQueue)} {
		_ = temporalClient.ScheduleClient().GetHandle(ctx, id).Delete(ctx)
	}
}

func randomID() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// key returns an operation key unique to this test.
func (e *env) key(name string) string {
	return fmt.Sprintf("%s:%s", e.session, name)
}

// sessionFacts are what the agent runtime states about every test call.
var sessionFacts = map[string]string{"caller_number": "+14155550100", "tenant_id": "t_100"}

// invoke calls a tool in the test's session.
func (e *env) invoke(tool, key, args string) (apiclient.Response, error) {
	req := invokeRequest(e.session, tool, key, args)
	req.SessionContext = sessionFacts
	return e.agent.Invoke(e.ctx, req)
}

// describeSchedule reads a schedule maestro created. Describing one queries
// its scheduler workflow, which a loaded machine may not answer within one
// RPC's deadline, so it asks again for a while.
func (e *env) describeSchedule(id string) *client.ScheduleDescription {
	e.t.Helper()
	var desc *client.ScheduleDescription
	var err error
	require.Eventually(e.t, func() bool {
		desc, err = e.temporal.ScheduleClient().GetHandle(e.ctx, id).Describe(e.ctx)
		return err == nil
	}, time.Minute, 100*time.Millisecond, "schedule %s exists", id)
	return desc
}
