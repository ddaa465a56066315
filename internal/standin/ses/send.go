package ses

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/mail"
	"slices"
)

const (
	// maxRecipients is SES's per-message limit across To, Cc and Bcc.
	maxRecipients = 50
	// maxRequestBytes is SES v2's message size limit.
	maxRequestBytes = 40 << 20
)

// sendEmailRequest is the subset of SendEmailInput the stand-in acts on;
// the JSON names are the SDK's member names.
type sendEmailRequest struct {
	FromEmailAddress string
	Destination      *struct {
		ToAddresses  []string
		CcAddresses  []string
		BccAddresses []string
	}
	ReplyToAddresses []string
	Content          *struct {
		Simple *struct {
			Subject *textContent
			Body    *struct {
				Text *textContent
				Html *textContent
			}
			Attachments []struct {
				RawContent  []byte // base64 on the wire
				ContentType string
				FileName    string
			}
		}
		Raw *struct {
			Data []byte // base64 on the wire
		}
		Template *struct {
			TemplateName string
			TemplateArn  string
		}
	}
	EmailTags []Tag
}

type textContent struct {
	Data    string
	Charset string
}

// handleSend serves SendEmail. The signature covers the body, so the body is
// read before authentication.
func (s *Server) handleSend(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBytes))
	if err != nil {
		writeError(w, badRequest("Unable to read request body: %v", err))
		return
	}
	if apiErr := s.verify(r, body); apiErr != nil {
		writeError(w, apiErr)
		return
	}
	var req sendEmailRequest
	if err := json.Unmarshal(body, &req); err != nil {
		writeError(w, &apiError{http.StatusBadRequest, "SerializationException", err.Error()})
		return
	}
	email, apiErr := s.buildEmail(req)
	if apiErr != nil {
		writeError(w, apiErr)
		return
	}
	s.store.add(email)
	writeJSON(w, http.StatusOK, map[string]string{"MessageId": email.MessageID})
}

func (s *Server) buildEmail(req sendEmailRequest) (Email, *apiError) {
	c := req.Content
	if c == nil {
		return Email{}, missingMember("content")
	}
	var (
		e      Email
		apiErr *apiError
	)
	switch {
	case countSet(c.Simple != nil, c.Raw != nil, c.Template != nil) != 1:
		return Email{}, badRequest("Exactly one of Simple, Raw or Template content must be specified.")
	case c.Template != nil:
		// The stand-in stores no templates, so every template is unknown.
		name := c.Template.TemplateName
		if name == "" {
			name = c.Template.TemplateArn
		}
		return Email{}, &apiError{http.StatusNotFound, "NotFoundException", "Template " + name + " does not exist."}
	case c.Simple != nil:
		e, apiErr = simpleEmail(req)
	default:
		e, apiErr = rawEmail(req)
	}
	if apiErr != nil {
		return Email{}, apiErr
	}
	if apiErr := checkAddresses(e); apiErr != nil {
		return Email{}, apiErr
	}

	e = e.withEmptyLists()
	now := s.now()
	e.MessageID = newMessageID(now)
	e.At = now.Unix()
	e.Tags = slices.Clone(req.EmailTags)
	return e, nil
}

func simpleEmail(req sendEmailRequest) (Email, *apiError) {
	m := req.Content.Simple
	switch {
	case m.Subject == nil:
		return Email{}, missingMember("content.simple.subject")
	case m.Body == nil:
		return Email{}, missingMember("content.simple.body")
	case m.Subject.Data == "":
		return Email{}, badRequest("Simple content must have a subject.")
	case textOf(m.Body.Text) == "" && textOf(m.Body.Html) == "":
		return Email{}, badRequest("Simple content must have either a HTML or Text body.")
	case req.FromEmailAddress == "":
		return Email{}, badRequest("Missing required field FromEmailAddress.")
	}
	e := Email{
		From:    req.FromEmailAddress,
		ReplyTo: req.ReplyToAddresses,
		Subject: m.Subject.Data,
		Body:    Body{Text: textOf(m.Body.Text), HTML: textOf(m.Body.Html)},
	}
	if d := req.Destination; d != nil {
		e.Destination = Destination{To: d.ToAddresses, Cc: d.CcAddresses, Bcc: d.BccAddresses}
	}
	for _, a := range m.Attachments {
		contentType := a.ContentType
		if contentType == "" {
			contentType = "application/octet-stream"
		}
		e.Attachments = append(e.Attachments, Attachment{
			Content:     base64.StdEncoding.EncodeToString(a.RawContent),
			ContentType: contentType,
			Filename:    a.FileName,
			Size:        len(a.RawContent),
		})
	}
	return e, nil
}

// rawEmail reads the MIME message. Request fields win over headers, as with
// SES: Destination is the envelope, and FromEmailAddress the sender.
func rawEmail(req sendEmailRequest) (Email, *apiError) {
	data := req.Content.Raw.Data
	if len(data) == 0 {
		return Email{}, missingMember("content.raw.data")
	}
	m, err := parseRaw(data)
	if err != nil {
		return Email{}, badRequest("%v", err)
	}
	e := Email{
		From:        m.from,
		ReplyTo:     m.replyTo,
		Destination: Destination{To: m.to, Cc: m.cc, Bcc: m.bcc},
		Subject:     m.subject,
		Body:        m.body,
		Attachments: m.attachments,
	}
	if req.FromEmailAddress != "" {
		e.From = req.FromEmailAddress
	}
	if len(req.ReplyToAddresses) > 0 {
		e.ReplyTo = req.ReplyToAddresses
	}
	if d := req.Destination; d != nil && len(d.ToAddresses)+len(d.CcAddresses)+len(d.BccAddresses) > 0 {
		e.Destination = Destination{To: d.ToAddresses, Cc: d.CcAddresses, Bcc: d.BccAddresses}
	}
	if e.From == "" {
		return Email{}, badRequest("Missing required header 'From'.")
	}
	if e.Subject == "" {
		e.Subject = "(no subject)"
	}
	return e, nil
}

// checkAddresses validates every address and the recipient count.
func checkAddresses(e Email) *apiError {
	d := e.Destination
	n := len(d.To) + len(d.Cc) + len(d.Bcc)
	switch {
	case n == 0:
		return badRequest("Destination must contain at least one of ToAddresses, CcAddresses or BccAddresses.")
	case n > maxRecipients:
		return badRequest("Recipient count exceeds %d.", maxRecipients)
	}
	for _, list := range [][]string{{e.From}, e.ReplyTo, d.To, d.Cc, d.Bcc} {
		for _, addr := range list {
			if _, err := mail.ParseAddress(addr); err != nil {
				return badRequest("Illegal address: %s", addr)
			}
		}
	}
	return nil
}

func countSet(flags ...bool) int {
	n := 0
	for _, f := range flags {
		if f {
			n++
		}
	}
	return n
}

func textOf(c *textContent) string {
	if c == nil {
		return ""
	}
	return c.Data
}
