package activities

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/maestro-run/maestro/approval"
	"github.com/maestro-run/maestro/internal/admission"
	"github.com/maestro-run/maestro/internal/answer"
	"github.com/maestro-run/maestro/internal/callback"
	"github.com/maestro-run/maestro/internal/connectors"
	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/postcall"
	"github.com/maestro-run/maestro/internal/transcriptref"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
	"github.com/maestro-run/maestro/workflows"
)

// Config holds the activities' dependencies.
type Config struct {
	Store      ledger.Store
	Catalog    tools.Source
	Connectors connectors.Set
	// Gate admits post-call deliveries like any other call. Optional: without
	// it, post-call dispatch fails.
	Gate *admission.Gate
	// Temporal tells session workflows about their calls' outcomes.
	// Optional: without it, sessions learn outcomes only from the ledger.
	Temporal client.Client
	// Extractor judges a call's deferred work. Optional: default the
	// catalog's deterministic rules.
	Extractor postcall.Extractor
	// LeaseTTL is how long a claim on an operation key is exclusive; it
	// must outlast one provider call. Optional: default 30s.
	LeaseTTL time.Duration
	// TokenTTL is the lifetime of a token a policy mints for an
	// auto-approved call. Optional: default approval.DefaultTokenTTL.
	TokenTTL time.Duration
	// Transcripts says which transcript_ref URLs the post-call judge may
	// fetch. Optional: the zero policy refuses every transcript_ref.
	Transcripts transcriptref.Policy
	// SweepIdle is how long an invocation must sit open and unchanged
	// before the sweeper asks whether its workflow still runs. It only
	// keeps the sweeper off invocations admission is still starting.
	// Optional: default 1m.
	SweepIdle time.Duration
	// ListingLag is how long a provider may take to list an effect it
	// performed. A search that finds nothing sooner after a lost answer
	// proves nothing: the claim is kept and the attempt retried once this
	// has passed, when a complete search that finds nothing proves the
	// effect absent. Optional: default 5s.
	ListingLag time.Duration
	// TaskQueue is where workflows the activities start (an operator's
	// retry of held post-call work) run. Optional: default
	// workflows.TaskQueue.
	TaskQueue string
	// PostCallBackoff paces post-call delivery attempts on one channel.
	// Optional: default workflows.DefaultBackoff.
	PostCallBackoff mt.Backoff
	// PartsBudget is how long a call retries a part of a composite effect
	// (a page's email while SES is down) before it answers with the parts
	// that went out and delivers the rest afterwards (ADR 14). Optional:
	// default 3s.
	PartsBudget time.Duration
	// PublicURL is the base URL the console is reached at, for the link
	// in a notification to an approver. Optional: default no link (the
	// request's ID is named instead).
	PublicURL string
	// Getenv reads the webhook channels' signing secrets, named in the
	// catalog. Optional: default os.Getenv.
	Getenv func(string) string
	// WebhookClient posts notifications to webhook channels. Optional:
	// default a client with a 10s timeout that follows no redirect (see
	// callback.NewClient): a 3xx is a failed delivery.
	WebhookClient *http.Client
	// Providers times and traces each provider call. Optional: default
	// none.
	Providers ProviderObserver
	// Answers is told when an invocation's outcome is committed, so an
	// API request waiting in the same process answers at once. Optional:
	// default nil, and waiters hear of it when the workflow completes.
	Answers *answer.Board
	// Logger. Optional: default slog.Default().
	Logger *slog.Logger
}

// WithDefaults returns c with optional fields filled in.
func (c Config) WithDefaults() Config {
	if c.LeaseTTL == 0 {
		c.LeaseTTL = 30 * time.Second
	}
	if c.TokenTTL == 0 {
		c.TokenTTL = approval.DefaultTokenTTL
	}
	if c.SweepIdle == 0 {
		c.SweepIdle = time.Minute
	}
	if c.ListingLag == 0 {
		c.ListingLag = 5 * time.Second
	}
	if c.PartsBudget == 0 {
		c.PartsBudget = 3 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Getenv == nil {
		c.Getenv = os.Getenv
	}
	if c.WebhookClient == nil {
		c.WebhookClient = callback.NewClient(10 * time.Second)
	}
	if c.TaskQueue == "" {
		c.TaskQueue = workflows.TaskQueue
	}
	c.Transcripts = c.Transcripts.WithDefaults()
	return c
}

func (c Config) validate() error {
	switch {
	case c.Store == nil:
		return errors.New("activities: a store is required")
	case c.Catalog == nil:
		return errors.New("activities: a catalog is required")
	case c.Connectors == nil:
		return errors.New("activities: connectors are required")
	case c.SweepIdle < 0:
		return fmt.Errorf("activities: sweep idle time %s is negative", c.SweepIdle)
	case c.ListingLag < 0:
		return fmt.Errorf("activities: listing lag must not be negative, got %s", c.ListingLag)
	}
	return nil
}

// Activities are registered with the worker; their method names are the
// activity names the workflows use.
type Activities struct {
	cfg Config
}

// New validates cfg and builds the activities.
func New(cfg Config) (*Activities, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Activities{cfg: cfg}, nil
}

// Register registers every activity under the names in package workflows.
func (a *Activities) Register(w worker.ActivityRegistry) {
	w.RegisterActivityWithOptions(a.Execute, activityName(workflows.ActivityExecute))
	w.RegisterActivityWithOptions(a.RecordDeferred, activityName(workflows.ActivityRecordDeferred))
	w.RegisterActivityWithOptions(a.AuditScan, activityName(workflows.ActivityAuditScan))
	w.RegisterActivityWithOptions(a.Finalize, activityName(workflows.ActivityFinalize))
	w.RegisterActivityWithOptions(a.DeliverParts, activityName(workflows.ActivityDeliverParts))
	w.RegisterActivityWithOptions(a.Sweep, activityName(workflows.ActivitySweep))
	w.RegisterActivityWithOptions(a.UndoList, activityName(workflows.ActivityUndoList))
	w.RegisterActivityWithOptions(a.Compensate, activityName(workflows.ActivityCompensate))
	w.RegisterActivityWithOptions(a.CompensationApproval, activityName(workflows.ActivityCompensationApproval))
	w.RegisterActivityWithOptions(a.SessionHalt, activityName(workflows.ActivitySessionHalt))
	w.RegisterActivityWithOptions(a.SessionResolve, activityName(workflows.ActivitySessionResolve))
	w.RegisterActivityWithOptions(a.SessionRollbackBegin, activityName(workflows.ActivitySessionRollbackBegin))
	w.RegisterActivityWithOptions(a.AwaitSettled, activityName(workflows.ActivityAwaitSettled))
	w.RegisterActivityWithOptions(a.SessionRollbackEnd, activityName(workflows.ActivitySessionRollbackEnd))
	w.RegisterActivityWithOptions(a.SessionEnd, activityName(workflows.ActivitySessionEnd))
	w.RegisterActivityWithOptions(a.PostCallGather, activityName(workflows.ActivityPostCallGather))
	w.RegisterActivityWithOptions(a.PostCallJudge, activityName(workflows.ActivityPostCallJudge))
	w.RegisterActivityWithOptions(a.PostCallDispatch, activityName(workflows.ActivityPostCallDispatch))
	w.RegisterActivityWithOptions(a.PostCallPersist, activityName(workflows.ActivityPostCallPersist))
	w.RegisterActivityWithOptions(a.PostCallAttempt, activityName(workflows.ActivityPostCallAttempt))
	w.RegisterActivityWithOptions(a.PostCallSettled, activityName(workflows.ActivityPostCallSettled))
	w.RegisterActivityWithOptions(a.NotifyPlan, activityName(workflows.ActivityNotifyPlan))
	w.RegisterActivityWithOptions(a.Notify, activityName(workflows.ActivityNotify))
	w.RegisterActivityWithOptions(a.NotifyFailed, activityName(workflows.ActivityNotifyFailed))
}

func (a *Activities) extractor() postcall.Extractor {
	if a.cfg.Extractor != nil {
		return a.cfg.Extractor
	}
	return postcall.Rules{Catalog: a.cfg.Catalog.Load()}
}

// admittedTool returns the tool as the catalog version the invocation was
// admitted under has it, and records that version in in: a reload after
// admission changes nothing about a call already admitted. Rows from
// before versions were recorded run under the current catalog.
// Answers is the board the activities tell of each outcome they commit.
func (a *Activities) Answers() *answer.Board { return a.cfg.Answers }

func (a *Activities) admittedTool(ctx context.Context, in *workflows.ExecuteInput) (*tools.Tool, error) {
	if in.CatalogVersion == "" && in.InvocationID != "" {
		inv, err := a.cfg.Store.InvocationGet(ctx, in.InvocationID)
		if err != nil {
			return nil, retryable(ErrTypeLedger, fmt.Errorf("error reading the invocation's catalog version: %w", err))
		}
		in.CatalogVersion = inv.CatalogVersion
	}
	cat, err := a.catalogAt(ctx, in.CatalogVersion)
	if err != nil {
		return nil, err
	}
	in.CatalogVersion = cat.Hash()
	t, ok := cat.Tool(in.Tool)
	if !ok {
		return nil, nonRetryable(workflows.ErrTypeInvariant, fmt.Errorf("tool %q is not in catalog version %s", in.Tool, cat.Hash()))
	}
	return t, nil
}

// catalogAt returns the catalog of a version. A version that will never
// load is not worth retrying; a ledger that did not answer may answer the
// retry.
func (a *Activities) catalogAt(ctx context.Context, version string) (*tools.Catalog, error) {
	cat, err := a.cfg.Catalog.At(ctx, version)
	switch {
	case errors.Is(err, tools.ErrVersionUnknown):
		return nil, nonRetryable(workflows.ErrTypeInvariant, err)
	case err != nil:
		return nil, retryable(ErrTypeLedger, err)
	}
	return cat, nil
}

func (a *Activities) tool(name string) (*tools.Tool, error) {
	t, ok := a.cfg.Catalog.Load().Tool(name)
	if !ok {
		// The catalog changed under a running invocation; retrying cannot help.
		return nil, nonRetryable(workflows.ErrTypeInvariant, fmt.Errorf("tool %q is no longer in the catalog", name))
	}
	return t, nil
}
