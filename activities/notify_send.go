package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/maestro-run/maestro/internal/callback"
	"github.com/maestro-run/maestro/internal/connectors"
	"github.com/maestro-run/maestro/internal/ledger"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
	"github.com/maestro-run/maestro/workflows"
)

// ApprovalURL is where an operator decides a request in the console.
func ApprovalURL(publicURL, approvalID string) string {
	return strings.TrimRight(publicURL, "/") + "/console/approvals/" + approvalID
}

// notification is what an approver is told, in every channel's shape.
// Agent-chosen text reaches each channel only through notify_text.go.
type notification struct {
	ApprovalID string `json:"approval_id"`
	Stage      string `json:"stage"`
	Tool       string `json:"tool"`
	// Summary is the arguments the catalog says to show (the amount, the
	// recipient), or a compact summary of all of them: on one line and
	// with any link in them defanged.
	Summary string `json:"summary"`
	Reason  string `json:"reason"`
	URL     string `json:"url,omitempty"`
	// Text is the whole message as one line, escaped for Slack's mrkdwn:
	// a Slack incoming webhook shows it as it is, with the "Decide" link
	// its only link.
	Text string `json:"text"`

	// head opens the message; id names the request when there is no link.
	head, id string
}

// summaryLimit keeps a text message to one segment or two.
const summaryLimit = 120

func notifyMessage(req ledger.ApprovalRequest, tool *tools.Tool, stage, publicURL string) notification {
	var fields []string
	if tool != nil && tool.Approval != nil {
		fields = tool.Approval.NotifyFields
	}
	n := notification{
		ApprovalID: req.ID,
		Stage:      stage,
		Tool:       agentText(req.Tool),
		Summary:    argsSummary(req.Args, fields),
		Reason:     agentText(req.Reason),
		head:       "Approval needed",
		id:         req.ID,
	}
	if publicURL != "" {
		n.URL = ApprovalURL(publicURL, req.ID)
	}
	if stage == workflows.StageEscalated {
		n.head = "Still undecided, escalated"
	}
	n.Text = n.line(n.Summary, slackEscape)
	return n
}

// line is the message as one line with the given summary, each text part
// passed through esc; the link is maestro's own and is left whole.
func (n notification) line(summary string, esc func(string) string) string {
	s := esc(fmt.Sprintf("maestro: %s: %s (%s). %s.", n.head, n.Tool, summary, n.Reason))
	if n.URL != "" {
		return s + " Decide: " + n.URL
	}
	return s + esc(" Request "+n.id+".")
}

// asIs passes plain-text channels' text through unescaped.
func asIs(s string) string { return s }

// plain is the message for a plain-text channel: an email's body.
func (n notification) plain() string {
	return n.line(n.Summary, asIs)
}

// sms is the message as a text: at most smsLimit characters, the summary
// shortened to fit so the link stays whole.
func (n notification) sms() string {
	text := n.plain()
	over := len([]rune(text)) - smsLimit
	if over <= 0 {
		return text
	}
	return n.line(cutRunes(n.Summary, len([]rune(n.Summary))-over), asIs)
}

// subject is an email's subject: one line, so nothing in it can start a
// header of its own.
func (n notification) subject() string {
	if n.Stage == workflows.StageEscalated {
		return "Escalated, still undecided: " + n.Tool
	}
	return "Approval needed: " + n.Tool
}

// argsSummary shows the named arguments, in order, or every top-level
// argument sorted by name, as name=value, cut to summaryLimit.
func argsSummary(raw json.RawMessage, fields []string) string {
	var args map[string]any
	if json.Unmarshal(raw, &args) != nil {
		return "arguments unreadable"
	}
	if len(fields) == 0 {
		for k := range args {
			fields = append(fields, k)
		}
		sort.Strings(fields)
	}
	parts := make([]string, 0, len(fields))
	for _, f := range fields {
		v, ok := args[f]
		if !ok {
			continue
		}
		var s string
		switch v := v.(type) {
		case string:
			s = v
		default:
			b, _ := json.Marshal(v)
			s = string(b)
		}
		parts = append(parts, agentText(f+"="+s))
	}
	out := cutRunes(strings.Join(parts, ", "), summaryLimit)
	if out == "" {
		out = "no arguments"
	}
	return out
}

func smsCall(key string, r tools.Recipient, n notification) connectors.Call {
	return connectors.Call{Kind: mt.KindTwilioSMS, IdempotencyKey: key, Settings: map[string]string{"to": r.Channel.To, "body": n.sms()}}
}

// sendNotification sends n to r and returns the provider's receipt.
func (a *Activities) sendNotification(ctx context.Context, key string, r tools.Recipient, n notification) (*mt.Receipt, error) {
	var call connectors.Call
	switch r.Channel.Kind {
	case tools.ChannelSMS:
		call = smsCall(key, r, n)
	case tools.ChannelEmail:
		call = connectors.Call{Kind: mt.KindSESEmail, IdempotencyKey: key, Settings: map[string]string{
			"to": r.Channel.To, "subject": n.subject(), "body": n.plain(),
		}}
	case tools.ChannelWebhook:
		return a.postWebhook(ctx, key, r.Channel, n)
	default:
		return nil, &connectors.Error{Class: connectors.ClassInvalid, Provider: "notify", Message: fmt.Sprintf("unknown channel %q", r.Channel.Kind)}
	}
	res, err := a.cfg.Connectors.Do(ctx, call)
	if err != nil {
		return nil, err
	}
	if res.Receipt == nil {
		return nil, &connectors.Error{Class: connectors.ClassUnknown, Provider: string(call.Kind), Message: "the provider answered without a receipt"}
	}
	return res.Receipt, nil
}

// Webhook headers, besides callback.SignatureHeader.
const (
	// NotifyKeyHeader carries the notification's operation key, so a
	// receiver that keeps keys can drop a repeat.
	NotifyKeyHeader = "Idempotency-Key"
)

// postWebhook posts n as JSON, signed as maestro signs agent callbacks:
// HMAC-SHA256 over "<unix seconds>.<body>" with the secret the channel's
// environment variable holds (see callback.Verify).
func (a *Activities) postWebhook(ctx context.Context, key string, ch tools.Channel, n notification) (*mt.Receipt, error) {
	secret := a.cfg.Getenv(ch.SecretEnv)
	if secret == "" {
		return nil, &connectors.Error{Class: connectors.ClassInvalid, Provider: "webhook", Message: "environment variable " + ch.SecretEnv + " is not set"}
	}
	body, err := json.Marshal(n)
	if err != nil {
		return nil, &connectors.Error{Class: connectors.ClassInvalid, Provider: "webhook", Err: err}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, ch.To, bytes.NewReader(body))
	if err != nil {
		return nil, &connectors.Error{Class: connectors.ClassInvalid, Provider: "webhook", Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(callback.SignatureHeader, callback.Sign([]byte(secret), time.Now(), body))
	req.Header.Set(NotifyKeyHeader, key)
	resp, err := a.cfg.WebhookClient.Do(req)
	if err != nil {
		class := connectors.ClassUnknown
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			class = connectors.ClassUnreachable
		}
		return nil, &connectors.Error{Class: class, Provider: "webhook", Err: err}
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	status := strconv.Itoa(resp.StatusCode)
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		// The client followed nothing: a webhook that moved is fixed in the
		// catalog, never by sending the signed body where the answer points.
		a.cfg.Logger.Warn("approver webhook answered with a redirect; not followed, the notification failed",
			"status", resp.StatusCode, "host", req.URL.Host, "location", resp.Header.Get("Location"), "key", key)
		return nil, &connectors.Error{Class: connectors.ClassRejected, Provider: "webhook", HTTPStatus: resp.StatusCode,
			Message: fmt.Sprintf("answered %d redirecting to %q; redirects are not followed: put the final URL in the catalog", resp.StatusCode, resp.Header.Get("Location"))}
	case resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusRequestTimeout && resp.StatusCode != http.StatusTooManyRequests:
		return nil, &connectors.Error{Class: connectors.ClassRejected, Provider: "webhook", HTTPStatus: resp.StatusCode, Message: strings.TrimSpace(string(answer))}
	default:
		return nil, &connectors.Error{Class: connectors.ClassUnknown, Provider: "webhook", HTTPStatus: resp.StatusCode, Message: strings.TrimSpace(string(answer))}
	}
	id := webhookResponseID(resp, answer)
	return &mt.Receipt{
		Provider: "webhook",
		ID:       id,
		Status:   status,
		Fields:   map[string]string{"http_status": status, "response_id": id},
		IssuedAt: time.Now().UTC(),
	}, nil
}

// webhookResponseID is the receiver's own name for what it received: a
// request ID header, or an "id" in a JSON answer; else the HTTP status
// and answer, which is all a Slack webhook says ("ok").
func webhookResponseID(resp *http.Response, answer []byte) string {
	for _, h := range []string{"X-Request-Id", "X-Slack-Req-Id", "X-Message-Id"} {
		if v := resp.Header.Get(h); v != "" {
			return v
		}
	}
	var obj struct {
		ID any `json:"id"`
	}
	if json.Unmarshal(answer, &obj) == nil && obj.ID != nil {
		return fmt.Sprint(obj.ID)
	}
	text := strings.TrimSpace(string(answer))
	if len(text) > 64 {
		text = text[:64]
	}
	return strings.TrimSpace(strconv.Itoa(resp.StatusCode) + " " + text)
}
