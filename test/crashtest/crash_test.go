//go:build crashtest

package crashtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/codec/codectest"
	"github.com/maestro-run/maestro/internal/devtemporal"
	"github.com/maestro-run/maestro/internal/failpoint"
	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/ledger/ledgertest"
	"github.com/maestro-run/maestro/internal/standin"
	"github.com/maestro-run/maestro/internal/standin/fault"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// callerNumber is the caller's own number: the catalog's rule lets an SMS
// to it go out without a human.
const callerNumber = "+14155550100"

// effect is one call the scenario makes, and how to count its effect at
// the receiver.
type effect struct {
	name     string
	tool     string
	args     string
	receiver string
	count    func(*standin.Set) int
}

// effects are one of each kind the seam must hold for: an SMS (Twilio,
// searchable), an email (SES, not searchable), a work order (HTTP with an
// Idempotency-Key) and a refund (money, approved by a human).
var effects = []effect{
	{"sms", "send_sms", `{"to":"` + callerNumber + `","body":"Your technician arrives at 9."}`,
		"twilio", func(s *standin.Set) int { return s.Twilio.CountMessages() }},
	{"email", "email_property_manager", `{"tenant_id":"t_100","summary":"The heating in unit 4B is out."}`,
		"ses", func(s *standin.Set) int { return s.SES.CountEmails() }},
	{"work order", "create_work_order", `{"tenant_id":"t_100","category":"hvac","description":"No heat","priority":"urgent"}`,
		"sandbox", func(s *standin.Set) int { return s.Sandbox.CountWorkOrders() }},
	{"refund", "issue_refund", `{"tenant_id":"t_100","amount_cents":2500,"reason":"Duplicate payment"}`,
		"sandbox", func(s *standin.Set) int { return s.Sandbox.CountRefunds() }},
}

// outcome is what one scenario found for one effect.
type outcome struct {
	atSeam  int    // at the receiver when the worker died
	final   int    // at the receiver once every invocation finished
	settled string // how the ledger settled it
}

// harness is what both scenarios share: the worker binary and a Temporal
// server that outlives every worker.
type harness struct {
	bin      string
	temporal string
	catalog  string
	// codecKeys is MAESTRO_CODEC_KEYS for every worker of the test: a
	// restarted worker must decrypt what the armed one wrote.
	codecKeys string
}

// The catalog's keys in place of the demo keys.
const (
	agentKey = "crashtest-agent-key"
	opsKey   = "crashtest-ops-key"
)

// newHarness builds the failpoint worker and starts a Temporal server for
// the test's lifetime.
func newHarness(t *testing.T) *harness {
	t.Helper()
	h := &harness{bin: buildWorker(t), catalog: filepath.Join(t.TempDir(), "catalog.yaml"), codecKeys: codectest.Env("crashtest")}
	// The stand-ins sign no session facts; the SMS rule rests on the ones
	// the test states.
	doc, err := tools.TrustingDeclaredFacts(tools.DemoCatalogYAML)
	require.NoError(t, err)
	// Each scenario sends its refund, which waits for approval, together
	// with the session's other writes.
	doc, err = tools.AllowingWritesWhileAwaiting(doc)
	require.NoError(t, err)
	// The worker runs outside dev mode, which refuses the demo keys.
	doc, err = tools.ReplacingDemoKeys(doc, agentKey, opsKey)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(h.catalog, doc, 0o600))
	srv, err := devtemporal.StartOnFreePort(t.Context(), devtemporal.Config{
		DataDir: t.TempDir(), Logger: slog.New(slog.DiscardHandler),
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Stop() })
	h.temporal = srv.HostPort()
	return h
}

func TestCrashAtTheSeam(t *testing.T) {
	start := time.Now()
	h := newHarness(t)

	// The scenarios share the Temporal server on task queues of their own,
	// and run side by side: each spends most of its time waiting for
	// Temporal to notice that the killed worker's attempts will never
	// finish.
	var safe, unsafe, answer5xx map[string]outcome
	t.Run("scenarios", func(t *testing.T) {
		t.Run("with reconciliation", func(t *testing.T) {
			t.Parallel()
			safe = h.run(t, seamAfterProvider, false)
		})
		t.Run("without reconciliation or keys", func(t *testing.T) {
			t.Parallel()
			unsafe = h.run(t, seamAfterProvider, true)
		})
		t.Run("provider answered 5xx after the effect", func(t *testing.T) {
			t.Parallel()
			answer5xx = h.run(t, seamAfter5xx, false)
		})
	})
	if t.Failed() {
		return
	}
	printTable(safe, unsafe, time.Since(start))
	print5xxTable(answer5xx)
	for _, e := range effects {
		require.Equal(t, 1, safe[e.name].final, "%s: exactly one effect at %s with reconciliation", e.name, e.receiver)
		require.Equal(t, 2, unsafe[e.name].final, "%s: the control run must duplicate, or the test proves nothing", e.name)
		require.Equal(t, 1, answer5xx[e.name].final, "%s: exactly one effect at %s after a 5xx and a kill", e.name, e.receiver)
	}
}

// seam is where a scenario kills the worker, and what the providers do
// to get it there.
type seam struct {
	// failpoint is armed in the first worker.
	failpoint string
	// arm sets the stand-ins' faults before any call is made.
	arm func(t *testing.T, s *standin.Set)
}

// seamAfterProvider: every provider acts and answers, and the worker dies
// before the ledger records the answer.
var seamAfterProvider = seam{failpoint: failpoint.AfterProvider, arm: func(*testing.T, *standin.Set) {}}

// seamAfter5xx: every provider acts and then answers with a 5xx, as a
// provider whose front end fails after its back end queued the effect
// does; the worker dies as the error comes back, before it reconciles or
// records anything. A retry that believed the 5xx would do it all again.
var seamAfter5xx = seam{failpoint: failpoint.AfterProviderError, arm: func(t *testing.T, s *standin.Set) {
	for _, f := range []struct {
		inj  *fault.Injector
		rule fault.Rule
	}{
		{s.Twilio.Faults(), fault.Rule{Action: fault.Fail, Status: http.StatusInternalServerError, Phase: fault.AfterEffect, Method: http.MethodPost}},
		{s.SES.Faults(), fault.Rule{Action: fault.Fail, Status: http.StatusServiceUnavailable, Phase: fault.AfterEffect, Method: http.MethodPost}},
		{s.Sandbox.Faults(), fault.Rule{Action: fault.Fail, Status: http.StatusBadGateway, Phase: fault.AfterEffect, Method: http.MethodPost, Path: "/v1/work_orders"}},
		{s.Sandbox.Faults(), fault.Rule{Action: fault.Fail, Status: http.StatusInternalServerError, Phase: fault.AfterEffect, Method: http.MethodPost, Path: "/v1/refunds"}},
	} {
		require.NoError(t, f.inj.Add(f.rule))
	}
}}

// run plays the scenario once: arm the failpoint, fire every call, watch
// the worker die at the seam, restart it without the failpoint, let every
// invocation finish (resolving what waits for a human, as ops would), and
// count at the receivers.
func (h *harness) run(t *testing.T, at seam, unsafe bool) map[string]outcome {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	sins, err := standin.Start()
	require.NoError(t, err)
	t.Cleanup(func() { _ = sins.Close() })
	at.arm(t, sins)
	dsn := ledgertest.PostgresDSN(t)
	session := "crash-" + randomHex()
	env := h.env(sins, dsn, "tq-"+session, unsafe)
	key := func(e effect) string { return session + ":" + strings.ReplaceAll(e.name, " ", "-") }
	request := func(e effect) apitype.InvokeRequest {
		return apitype.InvokeRequest{
			SessionID: session, Tool: e.tool, OperationKey: key(e), Args: json.RawMessage(e.args),
			SessionContext: map[string]string{"caller_number": callerNumber, "tenant_id": "t_100"},
		}
	}

	// Armed: the process dies once all four calls reach the seam.
	args := []string{"--temporal", h.temporal}
	armed := slices.Concat(env, []string{"MAESTRO_FAILPOINT=" + at.failpoint, fmt.Sprintf("MAESTRO_FAILPOINT_HITS=%d", len(effects))})
	w := startWorker(t, h.bin, "armed", args, armed)
	agent := apiclient.New(w.url, agentKey, apiclient.Options{})
	ops := apiclient.New(w.url, opsKey, apiclient.Options{})
	var inFlight sync.WaitGroup
	for _, e := range effects {
		if e.tool == "issue_refund" {
			pending, err := agent.Invoke(ctx, request(e))
			require.NoError(t, err)
			require.NotEmpty(t, pending.ApprovalID, "a refund waits for a human")
			_, err = ops.Approve(ctx, pending.ApprovalID, "duplicate payment confirmed")
			require.NoError(t, err)
			continue
		}
		// These calls block until the worker dies under them; their
		// errors are the point.
		inFlight.Go(func() { _, _ = agent.Invoke(ctx, request(e)) })
	}
	w.waitKilled(time.Minute)
	inFlight.Wait()

	// At the seam: every provider acted, and the ledger knows of none of it.
	ledger, err := ledger.OpenPostgres(ctx, dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ledger.Close() })
	out := map[string]outcome{}
	for _, e := range effects {
		eff, err := ledger.EffectGet(ctx, key(e))
		require.NoError(t, err, e.name)
		require.Equal(t, mt.EffectInProgress, eff.Status, "%s: killed before the ledger settled it", e.name)
		out[e.name] = outcome{atSeam: e.count(sins)}
		require.Equal(t, 1, out[e.name].atSeam, "%s: the provider accepted it before the kill", e.name)
	}

	// Restarted without the failpoint. The agent retries each call with
	// its operation key, which is always safe, and waits for the outcome.
	w = startWorker(t, h.bin, "restarted", args, env)
	agent = apiclient.New(w.url, agentKey, apiclient.Options{})
	ops = apiclient.New(w.url, opsKey, apiclient.Options{})
	finals := make([]apiclient.Response, len(effects))
	var finishing sync.WaitGroup
	errs := make([]error, len(effects))
	for i, e := range effects {
		finishing.Go(func() {
			resp, err := agent.Invoke(ctx, request(e))
			if err == nil {
				resp, err = agent.Wait(ctx, resp.InvocationID)
			}
			finals[i], errs[i] = resp, err
		})
	}
	finishing.Wait()
	for i, e := range effects {
		require.NoError(t, errs[i], e.name)
	}

	// What reconciliation cannot settle waits for ops: here the email and
	// the refund. The harness plays the operator, checking the receiver's
	// records as a person would check the provider's console.
	held, err := ops.Reconciliations(ctx)
	require.NoError(t, err)
	heldKeys := []string{}
	for _, r := range held.Reconciliations {
		heldKeys = append(heldKeys, r.OperationKey)
	}
	for i, e := range effects {
		if finals[i].State != mt.InvocationNeedsReconciliation {
			continue
		}
		require.False(t, unsafe, "%s: nothing is held when reconciliation is off", e.name)
		require.Contains(t, heldKeys, key(e), "%s: held for a human and listed for ops", e.name)
		require.Equal(t, 1, e.count(sins), "%s: the operator finds it at the receiver", e.name)
		_, err := ops.ResolveReconciliation(ctx, key(e), apitype.OutcomeDelivered, "found once in the "+e.receiver+" records")
		require.NoError(t, err, e.name)
		finals[i], err = agent.Invocation(ctx, finals[i].InvocationID)
		require.NoError(t, err, e.name)
	}

	for i, e := range effects {
		require.Equal(t, mt.InvocationSucceeded, finals[i].State, "%s: %+v", e.name, finals[i].Observation)
		o := out[e.name]
		o.final = e.count(sins)
		o.settled = h.settled(ctx, t, ops, key(e), unsafe)
		out[e.name] = o
	}
	return out
}

// settled says how the ledger settled a key, from its reconciliation log.
func (h *harness) settled(ctx context.Context, t *testing.T, ops *apiclient.Client, key string, unsafe bool) string {
	if unsafe {
		return "sent again"
	}
	r, err := ops.Reconciliation(ctx, key)
	require.NoError(t, err)
	kinds := []string{}
	for _, e := range r.Events {
		kinds = append(kinds, e.Kind)
	}
	switch {
	case slices.Contains(kinds, "adopted"):
		return "found at the provider, " + r.Receipt.ID + " adopted"
	case slices.Contains(kinds, "replayed"):
		return "replayed under its Idempotency-Key"
	case slices.Contains(kinds, "delivered"):
		return "held, then attested by " + r.Receipt.Fields["attested_by"]
	}
	return strings.Join(kinds, ", ")
}

// env is the worker's whole environment: production mode with this
// scenario's task queue, ledger and stand-ins. Nothing is inherited, so no
// setting of the machine running the test can leak into the worker.
func (h *harness) env(sins *standin.Set, dsn, taskQueue string, unsafe bool) []string {
	tw, ses, sandbox := sins.TwilioConfig(), sins.SESConfig(), sins.HTTPServices()[standin.SandboxService]
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + os.Getenv("HOME"),
		"MAESTRO_TASK_QUEUE=" + taskQueue,
		"DATABASE_URL=" + dsn,
		"MAESTRO_CATALOG=" + h.catalog,
		"MAESTRO_HTTP_ADDR=127.0.0.1:0",
		"TWILIO_BASE_URL=" + tw.BaseURL,
		"TWILIO_ACCOUNT_SID=" + tw.AccountSID,
		"TWILIO_AUTH_TOKEN=" + tw.AuthToken,
		"TWILIO_FROM=" + tw.From,
		"SES_ENDPOINT=" + ses.Endpoint,
		"SES_REGION=" + ses.Region,
		"AWS_ACCESS_KEY_ID=" + ses.AccessKeyID,
		"AWS_SECRET_ACCESS_KEY=" + ses.SecretAccessKey,
		"SES_FROM=" + ses.From,
		"MAESTRO_HTTP_SERVICE_SANDBOX_URL=" + sandbox.BaseURL,
		"MAESTRO_HTTP_SERVICE_SANDBOX_TOKEN=" + sandbox.Token,
		"MAESTRO_CODEC_KEYS=" + h.codecKeys,
	}
	if unsafe {
		env = append(env, "MAESTRO_UNSAFE_NO_LEDGER=1")
	}
	return env
}

func printTable(safe, unsafe map[string]outcome, took time.Duration) {
	fmt.Printf("\nCrash at the seam: the worker was killed with SIGKILL after each provider accepted\n")
	fmt.Printf("its effect and before the ledger recorded it, then restarted. Effects counted at\n")
	fmt.Printf("the receivers (the provider stand-ins' own records):\n\n")
	fmt.Printf("  %-11s %-9s %-8s %-20s %-18s %s\n", "effect", "receiver", "at kill", "with reconciliation", "without (control)", "how it settled")
	for _, e := range effects {
		fmt.Printf("  %-11s %-9s %-8d %-20d %-18d %s\n", e.name, e.receiver, safe[e.name].atSeam, safe[e.name].final, unsafe[e.name].final, safe[e.name].settled)
	}
	fmt.Printf("\n  with reconciliation: exactly one of each; without it every retry duplicated (%s)\n\n", took.Round(time.Second))
}

func print5xxTable(out map[string]outcome) {
	fmt.Printf("Crash after a 5xx: each provider performed the effect and answered 5xx; the worker\n")
	fmt.Printf("was killed with SIGKILL as the error came back, then restarted:\n\n")
	fmt.Printf("  %-11s %-9s %-8s %-7s %s\n", "effect", "receiver", "at kill", "final", "how it settled")
	for _, e := range effects {
		fmt.Printf("  %-11s %-9s %-8d %-7d %s\n", e.name, e.receiver, out[e.name].atSeam, out[e.name].final, out[e.name].settled)
	}
	fmt.Printf("\n  exactly one of each: no 5xx was taken to mean that nothing happened\n\n")
}

func randomHex() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
