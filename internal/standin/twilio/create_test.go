package twilio_test

import (
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	openapi "github.com/twilio/twilio-go/rest/api/v2010"

	standin "github.com/maestro-run/maestro/internal/standin/twilio"
)

func TestCreateMessageWithTwilioGo(t *testing.T) {
	t.Parallel()
	f := newFixture(t)

	params := (&openapi.CreateMessageParams{}).
		SetTo(recipient).
		SetFrom(sender).
		SetBody("Your plumber arrives at 3pm.").
		SetStatusCallback("https://example.com/status")
	m, err := f.client(t).Api.CreateMessage(params)
	require.NoError(t, err)

	require.Regexp(t, `^SM[0-9a-f]{32}$`, *m.Sid)
	require.Equal(t, f.standin.AccountSID(), *m.AccountSid)
	require.Equal(t, recipient, *m.To)
	require.Equal(t, sender, *m.From)
	require.Equal(t, "Your plumber arrives at 3pm.", *m.Body)
	require.Equal(t, "queued", *m.Status)
	require.Equal(t, "outbound-api", *m.Direction)
	require.Equal(t, "2010-04-01", *m.ApiVersion)
	require.Equal(t, "1", *m.NumSegments)
	require.Equal(t, "0", *m.NumMedia)
	require.Equal(t, "USD", *m.PriceUnit)
	require.Nil(t, m.Price)
	require.Nil(t, m.DateSent)
	require.Nil(t, m.MessagingServiceSid)
	require.Equal(t, "Wed, 01 May 2024 12:00:00 +0000", *m.DateCreated)
	require.Equal(t, "/2010-04-01/Accounts/"+f.standin.AccountSID()+"/Messages/"+*m.Sid+".json", *m.Uri)

	stored, ok := f.standin.Message(*m.Sid)
	require.True(t, ok)
	require.Equal(t, "https://example.com/status", stored.StatusCallback)
	require.Equal(t, 1, f.standin.CountMessages())
}

func TestCreateMessageWireShape(t *testing.T) {
	t.Parallel()
	f := newFixture(t)

	status, header, body := f.raw(t, http.MethodPost, f.messagesPath(), url.Values{
		"To": {recipient}, "From": {sender}, "Body": {"hello"},
	})
	require.Equal(t, http.StatusCreated, status)
	require.Contains(t, header.Get("Content-Type"), "application/json")

	m := decodeObject(t, body)
	require.Equal(t, []string{
		"account_sid", "api_version", "body", "date_created", "date_sent", "date_updated",
		"direction", "error_code", "error_message", "from", "messaging_service_sid",
		"num_media", "num_segments", "price", "price_unit", "sid", "status",
		"subresource_uris", "to", "uri",
	}, slices.Sorted(maps.Keys(m)))
	for _, key := range []string{"date_sent", "error_code", "error_message", "messaging_service_sid", "price"} {
		require.Contains(t, m, key)
		require.Nil(t, m[key], key)
	}
	require.IsType(t, "", m["num_segments"], "Twilio sends counts as strings")
	require.IsType(t, "", m["num_media"])

	sid := m["sid"].(string)
	base := "/2010-04-01/Accounts/" + f.standin.AccountSID() + "/Messages/" + sid
	require.Equal(t, map[string]any{
		"media":    base + "/Media.json",
		"feedback": base + "/Feedback.json",
	}, m["subresource_uris"])
}

func TestCreateMessageValidation(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.client(t)
	p := func() *openapi.CreateMessageParams { return &openapi.CreateMessageParams{} }

	cases := []struct {
		name    string
		params  *openapi.CreateMessageParams
		code    int
		message string
	}{
		{"missing To", p().SetFrom(sender).SetBody("hi"), 21604, "A 'To' phone number is required."},
		{"To not E.164", p().SetTo("415-555-0100").SetFrom(sender).SetBody("hi"), 21211, "The 'To' number 415-555-0100 is not a valid phone number."},
		{"To without plus", p().SetTo("14155550100").SetFrom(sender).SetBody("hi"), 21211, ""},
		{"To too long", p().SetTo("+1415555010012345").SetFrom(sender).SetBody("hi"), 21211, ""},
		{"missing From and service", p().SetTo(recipient).SetBody("hi"), 21603, "A 'From' phone number is required."},
		{"missing Body and media", p().SetTo(recipient).SetFrom(sender), 21602, "Message body is required."},
		{"Body over 1600 characters", p().SetTo(recipient).SetFrom(sender).SetBody(strings.Repeat("a", 1601)), 21617, ""},
		{"Body over 1600 multibyte characters", p().SetTo(recipient).SetFrom(sender).SetBody(strings.Repeat("é", 1601)), 21617, ""},
		{"media URL not http", p().SetTo(recipient).SetFrom(sender).SetMediaUrl([]string{"ftp://example.com/a.png"}), 21620, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Api.CreateMessage(tc.params)
			restErr := restError(t, err)
			require.Equal(t, tc.code, restErr.Code)
			require.Equal(t, http.StatusBadRequest, restErr.Status)
			require.Equal(t, "https://www.twilio.com/docs/errors/"+itoa(tc.code), restErr.MoreInfo)
			if tc.message != "" {
				require.Equal(t, tc.message, restErr.Message)
			}
		})
	}
	require.Zero(t, f.standin.CountMessages(), "rejected messages are not stored")
}

func TestCreateMessageAtTheLimits(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.client(t)

	m := f.send(t, c, recipient, sender, strings.Repeat("ł", 1600))
	require.Equal(t, "24", *m.NumSegments, "1600 UCS-2 characters at 67 a segment")

	m = f.send(t, c, "whatsapp:"+recipient, "whatsapp:"+sender, "hi")
	require.Equal(t, "whatsapp:"+recipient, *m.To)
}

func TestCreateMessageThroughMessagingService(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const service = "MG11111111111111111111111111111111"

	m, err := f.client(t).Api.CreateMessage((&openapi.CreateMessageParams{}).
		SetTo(recipient).SetMessagingServiceSid(service).SetBody("hi"))
	require.NoError(t, err)
	require.Equal(t, service, *m.MessagingServiceSid)
	require.Nil(t, m.From)
}

func TestCreateMediaOnlyMessage(t *testing.T) {
	t.Parallel()
	f := newFixture(t)

	m, err := f.client(t).Api.CreateMessage((&openapi.CreateMessageParams{}).
		SetTo(recipient).SetFrom(sender).
		SetMediaUrl([]string{"https://example.com/leak.jpg", "https://example.com/meter.png"}))
	require.NoError(t, err)
	require.Equal(t, "2", *m.NumMedia)
	require.Empty(t, *m.Body)

	stored, ok := f.standin.Message(*m.Sid)
	require.True(t, ok)
	require.Equal(t, []string{"https://example.com/leak.jpg", "https://example.com/meter.png"}, stored.MediaURLs)
}

func TestNumSegments(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.client(t)

	cases := map[string]string{
		strings.Repeat("a", 160): "1",
		strings.Repeat("a", 161): "2",
		strings.Repeat("a", 306): "2",
		strings.Repeat("a", 307): "3",
		strings.Repeat("€", 80):  "1", // extension characters cost two septets
		strings.Repeat("€", 81):  "2",
		strings.Repeat("ü", 160): "1", // in the GSM basic set
		strings.Repeat("ł", 70):  "1", // forces UCS-2
		strings.Repeat("ł", 71):  "2",
		strings.Repeat("😀", 35):  "1", // two UTF-16 units each
		strings.Repeat("😀", 36):  "2",
	}
	for body, want := range cases {
		m := f.send(t, c, recipient, sender, body)
		require.Equal(t, want, *m.NumSegments, "%d × %q", len([]rune(body)), []rune(body)[0])
	}
}

func TestCreateDoesNotDeduplicate(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.client(t)

	first := f.send(t, c, recipient, sender, "Rent reminder")
	second := f.send(t, c, recipient, sender, "Rent reminder")
	require.NotEqual(t, *first.Sid, *second.Sid)
	require.Equal(t, 2, f.standin.CountMessages())

	listed, err := c.Api.ListMessage((&openapi.ListMessageParams{}).SetTo(recipient))
	require.NoError(t, err)
	require.Len(t, listed, 2)
}

func TestNewRejectsCredentialsTwilioGoCannotSend(t *testing.T) {
	t.Parallel()
	_, err := standin.New(standin.Options{AuthToken: "not-alphanumeric"})
	require.Error(t, err)
	_, err = standin.New(standin.Options{AccountSID: "AC 123"})
	require.Error(t, err)
}
