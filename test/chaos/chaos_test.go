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
)

// cluster is every process of the run.
type cluster struct {
	t       *testing.T
	dir     string
	bin     string
	env     []string
	apiAddr string

	mu      sync.Mutex
	api     *proc
	workers [workers]*proc

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
	total := 0
	for s := range prof.sessions {
		bySession[s] = plan(prof, s)
		total += len(bySession[s])
	}

	var done atomic.Int64
	loadDone := make(chan struct{})
	chaosDone := make(chan int)
	go func() { chaosDone <- c.chaos(ctx, prof, &done, total, loadDone) }()
	decided := make(chan decisions, 1)
	operatorCtx, stopOperator := context.WithCancel(ctx)
	go func() { decided <- operate(operatorCtx, t, ops) }()

	load := time.Now()
	c.faults.began = load
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
	kills := <-chaosDone
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
	f.Profile, f.Calls, f.Sessions, f.Kills, f.APIRestarts = prof.name, len(all), prof.sessions, kills, 1
	f.LoadSeconds = elapsed.Seconds()
	f.Faults, f.FaultRequests = c.faultEvents(), faultsHit
	f.latencies(all)
	f.print()
	require.NoError(t, f.write(filepath.Join("..", "..", "results", "chaos.json")))
	require.GreaterOrEqual(t, kills, prof.minKills, "worker kills")
}

// startCluster starts Temporal on PostgreSQL, the stand-ins, one API and
// three workers, each its own process, and stops them when the test ends.
func startCluster(t *testing.T) *cluster {
	t.Helper()
	dir := t.TempDir()
	c := &cluster{t: t, dir: dir, bin: build(t, dir, "cmd/worker")}
	evalBin := build(t, dir, "cmd/eval")

	base := os.Getenv("DATABASE_URL")
	if base == "" {
		base = ledgertest.DefaultDatabaseURL
	}
	suffix := randomHex(6)
	pg := devtemporal.Postgres{URL: base, Database: "temporal_chaos_" + suffix, VisibilityDatabase: "temporal_chaos_visibility_" + suffix, Shards: 4}
	t.Cleanup(func() { require.NoError(t, devtemporal.DropPostgres(context.Background(), pg)) })
	port, err := devtemporal.FindFreePort()
	require.NoError(t, err)
	temporal, temporalAddr := startProc(t, dir, "temporal", c.bin, nil, "ready ", nil, "temporal", "-v",
		"--database-url", pg.URL, "--database", pg.Database, "--visibility-database", pg.VisibilityDatabase,
		"--shards", strconv.Itoa(pg.Shards), "--port", strconv.Itoa(port))
	t.Cleanup(temporal.stop)

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
	doc, err = tools.ReplacingDemoKeys(doc, agentKey, opsKey)
	require.NoError(t, err)
	catalog := filepath.Join(dir, "catalog.yaml")
	require.NoError(t, os.WriteFile(catalog, doc, 0o600))

	// A fixed API address, so the restarted API is where clients and
	// Twilio's delivery reports already point.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	c.apiAddr = ln.Addr().String()
	require.NoError(t, ln.Close())

	dsn, role := ledgertest.PostgresServiceDSN(t)
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

	c.api = c.start("api", "api", c.apiAddr)
	for i := range workers {
		c.workers[i] = c.start(fmt.Sprintf("worker-%d", i), "worker", "127.0.0.1:0")
	}
	t.Cleanup(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		if t.Failed() {
			keepLogs(t, filepath.Join("..", "..", "results", "chaos-logs"), append(c.workers[:], c.api, temporal, standins))
		}
		for _, w := range c.workers {
			w.stop()
		}
		c.api.stop()
	})
	return c
}

func (c *cluster) start(name, role, addr string) *proc {
	p, err := c.launch(name, role, addr)
	require.NoError(c.t, err)
	return p
}

func (c *cluster) launch(name, role, addr string) (*proc, error) {
	p, _, err := launch(c.t, c.dir, name, c.bin, append(c.env, "MAESTRO_HTTP_ADDR="+addr), "maestro is serving on ", nil, "--role", role)
	return p, err
}

// restart replaces *p, ended by end, with a new process; on failure it
// reports the error and leaves the ended process in place.
func (c *cluster) restart(p **proc, end func(*proc), name, role, addr string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	end(*p)
	next, err := c.launch(name, role, addr)
	if err != nil {
		c.t.Errorf("restarting %s: %v", name, err)
		return false
	}
	*p = next
	return true
}

// chaos kills a random worker with SIGKILL and restarts it, over and over,
// until the calls are done and it has made prof.minKills kills; once a
// third of the calls are done it restarts the API process. It returns the
// number of kills.
func (c *cluster) chaos(ctx context.Context, prof profile, done *atomic.Int64, total int, loadDone <-chan struct{}) int {
	kills, apiRestarted := 0, false
	burst, err := firstBurst()
	if err != nil {
		c.t.Error(err)
		return kills
	}
	for {
		select {
		case <-loadDone:
		default:
			c.bursts(ctx, &burst)
		}
		select {
		case <-loadDone:
			if kills >= prof.minKills {
				return kills
			}
		case <-ctx.Done():
			return kills
		case <-time.After(prof.killEvery):
		}
		if !apiRestarted && done.Load() >= int64(total/3) {
			apiRestarted = true
			if !c.restart(&c.api, (*proc).stop, "api", "api", c.apiAddr) {
				return kills
			}
			c.t.Logf("API restarted after %d calls", done.Load())
		}
		i := randomInt(workers)
		if !c.restart(&c.workers[i], (*proc).kill, fmt.Sprintf("worker-%d", i), "worker", "127.0.0.1:0") {
			return kills
		}
		kills++
	}
}

// bursts makes every stand-in fail in the next way, one burst each.
func (c *cluster) bursts(ctx context.Context, burst *int) {
	for range burstTargets {
		if ev, err := c.providerBurst(ctx, *burst); err != nil {
			c.t.Errorf("provider burst: %v", err)
		} else {
			c.t.Logf("burst %d: %s at %s: %s", *burst, ev.Kind, ev.Target, ev.Detail)
		}
		*burst++
	}
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
