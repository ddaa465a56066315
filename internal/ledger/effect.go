package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/maestro-run/maestro/maestrotype"
)

// EffectClaim decides, in one transaction, who may perform the effect of an
// operation key:
//
//   - INSERT … ON CONFLICT DO NOTHING is the arbiter: of any number of
//     concurrent claimers exactly one inserts and gets ClaimNew, and its undo
//     entry commits with the claim.
//   - Everyone else reads the row under a write lock (FOR UPDATE in
//     PostgreSQL; SQLite's transactions hold the database's write lock) and
//     decides from it: another payload is ClaimConflict, a final status is
//     ClaimSettled, a live lease is ClaimBusy, and an expired lease is taken
//     over (ClaimTakeover).
//
// Leases are judged on the database's clock, the one clock all workers
// share, so a worker with a skewed clock cannot take over early.
func (l *ledger) EffectClaim(ctx context.Context, p EffectClaimParams) (EffectClaimResult, error) {
	if err := p.validate(); err != nil {
		return EffectClaimResult{}, fmt.Errorf("error claiming effect %q: %w", p.OperationKey, err)
	}
	leaseMillis := p.LeaseTTL.Milliseconds()
	beforeRead, err := p.beforeReadArg()
	if err != nil {
		return EffectClaimResult{}, fmt.Errorf("error claiming effect %q: %w", p.OperationKey, err)
	}

	if l.writeCTEs {
		// Most claims are new: one statement claims them, or one pipeline
		// spends their token and claims them, and only the rest (a key
		// already taken, a closed session, a request not approved for
		// these arguments, a token spent or minted before) need the
		// transaction below, which decides them step by step.
		var (
			res EffectClaimResult
			ok  bool
			err error
		)
		if p.Spend == nil {
			res, ok, err = l.claimNew(ctx, l.db, p, beforeRead)
		} else {
			res, ok, err = l.claimSpentPipelined(ctx, p, beforeRead)
		}
		if err != nil {
			return EffectClaimResult{}, fmt.Errorf("error claiming effect %q: %w", p.OperationKey, err)
		}
		if ok {
			return res, nil
		}
	}

	var res EffectClaimResult
	err = l.withTx(ctx, func(tx *sql.Tx) error {
		if p.Spend != nil {
			// The token is spent before the key is claimed and in the same
			// transaction: a claim without its spend, or a spend without
			// its claim, never commits.
			tok, undecided, refusal, err := l.spendForClaim(ctx, tx, p)
			if err != nil {
				return err
			}
			if undecided != nil {
				res = EffectClaimResult{Approval: undecided}
				return nil
			}
			if refusal != nil && !(errors.Is(refusal, ErrTokenUsed) && tok.UsedBy == p.Spend.UsedBy) {
				// The refusal's event commits; nothing is claimed.
				res = EffectClaimResult{Spend: fmt.Errorf("error spending token of approval request %q: %w", p.Spend.ApprovalID, refusal), Token: tok}
				return nil
			}
			if l.writeCTEs {
				got, ok, err := l.claimNew(ctx, tx, p, beforeRead)
				if err != nil || ok {
					res = got
					return err
				}
			}
		}
		closed, err := l.sessionClosedToClaims(ctx, tx, p.SessionID)
		if err != nil {
			return err
		}
		eff, err := scanEffect(tx.QueryRowContext(ctx, l.query("EffectInsert"),
			p.OperationKey,
			textArg(p.InvocationID),
			p.Tool,
			p.PayloadHash,
			p.Owner,
			leaseMillis,
			rawJSONArg(p.BeforeState),
			textArg(string(p.EffectClass)),
			textArg(p.CatalogVersion),
			beforeRead,
		))
		switch {
		case err == nil && closed:
			return errSessionClosed
		case err == nil:
			res = EffectClaimResult{Outcome: ClaimNew, Effect: eff}
			if p.Undo != nil {
				undo, err := l.undoPush(ctx, tx, p.OperationKey, *p.Undo)
				if err != nil {
					return err
				}
				res.Undo = &undo
			}
			return nil
		case !errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("error inserting effect: %w", err)
		}

		var leaseExpired bool
		eff, err = scanEffect(tx.QueryRowContext(ctx, l.query("EffectGetForClaim"), p.OperationKey), &leaseExpired)
		if err != nil {
			return fmt.Errorf("error reading claimed effect: %w", err)
		}
		switch {
		case eff.PayloadHash != p.PayloadHash:
			res = EffectClaimResult{Outcome: ClaimConflict, Effect: eff}
			return nil
		case eff.Status != maestrotype.EffectInProgress:
			res = EffectClaimResult{Outcome: ClaimSettled, Effect: eff}
			return nil
		case !leaseExpired && eff.LeaseOwner != handedOverTo(p.Owner):
			res = EffectClaimResult{Outcome: ClaimBusy, Effect: eff}
			return nil
		}
		// An expired lease, or one handed over to this very claimer
		// (EffectHandOver): either way the claimer takes the key over, and
		// what the provider did is still to be found out.

		eff, err = scanEffect(tx.QueryRowContext(ctx, l.query("EffectTakeover"), p.OperationKey, p.Owner, leaseMillis))
		if err != nil {
			return fmt.Errorf("error taking over expired lease: %w", err)
		}
		res = EffectClaimResult{Outcome: ClaimTakeover, Effect: eff}
		return nil
	})
	if errors.Is(err, errSessionClosed) {
		// The insert rolled back with the transaction: nothing is claimed.
		return EffectClaimResult{Outcome: ClaimSessionClosed}, nil
	}
	if err != nil {
		return EffectClaimResult{}, fmt.Errorf("error claiming effect %q: %w", p.OperationKey, err)
	}
	return res, nil
}

// claimNew claims a key no one holds in one statement (EffectClaimNewCTE)
// and reports ok; ok is false, with nothing written, when the key is taken
// or the session is being rolled back.
func (l *ledger) claimNew(ctx context.Context, q querier, p EffectClaimParams, beforeRead any) (EffectClaimResult, bool, error) {
	return scanClaimNew(q.QueryRowContext(ctx, l.query("EffectClaimNewCTE"), claimNewArgs(p, nil, beforeRead)...), p)
}

// claimNewArgs are EffectClaimNewCTE's arguments; a spend makes the claim
// wait on the token spent in its transaction. beforeRead is
// p.beforeReadArg's.
func claimNewArgs(p EffectClaimParams, spend *ApprovalSpend, beforeRead any) []any {
	undo := []any{nil, nil, nil, nil, nil}
	if p.Undo != nil {
		u := *p.Undo
		undo = []any{idOr(u.ID, "undo"), u.SessionID, u.CompensationTool, textArg(u.CompensationVersion), rawJSONArg(u.ArgsSnapshot)}
	}
	spent := []any{nil, nil}
	if spend != nil {
		spent = []any{spend.ApprovalID, spend.UsedBy}
	}
	args := []any{
		p.OperationKey,
		textArg(p.InvocationID),
		p.Tool,
		p.PayloadHash,
		p.Owner,
		p.LeaseTTL.Milliseconds(),
		rawJSONArg(p.BeforeState),
		textArg(string(p.EffectClass)),
		textArg(p.CatalogVersion),
		textArg(p.SessionID),
	}
	return append(append(append(args, undo...), spent...), beforeRead)
}

// beforeReadArg encodes p.BeforeRead, or is nil without one.
func (p EffectClaimParams) beforeReadArg() (any, error) {
	if p.BeforeRead == nil {
		return nil, nil
	}
	b, err := jsonArg(p.BeforeRead)
	if err != nil {
		return nil, fmt.Errorf("error encoding the before read: %w", err)
	}
	return b, nil
}

// scanClaimNew reads EffectClaimNewCTE's row: ok is false when there is
// none.
func scanClaimNew(row rowScanner, p EffectClaimParams) (EffectClaimResult, bool, error) {
	var (
		u      UndoEntry
		noUndo [11]any
		extra  []any
	)
	if p.Undo != nil {
		extra = undoDest(&u)
	} else {
		for i := range noUndo {
			extra = append(extra, &noUndo[i])
		}
	}
	eff, err := scanEffect(row, extra...)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return EffectClaimResult{}, false, nil
	case err != nil:
		return EffectClaimResult{}, false, fmt.Errorf("error inserting effect: %w", err)
	}
	res := EffectClaimResult{Outcome: ClaimNew, Effect: eff}
	if p.Undo != nil {
		res.Undo = &u
	}
	return res, true, nil
}

// spendForClaim spends p.Spend's token for p.PayloadHash under the
// request's lock, minting it first for a request a policy approved. A
// request not approved for p.PayloadHash comes back as undecided, with
// nothing written; a refusal is returned as refusal, its event written to
// tx.
func (l *ledger) spendForClaim(ctx context.Context, tx *sql.Tx, p EffectClaimParams) (tok ApprovalToken, undecided *ApprovalRequest, refusal, err error) {
	s := p.Spend
	req, err := l.approvalLock(ctx, tx, s.ApprovalID)
	if err != nil {
		return ApprovalToken{}, nil, nil, fmt.Errorf("error spending token of approval request %q: %w", s.ApprovalID, err)
	}
	approved := req.Status == ApprovalApproved || req.Status == ApprovalAutoApproved
	// Frozen arguments that no longer hash to their hash were changed
	// behind the request's back: the caller refuses them, not the claim.
	if !approved || req.ArgsHash != p.PayloadHash || sha256Hex(req.Args) != req.ArgsHash {
		return ApprovalToken{}, &req, nil, nil
	}
	if req.Status == ApprovalAutoApproved {
		if s.MintTTL <= 0 {
			return ApprovalToken{}, nil, nil, fmt.Errorf("error minting token of approval request %q: TTL must be positive, got %s", req.ID, s.MintTTL)
		}
		_, err := l.mintToken(ctx, tx, req, s.MintTTL, req.DecidedBy)
		switch {
		case errors.Is(err, ErrTokenUsed):
			// Spent already: say so as a spend would, so an attempt
			// retried after a crash recognises its own spend.
			tok, refusal, err = l.refuseSpend(ctx, tx, req, p.PayloadHash, s.UsedBy)
			return tok, nil, refusal, err
		case err != nil:
			return ApprovalToken{}, nil, nil, fmt.Errorf("error minting token of approval request %q: %w", req.ID, err)
		}
	}
	tok, refusal, err = l.spendLocked(ctx, tx, req, p.PayloadHash, s.UsedBy)
	return tok, nil, refusal, err
}

// errSessionClosed rolls back a new claim in a session being rolled back.
var errSessionClosed = errors.New("the session is being rolled back")

// sessionClosedToClaims reads the claim's session under a shared lock,
// held until the claim commits, and reports whether a rollback has begun.
// A session the ledger does not hold (a claim made outside admission) is
// open.
func (l *ledger) sessionClosedToClaims(ctx context.Context, tx *sql.Tx, sessionID string) (bool, error) {
	if sessionID == "" {
		return false, nil
	}
	s, err := scanSession(tx.QueryRowContext(ctx, l.query("SessionGetForClaim"), sessionID))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("error reading the claim's session: %w", err)
	}
	return s.RollbackStartedAt != nil, nil
}

func (p EffectClaimParams) validate() error {
	switch {
	case p.OperationKey == "":
		return errors.New("operation key is required")
	case p.PayloadHash == "":
		return errors.New("payload hash is required")
	case p.Owner == "":
		return errors.New("owner is required")
	case p.LeaseTTL <= 0:
		return fmt.Errorf("lease TTL must be positive, got %s", p.LeaseTTL)
	case p.Undo != nil && p.Undo.OperationKey != "" && p.Undo.OperationKey != p.OperationKey:
		return fmt.Errorf("undo entry is for operation key %q", p.Undo.OperationKey)
	case p.Spend != nil && (p.Spend.ApprovalID == "" || p.Spend.UsedBy == ""):
		return errors.New("a spend names its approval request and its spender")
	}
	return nil
}

func (l *ledger) EffectSettle(ctx context.Context, p EffectSettleParams) error {
	args, err := p.args()
	if err != nil {
		return fmt.Errorf("error settling effect %q: %w", p.OperationKey, err)
	}
	res, err := l.db.ExecContext(ctx, l.query("EffectSettle"), args...)
	if err == nil {
		// No row: the key was taken over, already settled or never claimed.
		// In each case this owner does not hold the lease.
		err = expectOne(res, ErrLeaseLost)
	}
	if err != nil {
		return fmt.Errorf("error settling effect %q: %w", p.OperationKey, asReceiptTaken(err))
	}
	return nil
}

// EffectSettleFinish is one statement on PostgreSQL and one transaction on
// SQLite: the settle's outcome and the invocation's are never apart, and
// the session's rollback is read where they are written.
func (l *ledger) EffectSettleFinish(ctx context.Context, p EffectSettleParams, f InvocationFinishParams) (FinishedInvocation, error) {
	args, err := p.args()
	if err == nil {
		err = f.validate()
	}
	if err != nil {
		return FinishedInvocation{}, fmt.Errorf("error settling effect %q: %w", p.OperationKey, err)
	}
	obs, err := jsonArg(&f.Observation)
	if err != nil {
		return FinishedInvocation{}, fmt.Errorf("error settling effect %q: %w", p.OperationKey, err)
	}
	back, err := jsonArg(f.RollingBack)
	if err != nil {
		return FinishedInvocation{}, fmt.Errorf("error settling effect %q: %w", p.OperationKey, err)
	}
	finish := []any{f.InvocationID, string(f.State), obs, textArg(f.SessionID), back}

	var (
		settled bool
		fin     FinishedInvocation
	)
	if l.writeCTEs {
		settled, fin, err = scanSettleFinish(l.db.QueryRowContext(ctx, l.query("EffectSettleFinishCTE"),
			append(append(args, finish...), textArg(f.MessageProvider))...), f.MessageProvider, p.AfterRead != nil)
	} else {
		err = l.withTx(ctx, func(tx *sql.Tx) error {
			res, err := tx.ExecContext(ctx, l.query("EffectSettle"), args...)
			if err != nil {
				return err
			}
			if err := expectOne(res, ErrLeaseLost); err != nil {
				return err
			}
			settled = true
			if p.AfterRead != nil {
				reads, err := scanStateReads(tx.QueryRowContext(ctx, l.query("EffectStateReadsGet"), p.OperationKey))
				if err != nil {
					return err
				}
				fin.StateReads = &reads
			}
			// No invocation row leaves the settle standing, as the one
			// statement does on PostgreSQL.
			err = tx.QueryRowContext(ctx, l.query("InvocationFinishSettled"), finish...).
				Scan(append([]any{&fin.RollingBack}, invocationDest(&fin.Invocation)...)...)
			if errors.Is(err, sql.ErrNoRows) {
				return nil
			}
			if err != nil {
				return err
			}
			return l.messageOfFinished(ctx, tx, &fin, f.MessageProvider)
		})
	}
	switch {
	case err != nil:
	case !settled:
		// No row: the key was taken over, already settled or never claimed.
		// In each case this owner does not hold the lease.
		err = ErrLeaseLost
	case fin.Invocation.ID == "":
		err = fmt.Errorf("invocation %q: %w", f.InvocationID, ErrNotFound)
	}
	if err != nil {
		return FinishedInvocation{}, fmt.Errorf("error settling effect %q: %w", p.OperationKey, asReceiptTaken(err))
	}
	return fin, nil
}

// args are EffectSettle's arguments.
func (p EffectSettleParams) args() ([]any, error) {
	switch p.Status {
	case maestrotype.EffectSucceeded, maestrotype.EffectFailed, maestrotype.EffectNeedsReconciliation:
	default:
		return nil, fmt.Errorf("status %q is not final", p.Status)
	}
	if p.AfterRead != nil && p.Status != maestrotype.EffectSucceeded {
		return nil, fmt.Errorf("an after read is recorded only with a succeeded effect, not %q", p.Status)
	}
	receipt, err := jsonArg(p.Receipt)
	if err != nil {
		return nil, err
	}
	result, err := jsonArg(p.Result)
	if err != nil {
		return nil, err
	}
	afterRead, err := jsonArg(p.AfterRead)
	if err != nil {
		return nil, err
	}
	return []any{
		p.OperationKey,
		p.Owner,
		string(p.Status),
		receipt,
		rawJSONArg(p.AfterState),
		result,
		textArg(p.Error),
		afterRead,
	}, nil
}

func (f InvocationFinishParams) validate() error {
	switch {
	case f.InvocationID == "":
		return errors.New("the invocation to finish is required")
	case !f.State.Terminal():
		return fmt.Errorf("invocation state %q is not final", f.State)
	}
	return nil
}

// handedOverTo is the lease owner a handed-over claim records until the
// attempt it names takes it over. It can never equal an attempt's own
// name, so an attempt that claims twice still finds its first claim busy.
func handedOverTo(owner string) string {
	return "handed-over-to:" + owner
}

func (l *ledger) EffectHandOver(ctx context.Context, operationKey, owner, to string, ttl time.Duration) error {
	switch {
	case to == "":
		return fmt.Errorf("error handing over effect %q: the next owner is required", operationKey)
	case ttl <= 0:
		return fmt.Errorf("error handing over effect %q: TTL must be positive, got %s", operationKey, ttl)
	}
	res, err := l.db.ExecContext(ctx, l.query("EffectHandOver"), operationKey, owner, handedOverTo(to), ttl.Milliseconds())
	if err == nil {
		err = expectOne(res, ErrLeaseLost)
	}
	if err != nil {
		return fmt.Errorf("error handing over effect %q: %w", operationKey, err)
	}
	return nil
}

func (l *ledger) EffectGet(ctx context.Context, operationKey string) (Effect, error) {
	eff, err := scanEffect(l.conn.QueryRowContext(ctx, l.query("EffectGet"), operationKey))
	if err != nil {
		return Effect{}, fmt.Errorf("error getting effect %q: %w", operationKey, notFound(err))
	}
	return eff, nil
}

func (l *ledger) EffectListByStatus(ctx context.Context, status maestrotype.EffectStatus, limit int) ([]Effect, error) {
	scan := func(row rowScanner) (Effect, error) { return scanEffect(row) }
	effs, err := queryAll(ctx, l.conn, scan, l.query("EffectListByStatus"), string(status), listLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("error listing %s effects: %w", status, err)
	}
	return effs, nil
}

// scanEffect scans an effect row followed by any extra columns into extra.
func scanEffect(row rowScanner, extra ...any) (Effect, error) {
	var e Effect
	dest := []any{
		&e.OperationKey,
		textCol{&e.InvocationID},
		&e.Tool,
		&e.PayloadHash,
		&e.Status,
		&e.LeaseOwner,
		timeCol{&e.LeaseExpiresAt},
		&e.Attempts,
		rawJSONCol{&e.BeforeState},
		rawJSONCol{&e.AfterState},
		jsonCol[*maestrotype.Receipt]{&e.Receipt},
		jsonCol[*maestrotype.Observation]{&e.Result},
		textCol{&e.Error},
		timeCol{&e.CreatedAt},
		timeCol{&e.UpdatedAt},
	}
	err := row.Scan(append(dest, extra...)...)
	return e, err
}

func (l *ledger) EffectRelease(ctx context.Context, operationKey, owner string) error {
	err := l.withTx(ctx, func(tx *sql.Tx) error {
		// The undo entry goes first: it references the effect row.
		if _, err := tx.ExecContext(ctx, l.query("UndoDeleteByKey"), operationKey); err != nil {
			return fmt.Errorf("error deleting undo entry: %w", err)
		}
		res, err := tx.ExecContext(ctx, l.query("EffectRelease"), operationKey, owner)
		if err != nil {
			return fmt.Errorf("error deleting effect: %w", err)
		}
		return expectOne(res, ErrLeaseLost)
	})
	if err != nil {
		return fmt.Errorf("error releasing effect %q: %w", operationKey, err)
	}
	return nil
}
