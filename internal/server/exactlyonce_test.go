package server_test

import (
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/internal/standin/fault"
	mt "github.com/maestro-run/maestro/maestrotype"
)

const pageArgs = `{"reason":"No heat in unit 4B","urgency":"urgent","callback_number":"+14155550100"}`

func TestSameKeySameArgsReturnsTheStoredResultWithoutASecondEffect(t *testing.T) {
	t.Parallel()
	e := setup(t)

	first, err := e.invoke("escalate_to_human", e.key("page"), pageArgs)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, first.State)
	// Same logical arguments, different key order and spacing.
	again, err := e.invoke("escalate_to_human", e.key("page"),
		`{ "urgency":"urgent", "callback_number":"+14155550100", "reason":"No heat in unit 4B" }`)
	require.NoError(t, err)
	require.Equal(t, first.InvocationID, again.InvocationID)
	require.Equal(t, first.Observation, again.Observation)
	require.Equal(t, 1, e.standins.Twilio.CountMessages())
	require.Equal(t, 1, e.standins.SES.CountEmails())
}

func TestSameKeyOtherArgsIsRefusedAndRunsNothing(t *testing.T) {
	t.Parallel()
	e := setup(t)

	_, err := e.invoke("escalate_to_human", e.key("page"), pageArgs)
	require.NoError(t, err)
	_, err = e.invoke("escalate_to_human", e.key("page"), `{"reason":"Other","urgency":"routine","callback_number":"+14155550100"}`)
	requireRefusal(t, err, http.StatusConflict, mt.CodeKeyReused)
	_, err = e.invoke("lookup_tenant", e.key("page"), `{"tenant_id":"t_100"}`)
	requireRefusal(t, err, http.StatusConflict, mt.CodeKeyReused)
	require.Equal(t, 1, e.standins.Twilio.CountMessages(), "only the first call's effect")
}

func TestConcurrentDuplicatesMakeOneEffect(t *testing.T) {
	t.Parallel()
	e := setup(t)

	const callers = 8
	var wg sync.WaitGroup
	results := make([]apiclient.Response, callers)
	errs := make([]error, callers)
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A 503 asks the agent to retry under the same key, which a
			// loaded test machine can make happen; an agent does so.
			for range 3 {
				results[i], errs[i] = e.invoke("create_work_order", e.key("wo"),
					`{"tenant_id":"t_100","category":"hvac","description":"No heat","priority":"urgent"}`)
				var apiErr *apiclient.Error
				if !errors.As(errs[i], &apiErr) || apiErr.StatusCode != http.StatusServiceUnavailable {
					break
				}
			}
		}()
	}
	wg.Wait()
	for i := range callers {
		require.NoError(t, errs[i])
		require.Equal(t, results[0].InvocationID, results[i].InvocationID)
	}
	got, err := e.agent.Wait(e.ctx, results[0].InvocationID)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, got.State, "%+v", got.Observation)
	require.Equal(t, 1, e.standins.Sandbox.CountWorkOrders())
}

func TestProvider5xxIsRetriedToOneEffect(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.standins.Twilio.Faults().FailNext(2, http.StatusServiceUnavailable)

	resp, err := e.invoke("escalate_to_human", e.key("page"), pageArgs)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, resp.State, "%+v", resp.Observation)
	require.Equal(t, 1, e.standins.Twilio.CountMessages())
}

func TestProvider4xxFailsWithoutRetryOrEffect(t *testing.T) {
	t.Parallel()
	e := setup(t)
	require.NoError(t, e.standins.Sandbox.Faults().Add(fault.Rule{Action: fault.Fail, Status: http.StatusBadRequest, Times: 5}))

	resp, err := e.invoke("create_work_order", e.key("wo"),
		`{"tenant_id":"t_100","category":"hvac","description":"No heat","priority":"urgent"}`)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationFailed, resp.State)
	require.Equal(t, mt.CodeProviderRejected, resp.Observation.Code)
	require.Nil(t, resp.Observation.Receipt)
	require.Len(t, e.standins.Sandbox.Faults().Rules(), 1, "one attempt only: 4 of 5 injected failures unused")
	require.Zero(t, e.standins.Sandbox.CountWorkOrders())

	eff, err := e.store.EffectGet(e.ctx, e.key("wo"))
	require.NoError(t, err)
	require.Equal(t, mt.EffectFailed, eff.Status)
}

func TestProviderAuthFailureIsNotRetried(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.standins.Twilio.Faults().FailNext(3, http.StatusUnauthorized)

	resp, err := e.invoke("escalate_to_human", e.key("page"), pageArgs)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationFailed, resp.State)
	require.Zero(t, e.standins.Twilio.CountMessages())
	require.Len(t, e.standins.Twilio.Faults().Rules(), 1, "one attempt only: 2 of 3 injected failures unused")
	// The page's email is a part of its own and went out: the answer
	// says so rather than calling the page failed outright.
	require.Equal(t, mt.CodePartlyDelivered, resp.Observation.Code)
	sms := partsOf(t, resp.Observation)["sms"]
	require.Equal(t, "not_delivered", sms["state"])
	require.Contains(t, sms["error"], "401")
	require.Equal(t, 1, e.standins.SES.CountEmails())
	require.Contains(t, resp.Observation.Wording, e.standins.SES.Emails()[0].MessageID)
}

// TestLostResponseIsReconciledNeverARetry: Twilio sent the page's text and
// its answer was lost. The text part is found at Twilio and adopted, never
// resent; the email part, its own effect, still goes out.
func TestLostResponseIsReconciledNeverARetry(t *testing.T) {
	t.Parallel()
	e := setup(t, func(o *options) { o.providerTimeout = 500 * time.Millisecond })
	// Twilio performs the send, then its answer never arrives.
	require.NoError(t, e.standins.Twilio.Faults().Add(fault.Rule{Action: fault.Hang, Phase: fault.AfterEffect}))
	t.Cleanup(e.standins.Twilio.Faults().Release)

	resp := e.invokeToEnd("escalate_to_human", e.key("page"), pageArgs)
	require.Equal(t, mt.InvocationSucceeded, resp.State, "%+v", resp.Observation)
	require.Equal(t, 1, e.standins.Twilio.CountMessages(), "the provider did act, once")
	require.Equal(t, 1, e.standins.SES.CountEmails())
	require.Equal(t, e.standins.Twilio.Messages()[0].SID, resp.Observation.Receipt.Fields["message_sid"])
	require.Equal(t, []string{"adopted"}, e.reconciliationKinds(e.key("page")+"#sms"))

	again, err := e.invoke("escalate_to_human", e.key("page"), pageArgs)
	require.NoError(t, err)
	require.Equal(t, mt.InvocationSucceeded, again.State)
	require.Equal(t, 1, e.standins.Twilio.CountMessages(), "never blindly retried")
	require.Equal(t, 1, e.standins.SES.CountEmails())
}
