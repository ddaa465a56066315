package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/maestro-run/maestro/internal/ledger"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
	"github.com/maestro-run/maestro/workflows"
)

// heldItem reads the post-call item a held key names, checking that the
// operator may decide it and that it is held.
func (a *Activities) heldItem(ctx context.Context, key string, op *tools.Operator) (ledger.PostCallItem, error) {
	sessionID, itemKey, ok := workflows.ParsePostCallHeldKey(key)
	if !ok {
		return ledger.PostCallItem{}, fmt.Errorf("%q does not name a held post-call item: %w", key, ledger.ErrNotFound)
	}
	if op == nil || !op.HasRole(ReconcilerRole) {
		return ledger.PostCallItem{}, fmt.Errorf("%w: %q", ErrNeedsRole, ReconcilerRole)
	}
	it, err := a.cfg.Store.PostCallItemGet(ctx, sessionID, itemKey)
	if err != nil {
		return ledger.PostCallItem{}, err
	}
	if it.Status != ledger.PostCallHeld {
		return it, fmt.Errorf("%w (it is %s)", ledger.ErrEffectNotHeld, it.Status)
	}
	return it, nil
}

// DeliverHeldByHand records a held item as delivered on an operator's
// word, after they delivered it themselves (called the office, read the
// message out): the receipt is human-attested, never a provider's ID.
func (a *Activities) DeliverHeldByHand(ctx context.Context, key string, op *tools.Operator, reason string) (ledger.PostCallItem, error) {
	if strings.TrimSpace(reason) == "" {
		return ledger.PostCallItem{}, errors.New("a decision needs a reason: how it was delivered, and to whom")
	}
	it, err := a.heldItem(ctx, key, op)
	if err != nil {
		return it, err
	}
	actor := "operator:" + op.ID
	receipt := &mt.Receipt{
		Provider: HumanAttested,
		ID:       attestationID(),
		Status:   "attested",
		Fields:   map[string]string{mt.ReceiptAttestedBy: actor, mt.ReceiptReason: reason},
		IssuedAt: time.Now().UTC(),
	}
	it.Status, it.Receipt, it.Reason, it.Attempts, it.Item = ledger.PostCallDelivered, receipt, "", nil, nil
	got, err := a.cfg.Store.PostCallItemUpsert(ctx, it)
	if err != nil {
		return got, err
	}
	if it.DeferredID != "" {
		if _, err := a.cfg.Store.DeferredSetOutcome(ctx, it.DeferredID, ledger.DeferredDelivered, receipt, ""); err != nil && !errors.Is(err, ledger.ErrDeferredTransition) {
			return got, err
		}
	}
	a.cfg.Logger.Info("held post-call item delivered by hand", "session", it.SessionID, "item", it.Key, "operator", op.ID, "receipt", receipt.ID)
	return got, nil
}

// RetryHeld delivers a held item again along its whole chain, as an
// operator asked once the cause is fixed. The attempts continue the
// item's numbering, so no key already used is used again, and asking
// twice starts one retry.
func (a *Activities) RetryHeld(ctx context.Context, key string, op *tools.Operator) (ledger.PostCallItem, error) {
	it, err := a.heldItem(ctx, key, op)
	if err != nil {
		return it, err
	}
	if a.cfg.Temporal == nil {
		return it, errors.New("no Temporal client is configured to run the retry")
	}
	var item mt.WorkItem
	var attempts []workflows.Attempt
	if err := json.Unmarshal(it.Item, &item); err != nil || item.Key == "" {
		return it, fmt.Errorf("the held item %s does not record its work item, so it cannot be retried: deliver it by hand", it.Key)
	}
	if err := json.Unmarshal(it.Attempts, &attempts); err != nil {
		return it, fmt.Errorf("error reading the attempts of %s: %w", it.Key, err)
	}
	first := 0
	for _, at := range attempts {
		first = max(first, at.N+1)
	}
	in := workflows.PostCallRetryInput{SessionID: it.SessionID, Item: item, First: first, Earlier: attempts}
	if b := a.cfg.PostCallBackoff; b.Initial > 0 && b.Max > 0 {
		in.Backoff = &b
	}
	// Pending first: the retry's own writes, which may come at once, must
	// not be overwritten by this one.
	held := it
	it.Status, it.Reason, it.Attempts, it.Item = ledger.PostCallPending, "retried by operator:"+op.ID, nil, nil
	got, err := a.cfg.Store.PostCallItemUpsert(ctx, it)
	if err != nil {
		return got, err
	}
	if _, err := a.cfg.Temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:        workflows.PostCallRetryWorkflowID(it.SessionID, it.Key, first),
		TaskQueue: a.cfg.TaskQueue,
	}, workflows.PostCallRetryWorkflowName, in); err != nil {
		held.Attempts, held.Item = nil, nil
		if _, rerr := a.cfg.Store.PostCallItemUpsert(ctx, held); rerr != nil {
			a.cfg.Logger.Error("a retry that did not start left held work pending", "session", it.SessionID, "item", it.Key, "err", rerr)
		}
		return got, fmt.Errorf("error starting the retry of %s: %w", it.Key, err)
	}
	return got, nil
}
