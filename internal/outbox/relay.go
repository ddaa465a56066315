// Package outbox delivers the signals a committed decision owes its
// workflow: an approval's wake-up, a call's end. The decision and its
// signal are written in one ledger transaction; the relay signals until
// Temporal accepts, so a signal lost on the way (a frontend restarting, a
// dropped connection) delays the workflow instead of stranding it.
package outbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.temporal.io/api/serviceerror"

	"github.com/maestro-run/maestro/approval"
	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/sweep"
)

// Signaller is the part of a Temporal client the relay uses.
type Signaller interface {
	SignalWorkflow(ctx context.Context, workflowID, runID, signalName string, arg any) error
}

// Config holds the relay's dependencies.
type Config struct {
	Store     ledger.Store
	Signaller Signaller
	// TokenTTL is the lifetime of an approval token the relay renews when
	// it delivers an approval's wake-up late. Optional: default
	// approval.DefaultTokenTTL.
	TokenTTL time.Duration
	// Interval is how often the relay looks for due signals. Optional:
	// default 1s.
	Interval time.Duration
	// FirstBackoff is the wait after a signal's first failed attempt; it
	// doubles with each further failure. Optional: default 500ms.
	FirstBackoff time.Duration
	// MaxBackoff caps the wait between attempts. Optional: default 30s.
	MaxBackoff time.Duration
	// FirstAttemptGrace is how long a sweep leaves a signal nobody has
	// attempted yet to the request that queued it, which attempts it
	// right after its commit: a sweep in between would signal twice.
	// Optional: default 5s.
	FirstAttemptGrace time.Duration
	// Now is the clock. Optional: default time.Now.
	Now func() time.Time
	// Logger. Optional: default slog.Default().
	Logger *slog.Logger
}

// WithDefaults returns c with optional fields filled in.
func (c Config) WithDefaults() Config {
	if c.TokenTTL == 0 {
		c.TokenTTL = approval.DefaultTokenTTL
	}
	if c.Interval == 0 {
		c.Interval = time.Second
	}
	if c.FirstBackoff == 0 {
		c.FirstBackoff = 500 * time.Millisecond
	}
	if c.MaxBackoff == 0 {
		c.MaxBackoff = 30 * time.Second
	}
	if c.FirstAttemptGrace == 0 {
		c.FirstAttemptGrace = 5 * time.Second
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}

func (c Config) validate() error {
	switch {
	case c.Store == nil:
		return errors.New("outbox: a store is required")
	case c.Signaller == nil:
		return errors.New("outbox: a signaller is required")
	case c.TokenTTL < 0 || c.Interval < 0 || c.FirstBackoff < 0 || c.MaxBackoff < 0 || c.FirstAttemptGrace < 0:
		return errors.New("outbox: durations must not be negative")
	}
	return nil
}

// Relay delivers queued signals.
type Relay struct {
	cfg  Config
	kick chan struct{}
}

// New validates cfg and builds a relay.
func New(cfg Config) (*Relay, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Relay{cfg: cfg, kick: make(chan struct{}, 1)}, nil
}

// Send makes one attempt at sig and records nothing: for a signal its
// sender queues in the same transaction, with the attempt's outcome.
func (r *Relay) Send(ctx context.Context, sig ledger.OutboxSignal) error {
	if err := r.cfg.Signaller.SignalWorkflow(ctx, sig.WorkflowID, "", sig.SignalName, payload(sig.Payload)); err != nil {
		return fmt.Errorf("error signalling %s: %w", sig.WorkflowID, err)
	}
	return nil
}

// Deliver makes one attempt at sig and records its outcome: delivered,
// failed with the next attempt scheduled, abandoned when the workflow is
// gone (not merely yet to start), or held for a human when Temporal
// refuses the signal as invalid. It returns the signalling error, if
// any; the signal stays owed and Run delivers it later.
func (r *Relay) Deliver(ctx context.Context, sig ledger.OutboxSignal) error {
	if sig.Attempts > 0 && sig.ApprovalID != "" {
		r.renewToken(ctx, sig)
	}
	err := r.cfg.Signaller.SignalWorkflow(ctx, sig.WorkflowID, "", sig.SignalName, payload(sig.Payload))
	var (
		notFound *serviceerror.NotFound
		invalid  *serviceerror.InvalidArgument
	)
	switch {
	case err == nil:
		if merr := r.cfg.Store.OutboxMarkDelivered(ctx, sig.ID); merr != nil {
			// Delivered but not recorded: the next sweep signals again,
			// which a workflow that reads the ledger on waking shrugs off.
			r.cfg.Logger.Error("could not record a delivered signal", "signal", sig.ID, "err", merr)
		}
		return nil
	case errors.As(err, &notFound) && !r.workflowStartsLater(ctx, sig):
		// Logged as an error: what the signal owed (a call's end, an
		// approval's wake-up) will not happen, and an operator must know.
		// A session's end starts its workflow before queueing call-ended,
		// and an open call's wake-up is kept until its workflow starts, so this
		// is a workflow that ran and is gone.
		r.cfg.Logger.Error("signal abandoned: its workflow is gone", "signal", sig.ID, "workflow", sig.WorkflowID, "name", sig.SignalName)
		if merr := r.cfg.Store.OutboxMarkAbandoned(ctx, sig.ID, err.Error()); merr != nil {
			r.cfg.Logger.Error("could not record an abandoned signal", "signal", sig.ID, "err", merr)
		}
		return fmt.Errorf("error signalling %s: %w", sig.WorkflowID, err)
	case errors.As(err, &invalid):
		r.hold(ctx, sig, err)
		return fmt.Errorf("error signalling %s: %w", sig.WorkflowID, err)
	}
	wait := r.backoff(sig.Attempts)
	r.cfg.Logger.Warn("signal not delivered; retrying", "signal", sig.ID, "workflow", sig.WorkflowID, "name", sig.SignalName,
		"attempt", sig.Attempts+1, "retry_in", wait, "err", err)
	// Recorded on a context of its own: the caller's may be the cancelled
	// request whose signal just failed.
	mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if merr := r.cfg.Store.OutboxMarkFailed(mctx, sig.ID, err.Error(), wait); merr != nil {
		r.cfg.Logger.Error("could not record a failed signal", "signal", sig.ID, "err", merr)
	}
	r.Kick()
	return fmt.Errorf("error signalling %s: %w", sig.WorkflowID, err)
}

// hold stops delivering a signal Temporal refused as invalid (a payload
// over its size limit, an argument it cannot take): every attempt would be
// refused alike, and retrying for ever would hide that what the signal
// owed never happened. It is held for a human instead, listed with the
// reason in the reconciliation queue and counted by the open
// reconciliations metric.
func (r *Relay) hold(ctx context.Context, sig ledger.OutboxSignal, err error) {
	r.cfg.Logger.Error("signal held for a human: Temporal refuses it as invalid", "signal", sig.ID, "workflow", sig.WorkflowID,
		"name", sig.SignalName, "key", ledger.OutboxHeldKey(sig.ID), "err", err)
	mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	reason := fmt.Sprintf("Temporal refused the %s signal to %s as invalid, and would refuse it again: %v", sig.SignalName, sig.WorkflowID, err)
	if merr := r.cfg.Store.OutboxMarkHeld(mctx, sig.ID, reason); merr != nil {
		r.cfg.Logger.Error("could not hold a refused signal", "signal", sig.ID, "err", merr)
	}
}

// renewToken mints a fresh token for an approved request whose wake-up is
// late: the token's short life bounds how long an approval may wait to be
// used, and a delay on maestro's side is not the approver's. A spent token
// or a request that is not approved is left alone.
func (r *Relay) renewToken(ctx context.Context, sig ledger.OutboxSignal) {
	req, err := r.cfg.Store.ApprovalRequestGet(ctx, sig.ApprovalID)
	if err != nil || req.Status != ledger.ApprovalApproved {
		return
	}
	_, err = r.cfg.Store.ApprovalTokenMint(ctx, sig.ApprovalID, r.cfg.TokenTTL, "outbox:late-delivery")
	switch {
	case err == nil:
		r.cfg.Logger.Info("renewed the token of a late approval", "approval", sig.ApprovalID, "attempt", sig.Attempts+1)
	case !errors.Is(err, ledger.ErrTokenUsed):
		r.cfg.Logger.Error("could not renew a late approval's token", "approval", sig.ApprovalID, "err", err)
	}
}

func (r *Relay) backoff(failures int) time.Duration {
	return sweep.Backoff(r.cfg.FirstBackoff, r.cfg.MaxBackoff, failures)
}

// Kick asks Run to look for due signals now rather than at its next tick.
func (r *Relay) Kick() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// Run sweeps due signals at once (what an earlier process left owed) and
// then every Interval, until ctx is done.
func (r *Relay) Run(ctx context.Context) {
	sweep.Every(ctx, r.cfg.Interval, r.kick, r.Sweep)
}

// Sweep makes one attempt at every due signal, except one its own
// request may still be attempting.
func (r *Relay) Sweep(ctx context.Context) {
	due, err := r.cfg.Store.OutboxListDue(ctx, 100)
	if err != nil {
		if ctx.Err() == nil {
			r.cfg.Logger.Error("could not list due signals", "err", err)
		}
		return
	}
	for _, sig := range due {
		if ctx.Err() != nil {
			return
		}
		if sig.Attempts == 0 && r.cfg.Now().Sub(sig.CreatedAt) < r.cfg.FirstAttemptGrace {
			continue
		}
		_ = r.Deliver(ctx, sig) // logged and recorded by Deliver
	}
}

// payload hands Temporal's JSON converter the stored argument as it is:
// a json.RawMessage would be taken for bytes and sent as binary.
type payload json.RawMessage

func (p payload) MarshalJSON() ([]byte, error) { return p, nil }
