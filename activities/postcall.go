package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/maestro-run/maestro/admission"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/postcall"
	"github.com/maestro-run/maestro/store"
	"github.com/maestro-run/maestro/transcriptref"
	"github.com/maestro-run/maestro/workflows"
)

// PostCallGather collects what the judge needs: the session's facts, its
// recorded intents not yet delivered, and the transcript or its reference.
func (a *Activities) PostCallGather(ctx context.Context, in workflows.PostCallInput) (workflows.Gathered, error) {
	g := workflows.Gathered{SessionID: in.SessionID, Transcript: in.Transcript, Deferred: []workflows.DeferredIntent{}}
	sess, err := a.cfg.Store.SessionGet(ctx, in.SessionID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return g, retryable(ErrTypeLedger, fmt.Errorf("error reading session: %w", err))
	}
	g.Facts = sess.Facts
	items, err := a.cfg.Store.DeferredListBySession(ctx, in.SessionID)
	if err != nil {
		return g, retryable(ErrTypeLedger, fmt.Errorf("error reading deferred items: %w", err))
	}
	for _, it := range items {
		if it.Status != store.DeferredDelivered {
			g.Deferred = append(g.Deferred, workflows.DeferredIntent{ID: it.ID, Tool: it.Tool, Args: it.Args})
		}
	}
	// The judge fetches a transcript_ref itself: returning the transcript
	// from here would write it into the workflow's history.
	g.TranscriptRef = in.TranscriptRef
	return g, nil
}

// PostCallJudge turns the gathered call into work items with the
// catalog's deterministic rules.
func (a *Activities) PostCallJudge(ctx context.Context, g workflows.Gathered) (workflows.Judged, error) {
	in := postcall.Gathered{SessionID: g.SessionID, Facts: g.Facts, Transcript: g.Transcript}
	var unfetched *workflows.ItemFailure
	if g.TranscriptRef != "" {
		t, err := a.cfg.Transcripts.Fetch(ctx, g.TranscriptRef)
		var ref *transcriptref.RefusedError
		switch {
		case errors.As(err, &ref):
			// The recorded intents are still delivered; the transcript's
			// work is reported as not done, with the rule that refused it.
			a.cfg.Logger.Warn("transcript_ref refused", "session", g.SessionID, "rule", ref.Rule, "detail", ref.Detail)
			unfetched = &workflows.ItemFailure{Key: "transcript", Source: "transcript_ref", Reason: ref.Error()}
		case err != nil && !lastAttempt(ctx):
			return workflows.Judged{}, retryable(ErrTypeProviderRetry, err)
		case err != nil:
			// Failing the judge now would fail the whole post-call
			// workflow, and the recorded intents with it.
			a.cfg.Logger.Warn("transcript_ref could not be fetched", "session", g.SessionID, "err", err)
			unfetched = &workflows.ItemFailure{Key: "transcript", Source: "transcript_ref", Reason: "the transcript could not be fetched: " + err.Error()}
		default:
			in.Transcript = t
		}
	}
	for _, d := range g.Deferred {
		in.Deferred = append(in.Deferred, postcall.Deferred{ID: d.ID, Tool: d.Tool, Args: d.Args})
	}
	res, err := a.extractor().Extract(ctx, in)
	if err != nil {
		return workflows.Judged{}, nonRetryable(workflows.ErrTypeInvariant, fmt.Errorf("error judging the call: %w", err))
	}
	out := workflows.Judged{Items: res.Items}
	if out.Items == nil {
		out.Items = []mt.WorkItem{}
	}
	for _, f := range res.Failures {
		out.Failures = append(out.Failures, workflows.ItemFailure{Key: f.Key, Tool: f.Tool, Source: f.Source, DeferredID: f.DeferredID, Reason: f.Reason})
	}
	if unfetched != nil {
		out.Failures = append(out.Failures, *unfetched)
	}
	return out, nil
}

// PostCallDispatch delivers one item through the normal gate, as the
// catalog's post-call agent, and waits for the invocation's outcome.
func (a *Activities) PostCallDispatch(ctx context.Context, sessionID, _ string, item mt.WorkItem) (workflows.Delivery, error) {
	d := workflows.Delivery{SessionID: sessionID, Item: item, OperationKey: workflows.PostCallOperationKey(sessionID, item.Key)}
	pc := a.cfg.Catalog.PostCall()
	if pc == nil || a.cfg.Gate == nil {
		return d, nonRetryable(workflows.ErrTypeInvariant, errors.New("the catalog has no post-call section or no gate is configured"))
	}
	adm, err := a.cfg.Gate.Admit(ctx, admission.Request{
		AgentID:      pc.Agent,
		SessionID:    sessionID,
		Tool:         item.Tool,
		Args:         item.Args,
		OperationKey: d.OperationKey,
	})
	var ref *admission.Refusal
	if errors.As(err, &ref) {
		d.State, d.Summary = mt.InvocationFailed, ref.Observation.Summary+": "+ref.Observation.NextActions.RootCause
		return d, nil
	}
	if err != nil {
		return d, retryable(ErrTypeLedger, fmt.Errorf("error admitting post-call item: %w", err))
	}
	d.InvocationID = adm.Invocation.ID
	for {
		inv, err := a.cfg.Store.InvocationGet(ctx, adm.Invocation.ID)
		if err != nil {
			return d, retryable(ErrTypeLedger, fmt.Errorf("error reading post-call invocation: %w", err))
		}
		if inv.State.Terminal() && inv.Observation != nil {
			d.State, d.Summary, d.Receipt = inv.State, inv.Observation.Summary, inv.Observation.Receipt
			return d, nil
		}
		activity.RecordHeartbeat(ctx, inv.State)
		select {
		case <-ctx.Done():
			return d, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// PostCallPersist records an item's outcome. A deferred intent becomes
// delivered only with a receipt; anything else is failed with its reason,
// never reported as done.
func (a *Activities) PostCallPersist(ctx context.Context, d workflows.Delivery) error {
	status, reason := store.PostCallFailed, d.Summary
	if reason == "" {
		reason = "the delivery ended as " + string(d.State) + " without a receipt"
	}
	if d.State == mt.InvocationSucceeded && d.Receipt != nil && d.Receipt.ID != "" {
		status, reason = store.PostCallDelivered, ""
	}
	if _, err := a.cfg.Store.PostCallItemUpsert(ctx, store.PostCallItem{
		SessionID:    d.SessionID,
		Key:          d.Item.Key,
		Tool:         d.Item.Tool,
		Source:       d.Item.Source,
		DeferredID:   d.Item.DeferredID,
		OperationKey: d.OperationKey,
		InvocationID: d.InvocationID,
		Status:       status,
		Receipt:      d.Receipt,
		Reason:       reason,
	}); err != nil {
		return retryable(ErrTypeLedger, fmt.Errorf("error recording post-call item: %w", err))
	}
	if d.Item.DeferredID == "" {
		return nil
	}
	var (
		got store.DeferredItem
		err error
	)
	want := store.DeferredFailed
	if status == store.PostCallDelivered {
		want = store.DeferredDelivered
		got, err = a.cfg.Store.DeferredSetOutcome(ctx, d.Item.DeferredID, want, d.Receipt, "")
	} else {
		got, err = a.cfg.Store.DeferredSetOutcome(ctx, d.Item.DeferredID, want, nil, reason)
	}
	// A retried persist finds its own earlier write; a delivered item is
	// never downgraded by a later failure.
	if errors.Is(err, store.ErrDeferredTransition) && (got.Status == want || got.Status == store.DeferredDelivered) {
		err = nil
	}
	if err != nil {
		return retryable(ErrTypeLedger, fmt.Errorf("error recording deferred outcome: %w", err))
	}
	return nil
}
