//go:build chaos

package chaos

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math/big"
	"net"
	"net/http"
	neturl "net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/internal/codec/codectest"
	"github.com/maestro-run/maestro/internal/devtemporal"
	"github.com/maestro-run/maestro/internal/ledger/ledgertest"
	"github.com/maestro-run/maestro/tools"
)

const (
	agentKey = "chaos-agent-key"
	opsKey   = "chaos-ops-key"
	// standinVars is how many NAME=value lines the stand-ins print.
	standinVars = 12
	workers     = 3
	apis        = 2
)

// cluster is every process of the run and the proxies between them.
type cluster struct {
	t   *testing.T
	dir string
	bin string
	env []string
	// apiAddr is the round-robin proxy's address, the one clients and
	// Twilio's delivery reports use.
	apiAddr string
	apiLB   *rrProxy
	pg      *pgProxy

	temporal *slot
	apis     [apis]*slot
	workers  [workers]*slot

	faults providerFaults
}

func TestChaos(t *testing.T) {
	prof, err := chosenProfile()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), prof.deadline)
	defer cancel()
	began := time.Now()
	c := startCluster(t)
	// Held requests are let go whatever ends the test, or they would hold
	// the stand-ins' shutdown.
	t.Cleanup(func() { _, _ = c.clearFaults(context.Background()) })
	t.Logf("cluster up in %s", time.Since(began).Round(time.Millisecond))

	httpc := &http.Client{
		Timeout:   60 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: prof.inFlight * 2, MaxConnsPerHost: prof.inFlight * 2},
	}
	url := "http://" + c.apiAddr
	agent := apiclient.New(url, agentKey, apiclient.Options{HTTPClient: httpc})
	ops := apiclient.New(url, opsKey, apiclient.Options{HTTPClient: httpc})

	bySession := make([][]*call, prof.sessions)
	for s := range prof.sessions {
		bySession[s] = plan(prof, s)
	}

	var done atomic.Int64
	loadDone := make(chan struct{})
	load := time.Now()
	sched := newSchedule(load)
	chaosDone := make(chan struct{})
	go func() {
		defer close(chaosDone)
		c.chaos(ctx, prof, sched, &done, loadDone)
	}()
	decided := make(chan decisions, 1)
	operatorCtx, stopOperator := context.WithCancel(ctx)
	go func() { decided <- operate(operatorCtx, t, ops) }()

	sem := make(chan struct{}, prof.inFlight)
	var wg sync.WaitGroup
	for s, calls := range bySession {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := runSession(ctx, agent, sem, s, calls, &done); err != nil {
				t.Errorf("session %s: %v", calls[0].session, err)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(load)
	close(loadDone)
	<-chaosDone
	faultsHit, err := c.clearFaults(ctx)
	require.NoError(t, err)
	stopOperator()
	dec := <-decided
	require.False(t, t.Failed(), "sessions failed")

	var all []*call
	for _, calls := range bySession {
		all = append(all, calls...)
	}
	f := verify(ctx, t, c, prof, ops, bySession, dec)
	f.Profile, f.Calls, f.Sessions = prof.name, len(all), prof.sessions
	f.faults(sched)
	f.LoadSeconds = elapsed.Seconds()
	f.FaultRequests = faultsHit
	f.latencies(all)
	f.print()
	require.NoError(t, f.write(filepath.Join("..", "..", "results", "chaos.json")))
	require.GreaterOrEqual(t, f.Kills, prof.workerKills.min, "worker kills")
	require.GreaterOrEqual(t, f.APIKills, prof.apiKills.min, "API kills")
	require.GreaterOrEqual(t, f.PGRestarts, prof.pgRestarts.min, "PostgreSQL restarts")
	require.GreaterOrEqual(t, f.TemporalRestarts, prof.temporalRestarts.min, "Temporal restarts")
	require.GreaterOrEqual(t, f.ProviderBursts, prof.providerBursts.min, "provider fault bursts")
}

// startCluster starts Temporal on PostgreSQL, the stand-ins, two APIs
// behind a round-robin proxy and three workers, each its own process and
// every one reaching PostgreSQL through a proxy the run can restart, and
// stops them when the test ends.
func startCluster(t *testing.T) *cluster {
	t.Helper()
	dir := t.TempDir()
	c := &cluster{t: t, dir: dir, bin: build(t, dir, "cmd/worker")}
	evalBin := build(t, dir, "cmd/eval")

	base := os.Getenv("DATABASE_URL")
	if base == "" {
		base = ledgertest.DefaultDatabaseURL
	}
	target, err := postgresHostPort(base)
	require.NoError(t, err)
	c.pg, err = startPGProxy(target)
	require.NoError(t, err)
	t.Cleanup(c.pg.close)

	suffix := randomHex(6)
	pg := devtemporal.Postgres{URL: base, Database: "temporal_chaos_" + suffix, VisibilityDatabase: "temporal_chaos_visibility_" + suffix, Shards: 4}
	t.Cleanup(func() { require.NoError(t, devtemporal.DropPostgres(context.Background(), pg)) })
	temporalURL, err := c.pg.dsn(pg.URL)
	require.NoError(t, err)
	port, err := devtemporal.FindFreePort()
	require.NoError(t, err)
	temporalAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	c.temporal, err = newSlot("temporal", func() (*proc, error) {
		p, _, err := launch(t, dir, "temporal", c.bin, nil, "ready ", nil, "temporal", "-v",
			"--database-url", temporalURL, "--database", pg.Database, "--visibility-database", pg.VisibilityDatabase,
			"--shards", strconv.Itoa(pg.Shards), "--port", strconv.Itoa(port))
		return p, err
	})
	require.NoError(t, err)
	t.Cleanup(c.temporal.stop)

	sv := newVars(standinVars - 1)
	standins, twilioURL := startProc(t, dir, "standins", evalBin, nil, "TWILIO_BASE_URL=", sv.line, "standins")
	t.Cleanup(standins.stop)
	select {
	case <-sv.done:
	case <-time.After(time.Minute):
		t.Fatal("the stand-ins did not print their endpoints")
	}

	doc, err := tools.TrustingDeclaredFacts(tools.DemoCatalogYAML)
	require.NoError(t, err)
	// The run holds more sessions and waiting refunds at once than the
	// demo agent's caps allow: it measures throughput, not the caps.
	doc, err = tools.LiftingAgentCaps(doc)
	require.NoError(t, err)
	// The run proves every effect happened at most once: a message whose
	// answer a burst lost is held for a human rather than sent again, as
	// the demo catalog's deliver_message opts to (on_unknown: resend).
	doc, err = tools.HoldingOnUnknown(doc)
	require.NoError(t, err)
	doc, err = tools.ReplacingDemoKeys(doc, agentKey, opsKey)
	require.NoError(t, err)
	catalog := filepath.Join(dir, "catalog.yaml")
	require.NoError(t, os.WriteFile(catalog, doc, 0o600))

	// Each API gets a fixed address, so a restarted one is where the proxy
	// already points; the proxy's is where clients and Twilio's delivery
	// reports point.
	var apiAddrs [apis]string
	for i := range apis {
		apiAddrs[i] = freeAddr(t)
	}
	c.apiLB, err = startRRProxy(apiAddrs[:])
	require.NoError(t, err)
	t.Cleanup(c.apiLB.close)
	c.apiAddr = c.apiLB.addr

	dsn, role := ledgertest.PostgresServiceDSN(t)
	dsn, err = c.pg.dsn(dsn)
	require.NoError(t, err)
	c.env = []string{
		"DATABASE_URL=" + dsn,
		"MAESTRO_DATABASE_SERVICE_ROLE=" + role,
		"TEMPORAL_ADDRESS=" + temporalAddr,
		"MAESTRO_CATALOG=" + catalog,
		"MAESTRO_CODEC_KEYS=" + codectest.Env("chaos"),
		"MAESTRO_PUBLIC_URL=http://" + c.apiAddr,
		"MAESTRO_DRAIN_TIMEOUT=10s",
		"TWILIO_BASE_URL=" + twilioURL,
	}
	sv.mu.Lock()
	for name, value := range sv.got {
		c.env = append(c.env, name+"="+value)
	}
	sv.mu.Unlock()

	for i := range apis {
		c.apis[i] = c.start(fmt.Sprintf("api-%d", i), "api", apiAddrs[i])
	}
	for i := range workers {
		c.workers[i] = c.start(fmt.Sprintf("worker-%d", i), "worker", "127.0.0.1:0")
	}
	t.Cleanup(func() {
		maestro := append(c.workers[:], c.apis[:]...)
		if t.Failed() {
			procs := []*proc{c.temporal.current(), standins}
			for _, s := range maestro {
				procs = append(procs, s.current())
			}
			keepLogs(t, filepath.Join("..", "..", "results", "chaos-logs"), procs)
		}
		for _, s := range maestro {
			s.stop()
		}
	})
	return c
}

// start starts a maestro process in the role, serving on addr.
func (c *cluster) start(name, role, addr string) *slot {
	s, err := newSlot(name, func() (*proc, error) {
		p, _, err := launch(c.t, c.dir, name, c.bin, append(c.env, "MAESTRO_HTTP_ADDR="+addr), "maestro is serving on ", nil, "--role", role)
		return p, err
	})
	require.NoError(c.t, err)
	return s
}

// postgresHostPort is the host:port of a postgres:// URL.
func postgresHostPort(dsn string) (string, error) {
	u, err := neturl.Parse(dsn)
	if err != nil {
		return "", fmt.Errorf("error parsing DATABASE_URL: %w", err)
	}
	port := u.Port()
	if port == "" {
		port = "5432"
	}
	return net.JoinHostPort(u.Hostname(), port), nil
}

// freeAddr is a loopback address no one listens on now.
func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().String()
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never returns an error
	return hex.EncodeToString(b)
}

func randomInt(n int) int {
	v, _ := rand.Int(rand.Reader, big.NewInt(int64(n)))
	return int(v.Int64())
}
