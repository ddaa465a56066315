package ses_test

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/aws/aws-sdk-go-v2/service/sesv2/types"
	"github.com/stretchr/testify/require"
)

// leaseNotice is a typical mailer's output: alternative text and HTML
// parts, one quoted-printable and one base64, plus an attachment.
var leaseNotice = strings.ReplaceAll(`From: "Lease Office" <office@example.com>
To: Maria Lopez <maria.lopez@example.com>, james.chen@example.com
Cc: manager@example.com
Reply-To: repairs@example.com
Subject: =?UTF-8?Q?Lease_renewal_=E2=80=94_unit_4B?=
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="outer"

--outer
Content-Type: multipart/alternative; boundary="inner"

--inner
Content-Type: text/plain; charset=utf-8
Content-Transfer-Encoding: quoted-printable

Your lease renews on June 1 =E2=80=94 no action needed.
--inner
Content-Type: text/html; charset=utf-8
Content-Transfer-Encoding: base64

PHA+WW91ciBsZWFzZSByZW5ld3MuPC9wPg==
--inner--
--outer
Content-Type: application/pdf; name="lease.pdf"
Content-Disposition: attachment; filename="lease.pdf"
Content-Transfer-Encoding: base64

JVBERi0xLjc=
--outer--
`, "\n", "\r\n")

func TestSendRawEmail(t *testing.T) {
	t.Parallel()
	f := newFixture(t)

	_, err := f.client().SendEmail(t.Context(), &sesv2.SendEmailInput{
		Content: &types.EmailContent{Raw: &types.RawMessage{Data: []byte(leaseNotice)}},
	})
	require.NoError(t, err)

	emails := f.readStore(t, "")
	require.Len(t, emails, 1)
	e := emails[0]
	require.Equal(t, "Lease Office <office@example.com>", e["from"])
	require.Equal(t, []any{"repairs@example.com"}, e["replyTo"])
	require.Equal(t, map[string]any{
		"to":  []any{"Maria Lopez <maria.lopez@example.com>", "james.chen@example.com"},
		"cc":  []any{"manager@example.com"},
		"bcc": []any{},
	}, e["destination"])
	require.Equal(t, "Lease renewal — unit 4B", e["subject"])
	require.Equal(t, map[string]any{
		"text": "Your lease renews on June 1 — no action needed.",
		"html": "<p>Your lease renews.</p>",
	}, e["body"])
	require.Equal(t, []any{map[string]any{
		"content": "JVBERi0xLjc=", "contentType": "application/pdf", "filename": "lease.pdf", "size": float64(8),
	}}, e["attachments"])
}

func TestSendRawEmailRequestFieldsWin(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	plain := "From: office@example.com\r\nTo: header@example.com\r\n\r\nHello"

	_, err := f.client().SendEmail(t.Context(), &sesv2.SendEmailInput{
		FromEmailAddress: strPtr("bounce@example.com"),
		Destination:      &types.Destination{BccAddresses: []string{"envelope@example.com"}},
		Content:          &types.EmailContent{Raw: &types.RawMessage{Data: []byte(plain)}},
	})
	require.NoError(t, err)

	e := f.readStore(t, "")[0]
	require.Equal(t, "bounce@example.com", e["from"])
	require.Equal(t, map[string]any{"to": []any{}, "cc": []any{}, "bcc": []any{"envelope@example.com"}}, e["destination"])
	require.Equal(t, "(no subject)", e["subject"], "as the emulator labels it")
	require.Equal(t, map[string]any{"text": "Hello"}, e["body"])
}

func TestSendRawEmailValidation(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.client(noRetries)
	cases := map[string]string{
		"To: a@example.com\r\n\r\nno sender":           "Missing required header 'From'.",
		"From: office@example.com\r\n\r\nno recipient": "Destination must contain at least one of",
		"From: office@example.com\r\nTo: <<<\r\n\r\nx": "error parsing To header",
	}
	for raw, message := range cases {
		_, err := c.SendEmail(t.Context(), &sesv2.SendEmailInput{
			Content: &types.EmailContent{Raw: &types.RawMessage{Data: []byte(raw)}},
		})
		var bad *types.BadRequestException
		require.ErrorAs(t, err, &bad, raw)
		require.Contains(t, bad.ErrorMessage(), message, raw)
	}
	require.Zero(t, f.standin.CountEmails())
}

func strPtr(s string) *string { return &s }
