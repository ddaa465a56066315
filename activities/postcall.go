package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/transcriptref"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/workflows"
)

// PostCallGather collects what the judge needs: the session's facts, its
// recorded intents not yet delivered, and the transcript or its reference.
func (a *Activities) PostCallGather(ctx context.Context, in workflows.PostCallInput) (mt.Gathered, error) {
	g := mt.Gathered{SessionID: in.SessionID, Transcript: in.Transcript, Deferred: []mt.DeferredIntent{}}
	if b := a.cfg.PostCallBackoff; b.Initial > 0 && b.Max > 0 {
		g.Backoff = &b
	}
	sess, err := a.cfg.Store.SessionGet(ctx, in.SessionID)
	if err != nil && !errors.Is(err, ledger.ErrNotFound) {
		return g, retryable(ErrTypeLedger, fmt.Errorf("error reading session: %w", err))
	}
	g.Facts = sess.Facts
	items, err := a.cfg.Store.DeferredListBySession(ctx, in.SessionID)
	if err != nil {
		return g, retryable(ErrTypeLedger, fmt.Errorf("error reading deferred items: %w", err))
	}
	for _, it := range items {
		if it.Status != ledger.DeferredDelivered {
			g.Deferred = append(g.Deferred, mt.DeferredIntent{ID: it.ID, Tool: it.Tool, Args: it.Args})
		}
	}
	// The judge fetches a transcript_ref, or reads the stored transcript,
	// itself: returning the transcript from here would write it into the
	// workflow's history, and a large one past Temporal's payload limit.
	g.TranscriptRef = in.TranscriptRef
	return g, nil
}

// PostCallJudge turns the gathered call into work items with the
// catalog's deterministic rules.
func (a *Activities) PostCallJudge(ctx context.Context, g mt.Gathered) (mt.Judged, error) {
	// The judge reads the transcript, fetched here from its reference or
	// read from the ledger.
	in := g
	in.TranscriptRef = ""
	var unfetched *mt.ItemFailure
	if g.TranscriptRef == "" && len(g.Transcript.Turns) == 0 {
		t, failure, err := a.storedTranscript(ctx, g.SessionID)
		if err != nil {
			return mt.Judged{}, err
		}
		in.Transcript, unfetched = t, failure
	}
	if g.TranscriptRef != "" {
		t, err := a.cfg.Transcripts.Fetch(ctx, g.TranscriptRef)
		var ref *transcriptref.RefusedError
		switch {
		case errors.As(err, &ref):
			// The recorded intents are still delivered; the transcript's
			// work is reported as not done, with the rule that refused it.
			a.cfg.Logger.Warn("transcript_ref refused", "session", g.SessionID, "rule", ref.Rule, "detail", ref.Detail)
			unfetched = &mt.ItemFailure{Key: "transcript", Source: "transcript_ref", Reason: ref.Error()}
		case err != nil && !lastAttempt(ctx):
			return mt.Judged{}, retryable(ErrTypeProviderRetry, err)
		case err != nil:
			// Failing the judge now would fail the whole post-call
			// workflow, and the recorded intents with it.
			a.cfg.Logger.Warn("transcript_ref could not be fetched", "session", g.SessionID, "err", err)
			unfetched = &mt.ItemFailure{Key: "transcript", Source: "transcript_ref", Reason: "the transcript could not be fetched: " + err.Error()}
		default:
			in.Transcript = t
		}
	}
	out, err := a.extractor().Extract(ctx, in)
	if err != nil {
		return mt.Judged{}, nonRetryable(workflows.ErrTypeInvariant, fmt.Errorf("error judging the call: %w", err))
	}
	if out.Items == nil {
		out.Items = []mt.WorkItem{}
	}
	if unfetched != nil {
		out.Failures = append(out.Failures, *unfetched)
	}
	return out, nil
}

// storedTranscript reads the transcript the call ended with from the
// ledger: the call-ended signal carries none, so that no transcript is
// bound by Temporal's payload limit, and it is read here, where it is
// judged, so it never enters workflow history. A transcript the ledger
// holds but that cannot be read is reported as work not done; the
// recorded intents are still delivered.
func (a *Activities) storedTranscript(ctx context.Context, sessionID string) (mt.Transcript, *mt.ItemFailure, error) {
	sess, err := a.cfg.Store.SessionGet(ctx, sessionID)
	switch {
	case errors.Is(err, ledger.ErrNotFound):
		return mt.Transcript{}, nil, nil
	case err != nil:
		return mt.Transcript{}, nil, retryable(ErrTypeLedger, fmt.Errorf("error reading the transcript: %w", err))
	case len(sess.Transcript) == 0:
		return mt.Transcript{}, nil, nil
	}
	var t mt.Transcript
	if err := json.Unmarshal(sess.Transcript, &t); err != nil {
		a.cfg.Logger.Error("stored transcript unreadable", "session", sessionID, "err", err)
		return mt.Transcript{}, &mt.ItemFailure{Key: "transcript", Source: "transcript",
			Reason: "the transcript stored with the call's end could not be read: " + err.Error()}, nil
	}
	return t, nil, nil
}

// PostCallDispatch delivers one item through the normal gate, as the
// catalog's post-call agent, and waits for the invocation's outcome. It
// serves post-call workflows recorded before attempts and fallbacks
// existed.
func (a *Activities) PostCallDispatch(ctx context.Context, sessionID, _ string, item mt.WorkItem) (workflows.Delivery, error) {
	d := workflows.Delivery{SessionID: sessionID, Item: item, OperationKey: workflows.PostCallOperationKey(sessionID, item.Key)}
	inv, ref, err := a.admitPostCall(ctx, sessionID, d.OperationKey, item.Tool, item.Args)
	if err != nil {
		return d, err
	}
	if ref != nil {
		d.State, d.Summary = mt.InvocationFailed, ref.Observation.Summary+": "+ref.Observation.NextActions.RootCause
		return d, nil
	}
	d.InvocationID = inv.ID
	inv, err = a.awaitInvocation(ctx, inv.ID)
	if err != nil {
		return d, err
	}
	d.State, d.Summary, d.Receipt = inv.State, inv.Observation.Summary, inv.Observation.Receipt
	return d, nil
}

// PostCallPersist records an item's outcome. A deferred intent becomes
// delivered only with a receipt; anything else is failed with its reason,
// never reported as done.
func (a *Activities) PostCallPersist(ctx context.Context, d workflows.Delivery) error {
	status, reason := ledger.PostCallFailed, d.Summary
	if reason == "" {
		reason = "the delivery ended as " + string(d.State) + " without a receipt"
	}
	switch {
	case d.State == mt.InvocationSucceeded && d.Receipt != nil && d.Receipt.ID != "":
		status, reason = ledger.PostCallDelivered, ""
	case d.Held:
		status = ledger.PostCallHeld
	case d.Pending:
		status = ledger.PostCallPending
	}
	var attempts, item json.RawMessage
	if len(d.Attempts) > 0 {
		var err error
		if attempts, err = json.Marshal(d.Attempts); err != nil {
			return nonRetryable(workflows.ErrTypeInvariant, fmt.Errorf("error encoding attempts: %w", err))
		}
		// The judged item, channels included, is what an operator's
		// retry redoes.
		if item, err = json.Marshal(d.Item); err != nil {
			return nonRetryable(workflows.ErrTypeInvariant, fmt.Errorf("error encoding work item: %w", err))
		}
	}
	if _, err := a.cfg.Store.PostCallItemUpsert(ctx, ledger.PostCallItem{
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
		Attempts:     attempts,
		Item:         item,
	}); err != nil {
		return retryable(ErrTypeLedger, fmt.Errorf("error recording post-call item: %w", err))
	}
	if status == ledger.PostCallHeld {
		a.pageHeldDelivery(d)
	}
	if d.Item.DeferredID == "" || status == ledger.PostCallPending {
		// A deferred intent stays recorded while its attempts go on.
		return nil
	}
	var (
		got ledger.DeferredItem
		err error
	)
	want := ledger.DeferredFailed
	if status == ledger.PostCallHeld {
		want = ledger.DeferredHeld
	}
	if status == ledger.PostCallDelivered {
		want = ledger.DeferredDelivered
		got, err = a.cfg.Store.DeferredSetOutcome(ctx, d.Item.DeferredID, want, d.Receipt, "")
	} else {
		got, err = a.cfg.Store.DeferredSetOutcome(ctx, d.Item.DeferredID, want, nil, reason)
	}
	// A retried persist finds its own earlier write; a delivered item is
	// never downgraded by a later failure.
	if errors.Is(err, ledger.ErrDeferredTransition) && (got.Status == want || got.Status == ledger.DeferredDelivered) {
		err = nil
	}
	if err != nil {
		return retryable(ErrTypeLedger, fmt.Errorf("error recording deferred outcome: %w", err))
	}
	return nil
}
