package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// ApprovalTokenSpend runs under the request's lock, so the reason read
// after a refused spend is the state the spend itself saw: a concurrent
// mint cannot slip a token in between.
func (l *ledger) ApprovalTokenSpend(ctx context.Context, approvalID, argsHash, usedBy string) (ApprovalToken, error) {
	switch {
	case argsHash == "":
		return ApprovalToken{}, fmt.Errorf("error spending token of approval request %q: args hash is required", approvalID)
	case usedBy == "":
		return ApprovalToken{}, fmt.Errorf("error spending token of approval request %q: used-by is required", approvalID)
	}

	return l.spendUnderLock(ctx, approvalID, "spending",
		func(tx *sql.Tx, req ApprovalRequest) (ApprovalToken, error, error) {
			return l.spendLocked(ctx, tx, req, argsHash, usedBy)
		})
}

// spendUnderLock runs spend in a transaction holding the request's lock.
// A refusal commits (its event is logged) and is returned as the error;
// with ErrTokenUsed the spent token comes back too. doing names the work
// in the error.
func (l *ledger) spendUnderLock(ctx context.Context, approvalID, doing string, spend func(*sql.Tx, ApprovalRequest) (tok ApprovalToken, refusal, err error)) (ApprovalToken, error) {
	var (
		tok     ApprovalToken
		refusal error
	)
	err := l.withTx(ctx, func(tx *sql.Tx) error {
		req, err := l.approvalLock(ctx, tx, approvalID)
		if err != nil {
			return err
		}
		tok, refusal, err = spend(tx, req)
		return err
	})
	if err == nil {
		err = refusal
	}
	if err != nil {
		if !errors.Is(err, ErrTokenUsed) {
			tok = ApprovalToken{}
		}
		return tok, fmt.Errorf("error %s token of approval request %q: %w", doing, approvalID, err)
	}
	return tok, nil
}

// spendLocked spends req's token for argsHash by usedBy under the
// request's lock, logging the spend or, when there is no token to spend,
// why (refusal): the refusal commits like any event.
func (l *ledger) spendLocked(ctx context.Context, tx *sql.Tx, req ApprovalRequest, argsHash, usedBy string) (tok ApprovalToken, refusal, err error) {
	tok, err = scanToken(tx.QueryRowContext(ctx, l.query("ApprovalTokenSpend"), req.ID, argsHash, usedBy))
	switch {
	case err == nil:
		detail, err := eventDetail{TokenID: tok.ID}.encode()
		if err != nil {
			return ApprovalToken{}, nil, err
		}
		_, err = l.appendEvent(ctx, tx, ApprovalEvent{
			ApprovalID:     req.ID,
			Kind:           ApprovalEventTokenUsed,
			Actor:          usedBy,
			ArgsHashBefore: tok.ArgsHash,
			Detail:         detail,
		})
		return tok, nil, err
	case !errors.Is(err, sql.ErrNoRows):
		return ApprovalToken{}, nil, fmt.Errorf("error spending the token: %w", err)
	}
	return l.refuseSpend(ctx, tx, req, argsHash, usedBy)
}

// refuseSpend logs why a spend of argsHash by usedBy found no token to
// spend, under the request's lock. The refusal is committed like any
// event; only the caller sees it as an error.
func (l *ledger) refuseSpend(ctx context.Context, tx *sql.Tx, req ApprovalRequest, argsHash, usedBy string) (tok ApprovalToken, refusal, err error) {
	tok, refusal = l.whyRefused(ctx, tx, req.ID, argsHash)
	reason, ok := refusalReason(refusal)
	if !ok {
		return ApprovalToken{}, nil, refusal
	}
	detail, err := eventDetail{
		Reason:            reason,
		TokenID:           tok.ID,
		PresentedArgsHash: argsHash,
	}.encode()
	if err != nil {
		return ApprovalToken{}, nil, err
	}
	_, err = l.appendEvent(ctx, tx, ApprovalEvent{
		ApprovalID:     req.ID,
		Kind:           ApprovalEventTokenRefused,
		Actor:          usedBy,
		ArgsHashBefore: req.ArgsHash,
		Detail:         detail,
	})
	return tok, refusal, err
}

// whyRefused says why a spend of argsHash matched no token, from the
// request's latest token: it returns that token and ErrTokenUsed,
// ErrTokenMismatch, ErrTokenExpired or ErrNoToken, or another error when
// it cannot tell. A spent token trumps everything: one approval, one
// execution. A mismatch comes before expiry because a fresh token would
// not cure it.
func (l *ledger) whyRefused(ctx context.Context, tx *sql.Tx, approvalID, argsHash string) (ApprovalToken, error) {
	var expired bool
	tok, err := scanToken(tx.QueryRowContext(ctx, l.query("ApprovalTokenGetLatest"), approvalID), &expired)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return ApprovalToken{}, ErrNoToken
	case err != nil:
		return ApprovalToken{}, fmt.Errorf("error reading the token: %w", err)
	case tok.UsedAt != nil:
		return tok, ErrTokenUsed
	case tok.ArgsHash != argsHash:
		return tok, ErrTokenMismatch
	case expired:
		return tok, ErrTokenExpired
	}
	// Unspent, live and matching, yet the spend missed it: the request's
	// lock makes that impossible, so say so rather than guess a reason.
	return ApprovalToken{}, fmt.Errorf("token %s is spendable but the spend did not match it", tok.ID)
}

// refusalReason names a spend refusal in the log, where Go's errors are
// not; ok is false for an error that is not a refusal.
func refusalReason(err error) (reason string, ok bool) {
	switch err {
	case ErrTokenUsed:
		return "used", true
	case ErrTokenMismatch:
		return "args_mismatch", true
	case ErrTokenExpired:
		return "expired", true
	case ErrNoToken:
		return "no_token", true
	}
	return "", false
}

func (l *ledger) ApprovalTokenMint(ctx context.Context, approvalID string, ttl time.Duration, actor string) (ApprovalToken, error) {
	switch {
	case ttl <= 0:
		return ApprovalToken{}, fmt.Errorf("error minting token for approval request %q: TTL must be positive, got %s", approvalID, ttl)
	case actor == "":
		return ApprovalToken{}, fmt.Errorf("error minting token for approval request %q: actor is required", approvalID)
	}
	var tok ApprovalToken
	err := l.withTx(ctx, func(tx *sql.Tx) error {
		req, err := l.approvalLock(ctx, tx, approvalID)
		if err != nil {
			return err
		}
		if req.Status != ApprovalApproved && req.Status != ApprovalAutoApproved {
			return fmt.Errorf("request is %s, and only an approved request gets a token: %w", req.Status, ErrApprovalNotPending)
		}
		tok, err = l.mintToken(ctx, tx, req, ttl, actor)
		return err
	})
	if err != nil {
		return ApprovalToken{}, fmt.Errorf("error minting token for approval request %q: %w", approvalID, err)
	}
	return tok, nil
}

func (l *ledger) ApprovalTokenMintSpend(ctx context.Context, approvalID string, ttl time.Duration, actor, usedBy string) (ApprovalToken, error) {
	switch {
	case ttl <= 0:
		return ApprovalToken{}, fmt.Errorf("error minting token for approval request %q: TTL must be positive, got %s", approvalID, ttl)
	case actor == "":
		return ApprovalToken{}, fmt.Errorf("error minting token for approval request %q: actor is required", approvalID)
	case usedBy == "":
		return ApprovalToken{}, fmt.Errorf("error spending token of approval request %q: used-by is required", approvalID)
	}
	return l.spendUnderLock(ctx, approvalID, "minting and spending",
		func(tx *sql.Tx, req ApprovalRequest) (ApprovalToken, error, error) {
			if req.Status != ApprovalAutoApproved {
				return ApprovalToken{}, nil, fmt.Errorf("request is %s, and only a request a policy approved mints its own token: %w", req.Status, ErrApprovalNotPending)
			}
			_, err := l.mintToken(ctx, tx, req, ttl, actor)
			switch {
			case errors.Is(err, ErrTokenUsed):
				// Spent already: say so as a spend would, so an attempt
				// retried after a crash recognises its own spend.
				return l.refuseSpend(ctx, tx, req, req.ArgsHash, usedBy)
			case err != nil:
				return ApprovalToken{}, nil, err
			}
			return l.spendLocked(ctx, tx, req, req.ArgsHash, usedBy)
		})
}

// mintToken binds a fresh token to req's arguments hash and logs it. The
// caller holds req's lock. Unspent tokens are superseded (deleted; the log
// keeps their minting), since at most one may be spendable, but a spent
// one ends the request's tokens for good.
func (l *ledger) mintToken(ctx context.Context, tx *sql.Tx, req ApprovalRequest, ttl time.Duration, actor string) (ApprovalToken, error) {
	var expired bool // of no consequence here: an unspent token is superseded either way
	latest, err := scanToken(tx.QueryRowContext(ctx, l.query("ApprovalTokenGetLatest"), req.ID), &expired)
	switch {
	case err == nil && latest.UsedAt != nil:
		return ApprovalToken{}, fmt.Errorf("token %s was spent by %s: %w", latest.ID, latest.UsedBy, ErrTokenUsed)
	case err != nil && !errors.Is(err, sql.ErrNoRows):
		return ApprovalToken{}, fmt.Errorf("error reading the token: %w", err)
	}

	scanID := func(row rowScanner) (string, error) {
		var id string
		err := row.Scan(&id)
		return id, err
	}
	superseded, err := queryAll(ctx, tx, scanID, l.query("ApprovalTokenDeleteUnused"), req.ID)
	if err != nil {
		return ApprovalToken{}, fmt.Errorf("error superseding unspent tokens: %w", err)
	}

	tok, err := scanToken(tx.QueryRowContext(ctx, l.query("ApprovalTokenInsert"),
		newTokenID(),
		req.ID,
		req.ArgsHash,
		ttl.Milliseconds(),
	))
	if err != nil {
		return ApprovalToken{}, fmt.Errorf("error inserting the token: %w", err)
	}
	detail, err := eventDetail{
		TokenID:            tok.ID,
		ExpiresAt:          tok.ExpiresAt,
		SupersededTokenIDs: superseded,
	}.encode()
	if err != nil {
		return ApprovalToken{}, err
	}
	if _, err := l.appendEvent(ctx, tx, ApprovalEvent{
		ApprovalID:     req.ID,
		Kind:           ApprovalEventTokenMinted,
		Actor:          actor,
		ArgsHashBefore: tok.ArgsHash,
		Detail:         detail,
	}); err != nil {
		return ApprovalToken{}, err
	}
	return tok, nil
}

// scanToken scans a token row followed by any extra columns into extra.
func scanToken(row rowScanner, extra ...any) (ApprovalToken, error) {
	var t ApprovalToken
	dest := []any{
		&t.ID,
		&t.ApprovalID,
		&t.ArgsHash,
		timeCol{&t.ExpiresAt},
		nullTimeCol{&t.UsedAt},
		textCol{&t.UsedBy},
		timeCol{&t.CreatedAt},
	}
	err := row.Scan(append(dest, extra...)...)
	return t, err
}
