package faults_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/devtemporal/devtemporaltest"
	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/ledger/ledgertest"
	mt "github.com/maestro-run/maestro/maestrotype"
)

const (
	// outage is how long the ledger's connections keep being dropped.
	outage = 3 * time.Second
	// settleWithin bounds how long calls may take to finish once the
	// outage is over: longer than an operation key's default 30 s lease,
	// which an attempt whose connection died may leave behind.
	settleWithin = 45 * time.Second
	// retriesAfterOutage is how many times the agent retries a call
	// refused during or just after the outage.
	retriesAfterOutage = 3
)

// TestPostgresDropLosesNothing kills every PostgreSQL connection the
// ledger holds, again and again for several seconds, while an agent keeps
// making calls, and proves that once the outage ends no call is
// half-recorded: each one the API accepted reaches a terminal state with
// an observation, each one it refused was refused with a clear reason,
// no effect is left claimed, and the effects at the receivers are exactly
// the ones with a receipt in the ledger.
func TestPostgresDropLosesNothing(t *testing.T) {
	t.Parallel()
	// Temporal starts, and its command builds, outside the test's budget.
	ts, err := devtemporaltest.Start()
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, ts.Stop()) })
	began := time.Now()
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()

	// The ledger's connections carry an application name of their own, so
	// the fault hits this test's ledger and nothing else on the server.
	adminDSN := ledgertest.PostgresDSN(t)
	app := "maestro-faults-" + randomID()
	dsn, err := withApplicationName(adminDSN, app)
	require.NoError(t, err)
	st, err := ledger.OpenPostgres(ctx, dsn)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	require.NoError(t, st.Migrate(ctx))
	admin, err := pgx.Connect(ctx, adminDSN)
	require.NoError(t, err)
	t.Cleanup(func() { _ = admin.Close(context.Background()) })

	tc, err := client.DialContext(ctx, testCodec.Apply(client.Options{HostPort: ts.HostPort(), Namespace: devtemporaltest.Namespace}))
	require.NoError(t, err)
	t.Cleanup(tc.Close)
	m := startMaestro(t, config{
		store:           st,
		temporal:        tc,
		providerTimeout: 5 * time.Second,
		waitTimeout:     10 * time.Second,
	})

	// The outage: every connection of ours is terminated as soon as the
	// pool opens it, until the deadline.
	stormOver := make(chan struct{})
	var terminated int
	go func() {
		defer close(stormOver)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for deadline := time.Now().Add(outage); time.Now().Before(deadline); {
			var n int
			err := admin.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1`, app).Scan(&n)
			if err != nil {
				return // the test's context ended; the checks below report it
			}
			terminated += n
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()

	// The agent keeps calling through the outage: reads, texts and work
	// orders, each under its own operation key. Texts differ in body so
	// that no reconciliation could mistake one for another.
	type call struct {
		tool string
		req  apitype.InvokeRequest
		resp apiclient.Response
		err  error
	}
	var (
		calls []*call
		wg    sync.WaitGroup
		pace  = time.NewTicker(100 * time.Millisecond)
	)
	defer pace.Stop()
	for i := 0; ; i++ {
		c := &call{}
		var args string
		switch i % 3 {
		case 0:
			c.tool, args = "lookup_tenant", `{"tenant_id":"t_100"}`
		case 1:
			c.tool, args = "send_sms", fmt.Sprintf(`{"to":"%s","body":"Update %d on your repair."}`, callerNumber, i)
		case 2:
			c.tool, args = "create_work_order", workOrderArgs
		}
		calls = append(calls, c)
		c.req = m.request(c.tool, fmt.Sprintf("call-%d", i), args)
		wg.Go(func() { c.resp, c.err = m.agent.Invoke(ctx, c.req) })
		select {
		case <-stormOver:
		case <-pace.C:
			continue
		}
		break
	}
	wg.Wait()
	require.NoError(t, ctx.Err(), "the outage outlived the test")
	require.Positive(t, terminated, "the outage must have dropped connections, or the test proves nothing")

	// A refused call was refused clearly: a status, a code and a reason.
	// The agent then does what a refusal during an outage asks of it and
	// retries under the same operation key, which is always safe; that
	// retry is what finishes a call whose admission the outage cut short
	// after the ledger recorded it.
	// A pooled connection the outage killed while it sat idle is found
	// dead only when next used, so the first retry may itself be refused
	// the same clear way; the agent retries a few times, as it is told.
	var refused int
	for range retriesAfterOutage {
		for _, c := range calls {
			if c.err == nil {
				continue
			}
			refused++
			var apiErr *apiclient.Error
			require.True(t, errors.As(c.err, &apiErr), "%s: an answer from maestro, not a broken exchange: %v", c.tool, c.err)
			require.NotEmpty(t, apiErr.Observation.Code, "%s: %v", c.tool, c.err)
			require.NotEmpty(t, apiErr.Observation.Summary, "%s: %v", c.tool, c.err)
			wg.Go(func() { c.resp, c.err = m.agent.Invoke(ctx, c.req) })
		}
		wg.Wait()
	}
	for _, c := range calls {
		require.NoError(t, c.err, "%s %s: the retry after the outage is admitted", c.tool, c.req.OperationKey)
	}
	// With the service's own lease and retry settings, every call must
	// settle well within a lease's lifetime after the outage.
	settleCtx, settleCancel := context.WithTimeout(ctx, settleWithin)
	defer settleCancel()
	for _, c := range calls {
		final, err := m.agent.Wait(settleCtx, c.resp.InvocationID)
		if err != nil {
			eff, _ := st.EffectGet(ctx, c.req.OperationKey)
			t.Fatalf("%s %s never finished: invocation %s, effect %s (lease until %s): %v",
				c.tool, c.req.OperationKey, final.State, eff.Status, eff.LeaseExpiresAt.Format(time.RFC3339), err)
		}
		require.True(t, final.State.Terminal(), "%s %s: %s", c.tool, c.req.OperationKey, final.State)
	}

	// The ledger agrees: every invocation it holds is terminal, with an
	// observation for the agent.
	ledger, err := st.InvocationListBySession(ctx, m.session)
	require.NoError(t, err)
	require.Len(t, ledger, len(calls), "one invocation per operation key")
	succeeded := map[string]int{}
	for _, inv := range ledger {
		require.True(t, inv.State.Terminal(), "%s %s is still %s", inv.Tool, inv.OperationKey, inv.State)
		require.NotNil(t, inv.Observation, "%s %s ended %s without an observation", inv.Tool, inv.OperationKey, inv.State)
		require.NotEmpty(t, inv.Observation.Summary, "%s %s", inv.Tool, inv.OperationKey)
		if inv.State == mt.InvocationSucceeded {
			succeeded[inv.Tool]++
		}
	}

	// Nothing is left claimed, and the receivers saw exactly the effects
	// the ledger holds receipts for.
	claimed, err := st.EffectListByStatus(ctx, mt.EffectInProgress, 100)
	require.NoError(t, err)
	require.Empty(t, claimed, "no effect is left in progress once every invocation has finished")
	require.Equal(t, succeeded["send_sms"], m.standins.Twilio.CountMessages(), "texts at Twilio equal texts with receipts")
	require.Equal(t, succeeded["create_work_order"], m.standins.Sandbox.CountWorkOrders(), "work orders at the sandbox equal work orders with receipts")

	t.Logf("%d connections dropped over %s; %d calls: %d refused with a reason and retried, %d succeeded (%d texts, %d work orders); %s in all",
		terminated, outage, len(calls), refused, sum(succeeded), succeeded["send_sms"], succeeded["create_work_order"],
		time.Since(began).Round(time.Millisecond))
}

// withApplicationName sets application_name in a connection string in
// either of the forms pgx accepts.
func withApplicationName(dsn, name string) (string, error) {
	if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
		return dsn + " application_name=" + name, nil
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "", err
	}
	q := u.Query()
	q.Set("application_name", name)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
