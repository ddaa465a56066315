// Package canary is maestro's reality canary: on a schedule it fires each
// tool marked for it through the real connectors at the providers' own
// test facilities (Twilio's test credentials and magic numbers, the SES
// mailbox simulator, a service's sandbox), reads each effect back from the
// provider, never from maestro's ledger, and records what it found.
//
// Canary calls are not agents' calls: they belong to no session, leave no
// invocation, effect or undo entry, carry idempotency keys of their own
// ("canary/<run>/<tool>"), and never move money (the catalog refuses a
// canary on a money tool), so neither the audit nor an agent sees them.
package canary

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"

	"github.com/maestro-run/maestro/internal/connectors"
	"github.com/maestro-run/maestro/internal/ledger"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/receipts"
	"github.com/maestro-run/maestro/receipts/readback"
	"github.com/maestro-run/maestro/tools"
	"github.com/maestro-run/maestro/workflows"
)

// Config is what a Runner needs.
type Config struct {
	// Catalog names the tools to fire: those with a canary block.
	Catalog tools.Source
	// Connectors perform the canary calls: the configured providers' own,
	// pointed at their test facilities.
	Connectors connectors.Set
	// Reader reads effects back from the providers.
	Reader *readback.Reader
	// Services are the HTTP services an http tool's effect is read back
	// from. Optional: default none, so an http canary fails to read back.
	Services map[string]connectors.HTTPService
	// Store records the results.
	Store ledger.Store
}

func (c Config) validate() error {
	if c.Catalog == nil || c.Connectors == nil || c.Reader == nil || c.Store == nil {
		return errors.New("canary: catalog, connectors, reader and store are required")
	}
	return nil
}

// Runner runs the canary.
type Runner struct{ cfg Config }

// New returns a Runner.
func New(cfg Config) (*Runner, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Runner{cfg: cfg}, nil
}

// Register registers the canary activity on a worker.
func (r *Runner) Register(w worker.ActivityRegistry) {
	w.RegisterActivityWithOptions(r.Activity, activity.RegisterOptions{Name: workflows.ActivityCanary})
}

// Activity is the canary workflow's activity: one run, recorded.
func (r *Runner) Activity(ctx context.Context, runID string) (workflows.CanaryRun, error) {
	results, err := r.Run(ctx, runID)
	res := workflows.CanaryRun{RunID: runID, Tools: len(results)}
	for _, x := range results {
		if x.OK {
			res.Passed++
		}
	}
	return res, err
}

// Run fires every canary tool of the current catalog, reads each effect
// back and records the results under runID, which it returns.
func (r *Runner) Run(ctx context.Context, runID string) ([]ledger.CanaryResult, error) {
	if runID == "" {
		return nil, errors.New("error running the canary: a run ID is required")
	}
	var results []ledger.CanaryResult
	for _, t := range r.cfg.Catalog.Load().Tools() {
		if t.Canary == nil {
			continue
		}
		res := ledger.CanaryResult{RunID: runID, Tool: t.Name}
		receipt, detail, err := r.fire(ctx, runID, t)
		res.Receipt = receipt
		res.OK = err == nil
		res.Detail = detail
		if err != nil {
			res.Detail = err.Error()
		}
		results = append(results, res)
	}
	if len(results) == 0 {
		return nil, nil
	}
	if err := r.cfg.Store.CanaryRecord(ctx, results); err != nil {
		return results, fmt.Errorf("error running the canary: %w", err)
	}
	return results, nil
}

// fire makes one tool's canary call and reads its effect back.
func (r *Runner) fire(ctx context.Context, runID string, t *tools.Tool) (*mt.Receipt, string, error) {
	args, err := tools.DecodeArgs(t.Canary.Args)
	if err != nil {
		return nil, "", fmt.Errorf("error decoding the canary arguments: %w", err)
	}
	key := "canary/" + runID + "/" + t.Name
	rendered, err := t.RenderCall(tools.TemplateData{Args: args, OperationKey: key})
	if err != nil {
		return nil, "", fmt.Errorf("error rendering the canary call: %w", err)
	}
	call := connectors.Call{Kind: rendered.Kind, IdempotencyKey: key, Settings: rendered.Settings, Body: rendered.Body}
	out, err := r.cfg.Connectors.Do(ctx, call)
	if err != nil {
		return nil, "", fmt.Errorf("the provider refused the canary call: %w", err)
	}
	if err := receipts.Check(out.Receipt, t.ReceiptFields); err != nil {
		return out.Receipt, "", fmt.Errorf("the provider's answer proves nothing: %w", err)
	}
	detail, err := r.readBack(ctx, t, call, out.Receipt, args)
	return out.Receipt, detail, err
}

// readBack asks the provider for the effect the receipt names and checks
// it is the one the canary asked for.
func (r *Runner) readBack(ctx context.Context, t *tools.Tool, call connectors.Call, receipt *mt.Receipt, args map[string]any) (string, error) {
	s := call.Settings
	switch t.Connector.Kind {
	case mt.KindTwilioSMS:
		return r.sms(receipt.Fields[mt.ReceiptMessageSID], s["to"], s["body"])
	case mt.KindSESEmail:
		return r.email(ctx, receipt.Fields[mt.ReceiptMessageID], s["to"], s["subject"])
	case mt.KindPage:
		sms, smsErr := r.sms(receipt.Fields[mt.ReceiptMessageSID], s["sms_to"], s["sms_body"])
		email, emailErr := r.email(ctx, receipt.Fields[mt.ReceiptMessageID], s["email_to"], s["email_subject"])
		return sms + "; " + email, errors.Join(smsErr, emailErr)
	case mt.KindHTTP:
		return r.resource(ctx, t, s["service"], receipt, args)
	}
	return "", fmt.Errorf("no way to read back a %s effect", t.Connector.Kind)
}

// twilioFailed are the statuses of a message that will never arrive.
var twilioFailed = []string{"failed", "undelivered", "canceled"}

func (r *Runner) sms(sid, to, body string) (string, error) {
	if sid == "" {
		return "", errors.New("the receipt has no message SID to read back")
	}
	ev, err := r.cfg.Reader.TwilioMessage(sid)
	if err != nil {
		return "", err
	}
	var problems []string
	if got := ev.Detail["to"]; got != to {
		problems = append(problems, fmt.Sprintf("Twilio has message %s addressed to %q, not %q", sid, got, to))
	}
	if got := ev.Detail["body"]; got != body {
		problems = append(problems, fmt.Sprintf("Twilio has message %s reading %q, not %q", sid, got, body))
	}
	if slices.Contains(twilioFailed, ev.Status) {
		problems = append(problems, fmt.Sprintf("Twilio reports message %s %s", sid, ev.Status))
	}
	if err := joined(problems); err != nil {
		return "", err
	}
	return fmt.Sprintf("Twilio has message %s to %s, %s", sid, to, ev.Status), nil
}

func (r *Runner) email(ctx context.Context, id, to, subject string) (string, error) {
	switch {
	case id == "":
		return "", errors.New("the receipt has no message ID to read back")
	case r.cfg.Reader.SESStoreURL == "":
		return "", fmt.Errorf("SES accepted message %s, but no store of sent mail is configured to read it back from (MAESTRO_CANARY_SES_STORE_URL)", id)
	}
	ev, err := r.cfg.Reader.SESMessage(ctx, id)
	if err != nil {
		return "", err
	}
	var stored struct {
		Destination struct {
			To []string `json:"to"`
		} `json:"destination"`
		Subject string `json:"subject"`
	}
	if err := remarshal(ev.Detail, &stored); err != nil {
		return "", fmt.Errorf("error decoding stored email %s: %w", id, err)
	}
	var problems []string
	if !slices.Contains(stored.Destination.To, to) {
		problems = append(problems, fmt.Sprintf("SES stored email %s for %v, not %q", id, stored.Destination.To, to))
	}
	if stored.Subject != subject {
		problems = append(problems, fmt.Sprintf("SES stored email %s with subject %q, not %q", id, stored.Subject, subject))
	}
	if err := joined(problems); err != nil {
		return "", err
	}
	return fmt.Sprintf("SES stored email %s to %s", id, to), nil
}

func (r *Runner) resource(ctx context.Context, t *tools.Tool, service string, receipt *mt.Receipt, args map[string]any) (string, error) {
	svc, ok := r.cfg.Services[service]
	if !ok {
		return "", fmt.Errorf("HTTP service %q is not configured", service)
	}
	path, err := t.Canary.Read.Execute(tools.TemplateData{Args: args, Receipt: receipt})
	if err != nil {
		return "", fmt.Errorf("error rendering canary.read: %w", err)
	}
	ev, err := r.cfg.Reader.HTTPResource(ctx, svc.BaseURL, svc.Token, path)
	if err != nil {
		return "", err
	}
	if ev.ID != receipt.ID {
		return "", fmt.Errorf("GET %s answered with id %q, not the receipt's %q", path, ev.ID, receipt.ID)
	}
	return fmt.Sprintf("GET %s found %s", path, ev.ID), nil
}

func joined(problems []string) error {
	if len(problems) == 0 {
		return nil
	}
	return errors.New(strings.Join(problems, "; "))
}

func remarshal(in, out any) error {
	raw, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, out)
}
