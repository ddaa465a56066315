package twilio_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	openapi "github.com/twilio/twilio-go/rest/api/v2010"

	"github.com/maestro-run/maestro/internal/standin/fault"
)

func TestInjectedFailureIsTwilioShaped(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.client(t)
	f.standin.Faults().FailNext(1, http.StatusServiceUnavailable)

	params := (&openapi.CreateMessageParams{}).SetTo(recipient).SetFrom(sender).SetBody("hi")
	_, err := c.Api.CreateMessage(params)
	restErr := restError(t, err)
	require.Equal(t, 20503, restErr.Code)
	require.Equal(t, http.StatusServiceUnavailable, restErr.Status)
	require.Zero(t, f.standin.CountMessages(), "failed before the effect")

	_, err = c.Api.CreateMessage(params)
	require.NoError(t, err)
	require.Equal(t, 1, f.standin.CountMessages())
}

func TestLostResponseStillSendsTheMessage(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	require.NoError(t, f.standin.Faults().Add(fault.Rule{Action: fault.Hang, Phase: fault.AfterEffect}))

	abandon := make(chan struct{})
	impatient := f.clientWith(t, f.standin.AccountSID(), f.standin.AuthToken(), abandonTransport{abandon: abandon})
	errc := make(chan error, 1)
	go func() {
		_, err := impatient.Api.CreateMessage((&openapi.CreateMessageParams{}).SetTo(recipient).SetFrom(sender).SetBody("hi"))
		errc <- err
	}()

	waitHeld(t, f.standin.Faults(), 1)
	close(abandon)
	require.ErrorIs(t, <-errc, context.Canceled)

	// The client never saw a response, yet the message exists and a reader
	// finds it through the API.
	listed, err := f.client(t).Api.ListMessage((&openapi.ListMessageParams{}).SetTo(recipient))
	require.NoError(t, err)
	require.Len(t, listed, 1)
	require.Equal(t, "hi", *listed[0].Body)
}

func TestFaultsThroughAdminEndpoint(t *testing.T) {
	t.Parallel()
	f := newFixture(t)

	resp, err := f.srv.Client().Post(f.srv.URL+fault.AdminPath, "application/json",
		strings.NewReader(`{"action":"fail","status":429,"method":"GET"}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)

	c := f.client(t)
	f.send(t, c, recipient, sender, "POST is not matched")
	_, err = c.Api.ListMessage(nil)
	require.Equal(t, 20429, restError(t, err).Code)

	listed, err := c.Api.ListMessage(nil)
	require.NoError(t, err)
	require.Len(t, listed, 1)
}
