package twilio_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	openapi "github.com/twilio/twilio-go/rest/api/v2010"
)

func TestWrongCredentialsAreRejected(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cases := map[string][2]string{
		"wrong token":   {f.standin.AccountSID(), "wrongtoken"},
		"wrong account": {"AC11111111111111111111111111111111", f.standin.AuthToken()},
	}
	for name, creds := range cases {
		t.Run(name, func(t *testing.T) {
			c := f.clientWith(t, creds[0], creds[1], nil)
			_, err := c.Api.CreateMessage((&openapi.CreateMessageParams{}).SetTo(recipient).SetFrom(sender).SetBody("hi"))
			restErr := restError(t, err)
			require.Equal(t, 20003, restErr.Code)
			require.Equal(t, "Authenticate", restErr.Message)
			require.Equal(t, "https://www.twilio.com/docs/errors/20003", restErr.MoreInfo)
			require.Equal(t, http.StatusUnauthorized, restErr.Status)
		})
	}
	require.Zero(t, f.standin.CountMessages())
}

func TestMissingCredentialsAreRejected(t *testing.T) {
	t.Parallel()
	f := newFixture(t)

	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, f.srv.URL+f.messagesPath(), nil)
	require.NoError(t, err)
	resp, err := f.srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	require.Equal(t, `Basic realm="Twilio API"`, resp.Header.Get("WWW-Authenticate"))

	var body map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	require.Equal(t, map[string]any{
		"code":      float64(20003),
		"message":   "Authenticate",
		"more_info": "https://www.twilio.com/docs/errors/20003",
		"status":    float64(401),
	}, body)
}

func TestOtherAccountInPathIsNotFound(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const other = "AC22222222222222222222222222222222"

	_, err := f.client(t).Api.CreateMessage((&openapi.CreateMessageParams{}).
		SetPathAccountSid(other).SetTo(recipient).SetFrom(sender).SetBody("hi"))
	restErr := restError(t, err)
	require.Equal(t, 20404, restErr.Code)
	require.Equal(t, http.StatusNotFound, restErr.Status)
	require.Contains(t, restErr.Message, other)

	_, err = f.client(t).Api.ListMessage((&openapi.ListMessageParams{}).SetPathAccountSid(other))
	require.Equal(t, 20404, restError(t, err).Code)
	require.Zero(t, f.standin.CountMessages())
}
