package ses_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/aws/aws-sdk-go-v2/service/sesv2/types"
	"github.com/stretchr/testify/require"

	standin "github.com/maestro-run/maestro/internal/standin/ses"
)

const messageIDPattern = `^01[0-9a-f]{14}-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}-000000$`

func TestSendEmailAndReadBackFromStore(t *testing.T) {
	t.Parallel()
	f := newFixture(t)

	out, err := f.client().SendEmail(t.Context(), &sesv2.SendEmailInput{
		FromEmailAddress: aws.String(office),
		Destination: &types.Destination{
			ToAddresses:  []string{tenant},
			CcAddresses:  []string{"manager@example.com"},
			BccAddresses: []string{"audit@example.com"},
		},
		ReplyToAddresses: []string{"repairs@example.com"},
		Content: &types.EmailContent{Simple: &types.Message{
			Subject: &types.Content{Data: aws.String("Work order WO-1 scheduled")},
			Body: &types.Body{
				Text: &types.Content{Data: aws.String("A plumber visits Friday.")},
				Html: &types.Content{Data: aws.String("<p>A plumber visits <b>Friday</b>.</p>")},
			},
		}},
		EmailTags: []types.MessageTag{{Name: aws.String("ledger_id"), Value: aws.String("L-42")}},
	})
	require.NoError(t, err)
	require.Regexp(t, messageIDPattern, *out.MessageId)

	emails := f.readStore(t, "")
	require.Len(t, emails, 1)
	got, err := json.Marshal(emails[0])
	require.NoError(t, err)
	require.JSONEq(t, fmt.Sprintf(`{
		"messageId": %q,
		"from": "office@example.com",
		"replyTo": ["repairs@example.com"],
		"destination": {"to": ["maria.lopez@example.com"], "cc": ["manager@example.com"], "bcc": ["audit@example.com"]},
		"subject": "Work order WO-1 scheduled",
		"body": {"text": "A plumber visits Friday.", "html": "<p>A plumber visits <b>Friday</b>.</p>"},
		"attachments": [],
		"at": 1714564800
	}`, *out.MessageId), string(got))

	stored := f.standin.Emails()
	require.Len(t, stored, 1)
	require.Equal(t, []standin.Tag{{Name: "ledger_id", Value: "L-42"}}, stored[0].Tags)
	require.Equal(t, 1, f.standin.CountEmails())
}

func TestStoreMatchesEmulatorForTextOnlyMail(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	_, err := f.client().SendEmail(t.Context(), simpleInput())
	require.NoError(t, err)

	status, body := f.get(t, "/store")
	require.Equal(t, http.StatusOK, status)
	var raw struct {
		Emails []json.RawMessage `json:"emails"`
	}
	require.NoError(t, json.Unmarshal(body, &raw))
	require.Len(t, raw.Emails, 1)
	var email map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw.Emails[0], &email))
	require.JSONEq(t, `{"text":"Water is off 9-11am."}`, string(email["body"]), "absent parts are omitted, not null")
	require.JSONEq(t, `{"to":["maria.lopez@example.com"],"cc":[],"bcc":[]}`, string(email["destination"]))
	require.JSONEq(t, `[]`, string(email["replyTo"]))
}

func TestSendEmailWithAttachments(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	in := simpleInput()
	in.Content.Simple.Attachments = []types.Attachment{
		{FileName: aws.String("lease.pdf"), ContentType: aws.String("application/pdf"), RawContent: []byte("%PDF-1.7")},
		{FileName: aws.String("notes.bin"), RawContent: []byte{0, 1, 2}},
	}
	_, err := f.client().SendEmail(t.Context(), in)
	require.NoError(t, err)

	emails := f.readStore(t, "")
	require.Equal(t, []any{
		map[string]any{"content": "JVBERi0xLjc=", "contentType": "application/pdf", "filename": "lease.pdf", "size": float64(8)},
		map[string]any{"content": "AAEC", "contentType": "application/octet-stream", "filename": "notes.bin", "size": float64(3)},
	}, emails[0]["attachments"])
}

func TestSendEmailDoesNotDeduplicate(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.client()

	first, err := c.SendEmail(t.Context(), simpleInput())
	require.NoError(t, err)
	second, err := c.SendEmail(t.Context(), simpleInput())
	require.NoError(t, err)
	require.NotEqual(t, *first.MessageId, *second.MessageId)
	require.Len(t, f.readStore(t, ""), 2)
}

func TestSendEmailValidationWithSDK(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	c := f.client(noRetries)

	tooMany := make([]string, 51)
	for i := range tooMany {
		tooMany[i] = fmt.Sprintf("t%d@example.com", i)
	}
	cases := []struct {
		name    string
		mutate  func(*sesv2.SendEmailInput)
		message string
	}{
		{"missing from", func(in *sesv2.SendEmailInput) { in.FromEmailAddress = nil }, "Missing required field FromEmailAddress."},
		{"missing destination", func(in *sesv2.SendEmailInput) { in.Destination = nil }, "Destination must contain at least one of"},
		{"empty destination", func(in *sesv2.SendEmailInput) { in.Destination = &types.Destination{} }, "Destination must contain at least one of"},
		{"too many recipients", func(in *sesv2.SendEmailInput) { in.Destination.ToAddresses = tooMany }, "Recipient count exceeds 50."},
		{"illegal recipient", func(in *sesv2.SendEmailInput) { in.Destination.CcAddresses = []string{"not-an-address"} }, "Illegal address: not-an-address"},
		{"illegal sender", func(in *sesv2.SendEmailInput) { in.FromEmailAddress = aws.String("office@") }, "Illegal address: office@"},
		{"empty body", func(in *sesv2.SendEmailInput) { in.Content.Simple.Body = &types.Body{} }, "Simple content must have either a HTML or Text body."},
		{"empty subject", func(in *sesv2.SendEmailInput) { in.Content.Simple.Subject.Data = aws.String("") }, "Simple content must have a subject."},
		{"simple and raw", func(in *sesv2.SendEmailInput) { in.Content.Raw = &types.RawMessage{Data: []byte("x")} }, "Exactly one of Simple, Raw or Template content must be specified."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := simpleInput()
			tc.mutate(in)
			_, err := c.SendEmail(t.Context(), in)
			var bad *types.BadRequestException
			require.ErrorAs(t, err, &bad)
			require.Contains(t, bad.ErrorMessage(), tc.message)
		})
	}

	in := simpleInput()
	in.Content = &types.EmailContent{Template: &types.Template{TemplateName: aws.String("welcome")}}
	_, err := c.SendEmail(t.Context(), in)
	var notFound *types.NotFoundException
	require.ErrorAs(t, err, &notFound)
	require.Equal(t, "Template welcome does not exist.", notFound.ErrorMessage())

	require.Zero(t, f.standin.CountEmails())
}

func TestSendEmailValidationOfWhatTheSDKWontSend(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cases := []struct {
		body, errorType, message string
	}{
		{`{"FromEmailAddress":"office@example.com","Destination":{"ToAddresses":["a@example.com"]}}`,
			"BadRequestException", "Value null at 'content'"},
		{`{"Content":{"Simple":{"Body":{"Text":{"Data":"x"}}}}}`,
			"BadRequestException", "Value null at 'content.simple.subject'"},
		{`{"Content":{"Raw":{}}}`,
			"BadRequestException", "Value null at 'content.raw.data'"},
		{`{"Content":`, "SerializationException", ""},
	}
	for _, tc := range cases {
		res := f.do(t, f.signedRequest(t, tc.body))
		require.Equal(t, http.StatusBadRequest, res.status, tc.body)
		require.Equal(t, tc.errorType, res.errorType, tc.body)
		require.Contains(t, res.body["message"], tc.message, tc.body)
	}
	require.Zero(t, f.standin.CountEmails())
}

func TestUnknownOperation(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	req := f.signedRequest(t, `{}`)
	req.URL.Path = "/v2/email/outbound-bulk-emails"
	res := f.do(t, req)
	require.Equal(t, http.StatusNotFound, res.status)
	require.Equal(t, "UnknownOperationException", res.errorType)
	require.True(t, strings.HasPrefix(res.body["message"].(string), "Unknown"))
}
