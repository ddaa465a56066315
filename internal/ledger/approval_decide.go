package ledger

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// ApprovalDecide locks the request, then moves it with a conditional
// UPDATE that is the arbiter: of any number of racing deciders exactly one
// matches a pending row, and the rest find it decided and get
// ErrApprovalNotPending. The events and the token are written in the same
// transaction, so no reader ever sees a decision without its record or its
// token.
func (l *ledger) ApprovalDecide(ctx context.Context, p ApprovalDecideParams) (ApprovalDecideResult, error) {
	if err := p.validate(); err != nil {
		return ApprovalDecideResult{}, fmt.Errorf("error deciding approval request %q: %w", p.ApprovalID, err)
	}
	to := ApprovalApproved
	if p.Decision == DecisionReject {
		to = ApprovalRejected
	}

	var res ApprovalDecideResult
	err := l.withTx(ctx, func(tx *sql.Tx) error {
		before, err := l.approvalLock(ctx, tx, p.ApprovalID)
		if err != nil {
			return err
		}
		if p.Check != nil {
			if err := p.Check(before); err != nil {
				return err
			}
		}
		after, err := scanApproval(tx.QueryRowContext(ctx, l.query("ApprovalRequestDecide"),
			p.ApprovalID,
			string(to),
			p.Actor,
			rawJSONArg(p.NewArgs),
			textArg(p.NewArgsHash),
		))
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return notPending(before)
		case err != nil:
			return fmt.Errorf("error updating the request: %w", err)
		}
		res.Request = after

		events, err := decisionEvents(p, before, after)
		if err != nil {
			return err
		}
		for _, e := range events {
			if _, err := l.appendEvent(ctx, tx, e); err != nil {
				return err
			}
		}
		if to == ApprovalApproved {
			tok, err := l.mintToken(ctx, tx, after, p.TokenTTL, p.Actor)
			if err != nil {
				return err
			}
			res.Token = &tok
		}
		if p.Signal != nil {
			sig := *p.Signal
			sig.ApprovalID = p.ApprovalID
			delivered := false
			if p.Wake != nil {
				res.WakeErr = p.Wake(ctx, sig)
				delivered = res.WakeErr == nil
			}
			queued, err := l.queueOutbox(ctx, tx, sig, delivered)
			if err != nil {
				return err
			}
			res.Signal = &queued
		}
		if p.ReadBack {
			return l.approvalReadBack(ctx, tx, &res)
		}
		return nil
	})
	if err != nil {
		return ApprovalDecideResult{}, fmt.Errorf("error deciding approval request %q: %w", p.ApprovalID, err)
	}
	return res, nil
}

// approvalReadBack reads what the decided request's view shows, in the
// decision's transaction: the caller answers without a read of its own.
func (l *ledger) approvalReadBack(ctx context.Context, tx *sql.Tx, res *ApprovalDecideResult) error {
	req := res.Request
	events, err := queryAll(ctx, tx, scanApprovalEvent, l.query("ApprovalEventListByApproval"), req.ID)
	if err != nil {
		return fmt.Errorf("error reading back the request's events: %w", err)
	}
	res.Events = events
	if req.InvocationID != "" {
		inv, err := scanInvocation(tx.QueryRowContext(ctx, l.query("InvocationGet"), req.InvocationID))
		switch {
		case err == nil:
			res.Invocation = &inv
		case !errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("error reading back the request's invocation: %w", err)
		}
	} else {
		eff, err := scanEffect(tx.QueryRowContext(ctx, l.query("EffectGet"), req.OperationKey))
		switch {
		case err == nil:
			res.Effect = &eff
		case !errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("error reading back the request's effect: %w", err)
		}
	}
	if req.SessionID != "" {
		sess, err := scanSession(tx.QueryRowContext(ctx, l.query("SessionGet"), req.SessionID))
		switch {
		case err == nil:
			res.Session = &sess
		case !errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("error reading back the request's session: %w", err)
		}
	}
	return nil
}

func (p ApprovalDecideParams) validate() error {
	switch p.Decision {
	case DecisionApprove, DecisionReject, DecisionModify:
	default:
		return fmt.Errorf("unknown decision %q", p.Decision)
	}
	modify := p.Decision == DecisionModify
	switch {
	case p.ApprovalID == "":
		return errors.New("approval ID is required")
	case p.Actor == "":
		return errors.New("actor is required")
	case p.Decision != DecisionReject && p.TokenTTL <= 0:
		return fmt.Errorf("token TTL must be positive, got %s", p.TokenTTL)
	case modify && (len(p.NewArgs) == 0 || p.NewArgsHash == ""):
		return errors.New("modify needs the new arguments and their hash")
	case !modify && (len(p.NewArgs) != 0 || p.NewArgsHash != ""):
		// Silently dropping edited arguments would approve something the
		// approver did not mean to.
		return fmt.Errorf("new arguments given with decision %q; use %q", p.Decision, DecisionModify)
	case modify && sha256Hex(p.NewArgs) != p.NewArgsHash:
		// Frozen arguments that do not hash to their recorded hash could
		// never pass the executor's check; refuse them before they are
		// approved rather than after.
		return errors.New("new arguments do not hash to the new arguments hash")
	}
	return nil
}

// decisionEvents is what a decision appends to the log: for modify, the
// edit with both hashes and both documents, then the approval of the result.
func decisionEvents(p ApprovalDecideParams, before, after ApprovalRequest) ([]ApprovalEvent, error) {
	reason, err := eventDetail{Reason: p.Reason}.encode()
	if err != nil {
		return nil, err
	}
	decided := ApprovalEvent{
		ApprovalID:     after.ID,
		Kind:           ApprovalEventKind(after.Status),
		Actor:          p.Actor,
		ArgsHashBefore: after.ArgsHash,
		Detail:         reason,
	}
	if p.Decision != DecisionModify {
		return []ApprovalEvent{decided}, nil
	}
	edit, err := eventDetail{Reason: p.Reason, ArgsBefore: before.Args, ArgsAfter: after.Args}.encode()
	if err != nil {
		return nil, err
	}
	modified := ApprovalEvent{
		ApprovalID:     after.ID,
		Kind:           ApprovalEventModified,
		Actor:          p.Actor,
		ArgsHashBefore: before.ArgsHash,
		ArgsHashAfter:  after.ArgsHash,
		Detail:         edit,
	}
	return []ApprovalEvent{modified, decided}, nil
}

// notPending explains why a decision found nothing to move, from the row
// read under the lock.
func notPending(req ApprovalRequest) error {
	if req.Status != ApprovalPending {
		return fmt.Errorf("request is %s: %w", req.Status, ErrApprovalNotPending)
	}
	return fmt.Errorf("request timed out at %s: %w", req.TimeoutAt.Format(time.RFC3339), ErrApprovalNotPending)
}

// approvalLock reads a request and locks it for the rest of tx. Decisions,
// mints and spends all take this lock first, so on one request they run
// one at a time and each reads what the one before it committed.
func (l *ledger) approvalLock(ctx context.Context, tx *sql.Tx, id string) (ApprovalRequest, error) {
	req, err := scanApproval(tx.QueryRowContext(ctx, l.query("ApprovalRequestGetForUpdate"), id))
	if err != nil {
		return ApprovalRequest{}, fmt.Errorf("error locking the request: %w", notFound(err))
	}
	return req, nil
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
