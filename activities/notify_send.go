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
type notification struct {
	ApprovalID string `json:"approval_id"`
	Stage      string `json:"stage"`
	Tool       string `json:"tool"`
	// Summary is the arguments the catalog says to show (the amount, the
	// recipient), or a compact summary of all of them.
	Summary string `json:"summary"`
	Reason  string `json:"reason"`
	URL     string `json:"url,omitempty"`
	// Text is the whole message as one line; a Slack incoming webhook
	// shows it as it is.
	Text string `json:"text"`
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
		Tool:       req.Tool,
		Summary:    argsSummary(req.Args, fields),
		Reason:     req.Reason,
	}
	if publicURL != "" {
		n.URL = ApprovalURL(publicURL, req.ID)
	}
	head := "Approval needed"
	if stage == workflows.StageEscalated {
		head = "Still undecided, escalated"
	}
	n.Text = fmt.Sprintf("maestro: %s: %s (%s). %s.", head, n.Tool, n.Summary, n.Reason)
	if n.URL != "" {
		n.Text += " Decide: " + n.URL
	} else {
		n.Text += " Request " + req.ID + "."
	}
	return n
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
		parts = append(parts, f+"="+s)
	}
	out := strings.Join(parts, ", ")
	if r := []rune(out); len(r) > summaryLimit {
		out = string(r[:summaryLimit-1]) + "…"
	}
	if out == "" {
		out = "no arguments"
	}
	return out
}

func smsCall(key string, r tools.Recipient, n notification) connectors.Call {
	return connectors.Call{Kind: mt.KindTwilioSMS, IdempotencyKey: key, Settings: map[string]string{"to": r.Channel.To, "body": n.Text}}
}

// sendNotification sends n to r and returns the provider's receipt.
func (a *Activities) sendNotification(ctx context.Context, key string, r tools.Recipient, n notification) (*mt.Receipt, error) {
	var call connectors.Call
	switch r.Channel.Kind {
	case tools.ChannelSMS:
		call = smsCall(key, r, n)
	case tools.ChannelEmail:
		subject := "Approval needed: " + n.Tool
		if n.Stage == workflows.StageEscalated {
			subject = "Escalated, still undecided: " + n.Tool
		}
		call = connectors.Call{Kind: mt.KindSESEmail, IdempotencyKey: key, Settings: map[string]string{
			"to": r.Channel.To, "subject": subject, "body": n.Text,
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
