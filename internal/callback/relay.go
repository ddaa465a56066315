// Package callback tells agents how a call they were told is pending
// ended: it posts the invocation's final observation to the agent's
// callback URL, signed, and records the delivery in the ledger. A callback
// is owed once per invocation (ledger.CallbackOwe); the relay claims it once
// the invocation is final and retries with backoff until the receiver
// answers 2xx once or the attempts run out. For a Vapi agent that pushes
// results, the same debt is paid as an add-message to the live call's
// control URL.
package callback

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/platform"
	"github.com/maestro-run/maestro/internal/sweep"
	mt "github.com/maestro-run/maestro/maestrotype"
)

// Config holds the relay's dependencies.
type Config struct {
	Store ledger.Store
	// Secrets maps an agent ID to its signing secret. A callback for an
	// agent without one is not sent (each attempt fails and is recorded).
	Secrets map[string][]byte
	// VapiPush names the agents whose owed callbacks go to a live Vapi
	// call's control URL as an add-message the model speaks, rather than
	// to a callback URL as a signed observation. Optional.
	VapiPush map[string]bool
	// Client posts the callbacks. Optional: default a client that follows
	// no redirects, bounded by AttemptTimeout.
	Client *http.Client
	// AttemptTimeout bounds one POST. Optional: default 10s.
	AttemptTimeout time.Duration
	// Interval is how often the relay looks for due callbacks. Optional:
	// default 1s.
	Interval time.Duration
	// FirstBackoff is the wait after a first failed attempt; it doubles
	// with each further failure. Optional: default 1s.
	FirstBackoff time.Duration
	// MaxBackoff caps the wait between attempts. Optional: default 10m.
	MaxBackoff time.Duration
	// MaxAttempts is how many attempts are made before the callback is
	// recorded failed. Optional: default 15 (about an hour and a half).
	MaxAttempts int
	// Logger. Optional: default slog.Default().
	Logger *slog.Logger
}

// WithDefaults returns c with optional fields filled in.
func (c Config) WithDefaults() Config {
	if c.AttemptTimeout == 0 {
		c.AttemptTimeout = 10 * time.Second
	}
	if c.Interval == 0 {
		c.Interval = time.Second
	}
	if c.FirstBackoff == 0 {
		c.FirstBackoff = time.Second
	}
	if c.MaxBackoff == 0 {
		c.MaxBackoff = 10 * time.Minute
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = 15
	}
	if c.Client == nil {
		c.Client = NewClient(c.AttemptTimeout)
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

func (c Config) validate() error {
	switch {
	case c.Store == nil:
		return errors.New("callback: a store is required")
	case c.AttemptTimeout < 0 || c.Interval < 0 || c.FirstBackoff < 0 || c.MaxBackoff < 0:
		return errors.New("callback: durations must not be negative")
	case c.MaxAttempts < 0:
		return errors.New("callback: MaxAttempts must not be negative")
	}
	return nil
}

// Relay delivers owed callbacks.
type Relay struct {
	cfg Config
}

// New validates cfg and builds a relay.
func New(cfg Config) (*Relay, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Relay{cfg: cfg}, nil
}

// lease is how long a claimed callback stays out of other sweeps: longer
// than an attempt may take, so a slow receiver is never posted to twice
// at once.
func (r *Relay) lease() time.Duration {
	return 2*r.cfg.AttemptTimeout + 5*time.Second
}

// Run sweeps at once (delivering what an earlier process left owed) and
// then every Interval, until ctx is done.
func (r *Relay) Run(ctx context.Context) {
	sweep.Every(ctx, r.cfg.Interval, nil, r.Sweep)
}

// Sweep claims the due callbacks and makes one attempt at each.
func (r *Relay) Sweep(ctx context.Context) {
	due, err := r.cfg.Store.CallbackClaimDue(ctx, r.lease(), 50)
	if err != nil {
		if ctx.Err() == nil {
			r.cfg.Logger.Error("could not claim due callbacks", "err", err)
		}
		return
	}
	for _, cb := range due {
		if ctx.Err() != nil {
			return
		}
		r.deliver(ctx, cb)
	}
}

// deliver makes one attempt and records its outcome.
func (r *Relay) deliver(ctx context.Context, cb ledger.Callback) {
	err := r.post(ctx, cb)
	// Recorded on a context of its own: a shutdown mid-attempt must still
	// leave the ledger saying what happened.
	mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if errors.Is(err, errNothingToSay) {
		r.cfg.Logger.Info("result not pushed into the call", "invocation", cb.InvocationID, "agent", cb.AgentID, "reason", err.Error())
		if merr := r.cfg.Store.CallbackGiveUp(mctx, cb.InvocationID, err.Error()); merr != nil {
			r.cfg.Logger.Error("could not record a callback not sent", "invocation", cb.InvocationID, "err", merr)
		}
		return
	}
	if err == nil {
		if merr := r.cfg.Store.CallbackMarkDelivered(mctx, cb.InvocationID); merr != nil {
			// Delivered but not recorded: the claim's lease runs out and it
			// is sent again, which the invocation header lets the receiver
			// recognise.
			r.cfg.Logger.Error("could not record a delivered callback", "invocation", cb.InvocationID, "err", merr)
		}
		return
	}
	if cb.Attempts+1 >= r.cfg.MaxAttempts {
		r.cfg.Logger.Error("callback abandoned after its last attempt", "invocation", cb.InvocationID, "agent", cb.AgentID,
			"attempts", cb.Attempts+1, "err", err)
		if merr := r.cfg.Store.CallbackGiveUp(mctx, cb.InvocationID, err.Error()); merr != nil {
			r.cfg.Logger.Error("could not record a failed callback", "invocation", cb.InvocationID, "err", merr)
		}
		return
	}
	wait := r.backoff(cb.Attempts)
	r.cfg.Logger.Warn("callback not delivered; retrying", "invocation", cb.InvocationID, "agent", cb.AgentID,
		"attempt", cb.Attempts+1, "retry_in", wait, "err", err)
	if merr := r.cfg.Store.CallbackMarkFailed(mctx, cb.InvocationID, err.Error(), wait); merr != nil {
		r.cfg.Logger.Error("could not record a failed callback", "invocation", cb.InvocationID, "err", merr)
	}
}

// errNothingToSay is a final observation a live call must not hear: it
// neither confirms the effect with a receipt nor says honestly that it
// failed.
var errNothingToSay = errors.New("the outcome has no receipt to speak from")

func (r *Relay) post(ctx context.Context, cb ledger.Callback) error {
	vapi := r.cfg.VapiPush[cb.AgentID]
	secret, ok := r.cfg.Secrets[cb.AgentID]
	if !vapi && (!ok || len(secret) == 0) {
		return fmt.Errorf("no signing secret for agent %q", cb.AgentID)
	}
	inv, err := r.cfg.Store.InvocationGet(ctx, cb.InvocationID)
	if err != nil {
		return fmt.Errorf("error reading the invocation: %w", err)
	}
	if inv.Observation == nil {
		return errors.New("the invocation has no final observation")
	}
	var body []byte
	if vapi {
		body, err = vapiBody(*inv.Observation)
	} else {
		body, err = json.Marshal(inv.Observation)
	}
	if err != nil {
		return fmt.Errorf("error encoding the observation: %w", err)
	}
	actx, cancel := context.WithTimeout(ctx, r.cfg.AttemptTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, cb.URL, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("error building the request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if !vapi {
		// A control URL is the call's own capability; Vapi takes no
		// signature on it.
		req.Header.Set(SignatureHeader, Sign(secret, time.Now(), body))
	}
	req.Header.Set(InvocationHeader, cb.InvocationID)
	resp, err := r.cfg.Client.Do(req)
	if err != nil {
		return fmt.Errorf("error posting to the callback URL: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("the callback URL answered %s", resp.Status)
	}
	return nil
}

func (r *Relay) backoff(failures int) time.Duration {
	return sweep.Backoff(r.cfg.FirstBackoff, r.cfg.MaxBackoff, failures)
}

// vapiBody is the add-message that tells the live call how a pending call
// ended, spoken only from the outcome: the tool's success wording, which
// is rendered from a receipt, or its honest failure wording. Anything
// else, a success without a receipt among it, is not pushed.
func vapiBody(obs mt.Observation) ([]byte, error) {
	wording := obs.Wording
	if wording == "" {
		wording = obs.Summary
	}
	switch {
	case obs.Status == mt.StatusSuccess && obs.Receipt != nil && wording != "":
	case obs.Status == mt.StatusError && wording != "":
	default:
		return nil, fmt.Errorf("%w (status %s)", errNothingToSay, obs.Status)
	}
	content := "Update on the caller's earlier request: " + platform.OneLine(wording)
	return json.Marshal(platform.NewVapiAddMessage(content))
}
