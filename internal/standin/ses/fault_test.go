package ses_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/sesv2/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/standin/fault"
)

func TestSDKRetriesInjectedUnavailability(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.standin.Faults().FailNext(2, http.StatusServiceUnavailable)

	out, err := f.client(retriesWithoutBackoff).SendEmail(t.Context(), simpleInput())
	require.NoError(t, err)
	require.Regexp(t, messageIDPattern, *out.MessageId)
	require.Empty(t, f.standin.Faults().Rules(), "both failures were consumed by retries")
	require.Equal(t, 1, f.standin.CountEmails(), "failures happen before the effect")
}

func TestInjectedErrorsAreTypedBySDK(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.client(noRetries)

	f.standin.Faults().FailNext(1, http.StatusTooManyRequests)
	_, err := c.SendEmail(t.Context(), simpleInput())
	var throttled *types.TooManyRequestsException
	require.ErrorAs(t, err, &throttled)

	f.standin.Faults().FailNext(1, http.StatusInternalServerError)
	_, err = c.SendEmail(t.Context(), simpleInput())
	var apiErr smithy.APIError
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, "InternalFailure", apiErr.ErrorCode())
	require.Equal(t, smithy.FaultUnknown, apiErr.ErrorFault())

	require.Zero(t, f.standin.CountEmails())
}

func TestLostResponseStillSendsTheEmail(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	require.NoError(t, f.standin.Faults().Add(fault.Rule{Action: fault.Hang, Phase: fault.AfterEffect}))

	ctx, giveUp := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := f.client(noRetries).SendEmail(ctx, simpleInput())
		errc <- err
	}()

	waitHeld(t, f.standin.Faults(), 1)
	giveUp()
	err := <-errc
	require.Error(t, err)
	require.True(t, errors.Is(err, context.Canceled), err)

	// The caller saw no MessageId, but the mail went out and the store says so.
	emails := f.readStore(t, "")
	require.Len(t, emails, 1)
	require.Equal(t, "Water shut-off Friday", emails[0]["subject"])
}

func TestFaultsThroughAdminEndpoint(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	resp, err := f.srv.Client().Post(f.srv.URL+fault.AdminPath, "application/json",
		strings.NewReader(`{"action":"fail","status":400}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)

	_, err = f.client(noRetries).SendEmail(t.Context(), simpleInput())
	var bad *types.BadRequestException
	require.ErrorAs(t, err, &bad)
	require.Zero(t, f.standin.CountEmails())

	status, _ := f.get(t, "/store")
	require.Equal(t, http.StatusOK, status, "reads are never faulted")
}
