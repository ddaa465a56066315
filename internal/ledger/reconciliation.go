package ledger

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/maestro-run/maestro/maestrotype"
)

// ErrEffectNotHeld is returned by EffectReconcile, with the effect as it
// stands, when a decision without an owner finds the effect no longer (or
// never) held in needs_reconciliation: someone else settled it first.
var ErrEffectNotHeld = errors.New("effect is not held for reconciliation")

// ReconciliationKind is what a reconciliation event records.
type ReconciliationKind string

const (
	// ReconciliationAdopted: the provider's records hold exactly one match,
	// whose receipt settled the effect as succeeded.
	ReconciliationAdopted ReconciliationKind = "adopted"
	// ReconciliationAbsent: a complete search of the provider's records
	// found no match, so the call had no effect.
	ReconciliationAbsent ReconciliationKind = "absent"
	// ReconciliationReplayed: the call was sent again under the provider's
	// idempotency key, which makes the provider answer for the first send.
	ReconciliationReplayed ReconciliationKind = "replayed"
	// ReconciliationEscalated: nothing automatic can settle the outcome;
	// the effect is held for a human, and Reason says why.
	ReconciliationEscalated ReconciliationKind = "escalated"
	// ReconciliationDelivered: a human attested that the effect happened.
	ReconciliationDelivered ReconciliationKind = "delivered"
	// ReconciliationNotDelivered: a human attested that it did not, or,
	// with Actor "policy:on_unknown", the tool's catalog policy chose to
	// send again rather than hold an outcome nobody can search for; its
	// Reason says a duplicate is possible.
	ReconciliationNotDelivered ReconciliationKind = "not_delivered"
)

// ReconciliationEvent is one entry of an operation key's append-only
// reconciliation log.
type ReconciliationEvent struct {
	ID           int64 // assigned by the store, increasing in log order
	OperationKey string
	Kind         ReconciliationKind
	// Actor says who decided: "reconciler:<attempt>" for an automatic
	// finding, "operator:<id>" for a human.
	Actor string
	// Reason is why: what the lookup found, or the human's stated grounds.
	Reason string
	// Receipt is the receipt the effect was settled with, for adopted and
	// delivered; nil otherwise.
	Receipt   *maestrotype.Receipt
	CreatedAt time.Time
}

// EffectReconcileParams settle an effect from what reconciliation found.
type EffectReconcileParams struct {
	OperationKey string
	// Owner is the attempt holding the lease, for a finding made while an
	// attempt runs; empty for a decision on an effect already held in
	// needs_reconciliation. See Store.EffectReconcile.
	Owner      string
	Status     maestrotype.EffectStatus
	Receipt    *maestrotype.Receipt
	AfterState json.RawMessage
	Result     *maestrotype.Observation
	Error      string
	// InvocationState, when set, finishes the effect's invocation with that
	// state and Result as its observation, in the same transaction.
	InvocationState maestrotype.InvocationState
	// Event explains the change; its OperationKey defaults to the effect's.
	Event ReconciliationEvent
}

func (p EffectReconcileParams) validate() error {
	switch {
	case p.OperationKey == "":
		return errors.New("operation key is required")
	case p.Event.OperationKey != "" && p.Event.OperationKey != p.OperationKey:
		return fmt.Errorf("event is for operation key %q", p.Event.OperationKey)
	case p.Event.Kind == "" || p.Event.Actor == "" || p.Event.Reason == "":
		return errors.New("the event needs a kind, an actor and a reason")
	case p.InvocationState != "" && p.Result == nil:
		return errors.New("finishing the invocation needs a result")
	case p.InvocationState != "" && !p.InvocationState.Terminal():
		return fmt.Errorf("invocation state %q is not final", p.InvocationState)
	}
	switch p.Status {
	case maestrotype.EffectSucceeded, maestrotype.EffectFailed:
		return nil
	case maestrotype.EffectNeedsReconciliation:
		if p.Owner == "" {
			return errors.New("a held effect must be settled succeeded or failed")
		}
		return nil
	}
	return fmt.Errorf("status %q is not final", p.Status)
}

func (l *ledger) EffectReconcile(ctx context.Context, p EffectReconcileParams) (Effect, error) {
	if err := p.validate(); err != nil {
		return Effect{}, fmt.Errorf("error reconciling effect %q: %w", p.OperationKey, err)
	}
	receipt, err := jsonArg(p.Receipt)
	if err != nil {
		return Effect{}, fmt.Errorf("error reconciling effect %q: %w", p.OperationKey, err)
	}
	result, err := jsonArg(p.Result)
	if err != nil {
		return Effect{}, fmt.Errorf("error reconciling effect %q: %w", p.OperationKey, err)
	}
	p.Event.OperationKey = p.OperationKey

	var eff Effect
	err = l.withTx(ctx, func(tx *sql.Tx) error {
		before, err := scanEffect(tx.QueryRowContext(ctx, l.query("EffectGetForReconcile"), p.OperationKey))
		if err != nil {
			return notFound(err)
		}
		if p.Owner != "" {
			res, err := tx.ExecContext(ctx, l.query("EffectSettle"),
				p.OperationKey, p.Owner, string(p.Status), receipt, rawJSONArg(p.AfterState), result, textArg(p.Error), nil)
			if err == nil {
				err = expectOne(res, ErrLeaseLost)
			}
			if err != nil {
				return err
			}
			if eff, err = scanEffect(tx.QueryRowContext(ctx, l.query("EffectGetForReconcile"), p.OperationKey)); err != nil {
				return err
			}
		} else {
			eff, err = scanEffect(tx.QueryRowContext(ctx, l.query("EffectSettleHeld"),
				p.OperationKey, string(p.Status), receipt, rawJSONArg(p.AfterState), result, textArg(p.Error)))
			if errors.Is(err, sql.ErrNoRows) {
				eff = before
				return ErrEffectNotHeld
			}
			if err != nil {
				return err
			}
		}
		if p.InvocationState != "" && eff.InvocationID != "" {
			res, err := tx.ExecContext(ctx, l.query("InvocationFinish"), eff.InvocationID, string(p.InvocationState), result)
			if err == nil {
				err = expectOne(res, ErrNotFound)
			}
			if err != nil {
				return fmt.Errorf("error finishing invocation %q: %w", eff.InvocationID, err)
			}
		}
		_, err = l.appendReconciliationEvent(ctx, tx, p.Event)
		return err
	})
	if errors.Is(err, ErrEffectNotHeld) {
		return eff, fmt.Errorf("error reconciling effect %q: %w (it is %s)", p.OperationKey, err, eff.Status)
	}
	if err != nil {
		return Effect{}, fmt.Errorf("error reconciling effect %q: %w", p.OperationKey, asReceiptTaken(err))
	}
	return eff, nil
}

func (l *ledger) ReconciliationEventInsert(ctx context.Context, e ReconciliationEvent) (ReconciliationEvent, error) {
	if e.Kind != ReconciliationAbsent && e.Kind != ReconciliationReplayed {
		return ReconciliationEvent{}, fmt.Errorf("error logging reconciliation event for %q: %q events are written only with the change they explain", e.OperationKey, e.Kind)
	}
	got, err := l.appendReconciliationEvent(ctx, l.conn, e)
	if err != nil {
		return ReconciliationEvent{}, fmt.Errorf("error logging reconciliation event for %q: %w", e.OperationKey, err)
	}
	return got, nil
}

func (l *ledger) ReconciliationEventList(ctx context.Context, operationKey string) ([]ReconciliationEvent, error) {
	events, err := queryAll(ctx, l.conn, scanReconciliationEvent, l.query("ReconciliationEventListByKey"), operationKey)
	if err != nil {
		return nil, fmt.Errorf("error listing reconciliation events of %q: %w", operationKey, err)
	}
	return events, nil
}

func (l *ledger) EffectListByReceiptID(ctx context.Context, id string) ([]Effect, error) {
	scan := func(row rowScanner) (Effect, error) { return scanEffect(row) }
	effs, err := queryAll(ctx, l.conn, scan, l.query("EffectListByReceiptID"), id)
	if err != nil {
		return nil, fmt.Errorf("error listing effects with receipt %q: %w", id, err)
	}
	return effs, nil
}

// appendReconciliationEvent logs e through q, inside the transaction of the
// change it explains when q is one.
func (l *ledger) appendReconciliationEvent(ctx context.Context, q querier, e ReconciliationEvent) (ReconciliationEvent, error) {
	if e.OperationKey == "" || e.Kind == "" || e.Actor == "" || e.Reason == "" {
		return ReconciliationEvent{}, errors.New("a reconciliation event needs an operation key, a kind, an actor and a reason")
	}
	receipt, err := jsonArg(e.Receipt)
	if err != nil {
		return ReconciliationEvent{}, err
	}
	got, err := scanReconciliationEvent(q.QueryRowContext(ctx, l.query("ReconciliationEventInsert"),
		e.OperationKey, string(e.Kind), e.Actor, e.Reason, receipt))
	if err != nil {
		return ReconciliationEvent{}, fmt.Errorf("error appending %s event: %w", e.Kind, err)
	}
	return got, nil
}

func scanReconciliationEvent(row rowScanner) (ReconciliationEvent, error) {
	var e ReconciliationEvent
	err := row.Scan(
		&e.ID,
		&e.OperationKey,
		&e.Kind,
		&e.Actor,
		&e.Reason,
		jsonCol[*maestrotype.Receipt]{&e.Receipt},
		timeCol{&e.CreatedAt},
	)
	return e, err
}
