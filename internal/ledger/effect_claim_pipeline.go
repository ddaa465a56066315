package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// claimSpentPipelined is EffectClaim with a spend on PostgreSQL in two
// round trips: BEGIN, the request's lock, the mint, the spend and the
// claim go in one pipeline, each statement written to take effect only if
// the ones before it did (a mint only for a request a policy approved for
// these arguments that has no token yet, a spend only of that token or of
// the one a person's decision minted, a claim only of a key no one holds
// in an open session and only with the spend taken); COMMIT follows once
// Go has seen the plain outcome. Anything else is rolled back and ok is
// false: the step-by-step transaction then decides it, with the events
// and answers it has always given, since the pipeline left nothing behind.
func (l *ledger) claimSpentPipelined(ctx context.Context, p EffectClaimParams, beforeRead any) (EffectClaimResult, bool, error) {
	var (
		res EffectClaimResult
		ok  bool
	)
	// Under another driver nothing runs and ok stays false: the
	// step-by-step transaction serves it.
	_, err := l.onPgxConn(ctx, func(pc *pgx.Conn) error {
		var err error
		res, ok, err = l.claimSpentOn(ctx, pc, p, beforeRead)
		return err
	})
	if err != nil {
		return EffectClaimResult{}, false, err
	}
	return res, ok, nil
}

// claimSpentOn sends the pipeline and commits its plain outcome; ok is
// false, with the transaction left for the caller to roll back, for any
// other.
func (l *ledger) claimSpentOn(ctx context.Context, pc *pgx.Conn, p EffectClaimParams, beforeRead any) (EffectClaimResult, bool, error) {
	s := p.Spend
	tokenID := newTokenID()
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(l.query("ApprovalRequestGetForUpdate"), s.ApprovalID)
	b.Queue(l.query("ApprovalTokenMintForClaimCTE"), s.ApprovalID, p.PayloadHash, tokenID, s.MintTTL.Milliseconds())
	b.Queue(l.query("ApprovalTokenSpendForClaimCTE"), s.ApprovalID, p.PayloadHash, s.UsedBy, tokenID)
	b.Queue(l.query("EffectClaimNewCTE"), claimNewArgs(p, s, beforeRead)...)
	res, plain := readClaimSpentBatch(pc.SendBatch(ctx, b), p)
	if !plain {
		return EffectClaimResult{}, false, nil
	}
	if _, err := pc.Exec(ctx, "COMMIT"); err != nil {
		return EffectClaimResult{}, false, fmt.Errorf("error committing transaction: %w", err)
	}
	return res, true, nil
}

// readClaimSpentBatch reads the pipeline's results in the order queued and
// closes it. plain is true when the request is approved for the claim's
// arguments and still hashes to them, a request a policy approved minted
// its token, the token was spent and the key claimed; an error of any
// statement is not plain either, and is met again, or not, step by step.
func readClaimSpentBatch(br pgx.BatchResults, p EffectClaimParams) (res EffectClaimResult, plain bool) {
	defer func() {
		if err := br.Close(); err != nil {
			plain = false
		}
	}()
	if _, err := br.Exec(); err != nil {
		return EffectClaimResult{}, false
	}
	req, err := scanApproval(br.QueryRow())
	if err != nil {
		return EffectClaimResult{}, false
	}
	approved := req.Status == ApprovalApproved || req.Status == ApprovalAutoApproved
	plain = approved && req.ArgsHash == p.PayloadHash && sha256Hex(req.Args) == req.ArgsHash

	_, err = scanToken(br.QueryRow())
	minted := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		plain = false
	}
	// A person's approval minted its token with the decision; a policy's
	// mints it here.
	plain = plain && minted == (req.Status == ApprovalAutoApproved)

	if _, err := scanToken(br.QueryRow()); err != nil {
		plain = false
	}
	res, claimed, err := scanClaimNew(br.QueryRow(), p)
	if err != nil || !claimed {
		plain = false
	}
	return res, plain
}
