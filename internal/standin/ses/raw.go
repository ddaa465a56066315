package ses

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"strings"
)

// rawMessage is what the stand-in reads out of a Content.Raw MIME message.
type rawMessage struct {
	from        string
	replyTo     []string
	to, cc, bcc []string
	subject     string
	body        Body
	attachments []Attachment
}

// headerGetter is satisfied by both mail.Header and textproto.MIMEHeader.
type headerGetter interface {
	Get(key string) string
}

func parseRaw(data []byte) (rawMessage, error) {
	msg, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		return rawMessage{}, fmt.Errorf("error reading raw message: %w", err)
	}
	var m rawMessage
	if m.from, err = firstAddress(msg.Header, "From"); err != nil {
		return rawMessage{}, err
	}
	for _, h := range []struct {
		key string
		dst *[]string
	}{{"Reply-To", &m.replyTo}, {"To", &m.to}, {"Cc", &m.cc}, {"Bcc", &m.bcc}} {
		if *h.dst, err = addresses(msg.Header, h.key); err != nil {
			return rawMessage{}, err
		}
	}
	var dec mime.WordDecoder
	if m.subject, err = dec.DecodeHeader(msg.Header.Get("Subject")); err != nil {
		return rawMessage{}, fmt.Errorf("error decoding Subject: %w", err)
	}
	if err := m.readPart(msg.Header, msg.Body); err != nil {
		return rawMessage{}, err
	}
	return m, nil
}

// readPart walks one MIME part: multiparts recurse, the first text/plain
// and text/html parts become the body, and anything else is an attachment.
func (m *rawMessage) readPart(header headerGetter, body io.Reader) error {
	mediaType, params, err := mime.ParseMediaType(header.Get("Content-Type"))
	if err != nil {
		mediaType, params = "text/plain", nil
	}
	if strings.HasPrefix(mediaType, "multipart/") {
		parts := multipart.NewReader(body, params["boundary"])
		for {
			part, err := parts.NextRawPart()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("error reading MIME part: %w", err)
			}
			if err := m.readPart(part.Header, part); err != nil {
				return err
			}
		}
	}

	content, err := io.ReadAll(transferDecoder(header.Get("Content-Transfer-Encoding"), body))
	if err != nil {
		return fmt.Errorf("error decoding %s part: %w", mediaType, err)
	}
	disposition, dispParams, _ := mime.ParseMediaType(header.Get("Content-Disposition"))
	filename := dispParams["filename"]
	if filename == "" {
		filename = params["name"]
	}
	switch {
	case disposition != "attachment" && filename == "" && mediaType == "text/plain" && m.body.Text == "":
		m.body.Text = string(content)
	case disposition != "attachment" && filename == "" && mediaType == "text/html" && m.body.HTML == "":
		m.body.HTML = string(content)
	default:
		m.attachments = append(m.attachments, Attachment{
			Content:     base64.StdEncoding.EncodeToString(content),
			ContentType: mediaType,
			Filename:    filename,
			Size:        len(content),
		})
	}
	return nil
}

func transferDecoder(encoding string, r io.Reader) io.Reader {
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "base64":
		return base64.NewDecoder(base64.StdEncoding, r)
	case "quoted-printable":
		return quotedprintable.NewReader(r)
	default:
		return r
	}
}

func addresses(h mail.Header, key string) ([]string, error) {
	if h.Get(key) == "" {
		return []string{}, nil
	}
	list, err := h.AddressList(key)
	if err != nil {
		return nil, fmt.Errorf("error parsing %s header: %w", key, err)
	}
	out := make([]string, 0, len(list))
	for _, a := range list {
		out = append(out, formatAddress(a))
	}
	return out, nil
}

func firstAddress(h mail.Header, key string) (string, error) {
	list, err := addresses(h, key)
	if err != nil || len(list) == 0 {
		return "", err
	}
	return list[0], nil
}

// formatAddress renders "Name <addr>" without the quoting mail.Address adds,
// matching how the emulator presents parsed addresses.
func formatAddress(a *mail.Address) string {
	if a.Name == "" {
		return a.Address
	}
	return a.Name + " <" + a.Address + ">"
}
