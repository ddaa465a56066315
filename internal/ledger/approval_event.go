package ledger

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

func (l *ledger) ApprovalEventInsert(ctx context.Context, e ApprovalEvent) (ApprovalEvent, error) {
	if !e.Kind.recordsRefusal() {
		return ApprovalEvent{}, fmt.Errorf("error logging approval event for %q: %q events are written only by the call that makes the change", e.ApprovalID, e.Kind)
	}
	got, err := l.appendEvent(ctx, l.conn, e)
	if err != nil {
		return ApprovalEvent{}, fmt.Errorf("error logging approval event for %q: %w", e.ApprovalID, err)
	}
	return got, nil
}

func (l *ledger) ApprovalEventList(ctx context.Context, approvalID string) ([]ApprovalEvent, error) {
	events, err := queryAll(ctx, l.conn, scanApprovalEvent, l.query("ApprovalEventListByApproval"), approvalID)
	if err != nil {
		return nil, fmt.Errorf("error listing events of approval request %q: %w", approvalID, err)
	}
	return events, nil
}

// recordsRefusal reports whether k records an attempt that changed nothing:
// a refusal, or telling an operator about the request.
func (k ApprovalEventKind) recordsRefusal() bool {
	switch k {
	case ApprovalEventDecisionRefused, ApprovalEventTokenRefused,
		ApprovalEventNotified, ApprovalEventNotifyFailed, ApprovalEventEscalated:
		return true
	}
	return false
}

// appendEvent logs e through q: inside the transaction that makes the
// change it records, when q is one, so the two commit or vanish together.
func (l *ledger) appendEvent(ctx context.Context, q querier, e ApprovalEvent) (ApprovalEvent, error) {
	if e.Actor == "" {
		return ApprovalEvent{}, fmt.Errorf("error appending %s event: actor is required", e.Kind)
	}
	got, err := scanApprovalEvent(q.QueryRowContext(ctx, l.query("ApprovalEventInsert"),
		e.ApprovalID,
		string(e.Kind),
		e.Actor,
		textArg(e.ArgsHashBefore),
		textArg(e.ArgsHashAfter),
		rawJSONArg(e.Detail),
	))
	if err != nil {
		return ApprovalEvent{}, fmt.Errorf("error appending %s event: %w", e.Kind, notFound(err))
	}
	return got, nil
}

func scanApprovalEvent(row rowScanner) (ApprovalEvent, error) {
	var e ApprovalEvent
	err := row.Scan(
		&e.ID,
		&e.ApprovalID,
		&e.Kind,
		&e.Actor,
		&e.ArgsHashBefore,
		textCol{&e.ArgsHashAfter},
		rawJSONCol{&e.Detail},
		timeCol{&e.CreatedAt},
	)
	return e, err
}

// eventDetail is the detail the store writes. Each kind sets the fields
// that concern it; the rest are left out of the JSON.
type eventDetail struct {
	// Reason is the approver's reason for a decision, or the store's for a
	// refused spend (see refusalReason).
	Reason     string          `json:"reason,omitempty"`
	ArgsBefore json.RawMessage `json:"args_before,omitempty"`
	ArgsAfter  json.RawMessage `json:"args_after,omitempty"`
	TokenID    string          `json:"token_id,omitempty"`
	ExpiresAt  time.Time       `json:"expires_at,omitzero"`
	// SupersededTokenIDs are the unspent tokens a fresh mint replaced.
	SupersededTokenIDs []string `json:"superseded_token_ids,omitempty"`
	// PresentedArgsHash is the hash a refused spend offered.
	PresentedArgsHash string `json:"presented_args_hash,omitempty"`
}

// encode returns the detail as JSON, or nil when there is nothing to say.
func (d eventDetail) encode() (json.RawMessage, error) {
	b, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("error encoding event detail: %w", err)
	}
	if string(b) == "{}" {
		return nil, nil
	}
	return b, nil
}
