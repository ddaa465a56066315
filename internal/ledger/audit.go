package ledger

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/maestro-run/maestro/maestrotype"
)

// AuditMoneyEffects holds the money path to its promise: every effect of
// a money-class tool traces back to a human approval of exactly its
// payload, spent as a token, and every spent token to an effect. It reads
// the append-only log rather than the mutable token rows for the spends,
// and judges each effect by the class frozen when it ran, flagging a tool
// the catalog has since reclassified or dropped.
func (l *ledger) AuditMoneyEffects(ctx context.Context) ([]AuditFinding, error) {
	effects, err := queryAll(ctx, l.conn, scanMoneyEffect, l.query("AuditMoneyEffectList"))
	if err != nil {
		return nil, fmt.Errorf("error auditing money effects: %w", err)
	}
	orphans, err := queryAll(ctx, l.conn, scanOrphanApproval, l.query("AuditMoneyApprovalWithoutEffectList"))
	if err != nil {
		return nil, fmt.Errorf("error auditing money approvals: %w", err)
	}

	changed, err := queryAll(ctx, l.conn, scanClassChange, l.query("AuditClassChangedList"))
	if err != nil {
		return nil, fmt.Errorf("error auditing reclassified tools: %w", err)
	}

	findings := []AuditFinding{}
	for _, e := range effects {
		findings = append(findings, e.findings()...)
	}
	for _, o := range orphans {
		findings = append(findings, AuditFinding{
			Kind:         AuditApprovalWithoutEffect,
			OperationKey: o.OperationKey,
			Tool:         o.Tool,
			ApprovalID:   o.ApprovalID,
			Detail:       fmt.Sprintf("a token of approval %s was spent, but no effect was claimed for its operation key", o.ApprovalID),
		})
	}
	for _, c := range changed {
		findings = append(findings, c.finding())
	}
	// Stable, so one key's findings keep the order they were checked in.
	slices.SortStableFunc(findings, func(a, b AuditFinding) int { return cmp.Compare(a.OperationKey, b.OperationKey) })
	return findings, nil
}

// moneyEffect is an effect of a money-class tool with what the ledger
// knows of its approval.
type moneyEffect struct {
	OperationKey   string
	Tool           string
	PayloadHash    string
	Status         maestrotype.EffectStatus
	ApprovalID     string // empty when there is no request
	ApprovalStatus ApprovalStatus
	ApprovedHash   string
	// TokensUsed counts 'token_used' events; TokensUsedForOtherArgs those
	// whose hash is not the effect's payload hash.
	TokensUsed             int64
	TokensUsedForOtherArgs int64
}

// findings checks one effect. A missing request makes the other checks
// moot; otherwise every check that fails is reported, since each points
// at a different broken link.
func (e moneyEffect) findings() []AuditFinding {
	finding := func(kind, format string, args ...any) AuditFinding {
		return AuditFinding{
			Kind:         kind,
			OperationKey: e.OperationKey,
			Tool:         e.Tool,
			ApprovalID:   e.ApprovalID,
			Detail:       fmt.Sprintf(format, args...),
		}
	}
	if e.ApprovalID == "" {
		return []AuditFinding{finding(AuditNoApproval, "a %s money effect has no approval request", e.Status)}
	}
	var out []AuditFinding
	if e.ApprovalStatus != ApprovalApproved {
		out = append(out, finding(AuditNotApproved, "the approval request is %s; money needs a human approval", e.ApprovalStatus))
	}
	if e.TokensUsed == 0 {
		out = append(out, finding(AuditTokenUnused, "a %s money effect ran without spending an approval token", e.Status))
	}
	switch {
	case e.ApprovedHash != e.PayloadHash:
		out = append(out, finding(AuditHashMismatch, "the effect's payload hash %s is not the approved arguments hash %s", e.PayloadHash, e.ApprovedHash))
	case e.TokensUsedForOtherArgs > 0:
		out = append(out, finding(AuditHashMismatch, "a token spent for this approval was bound to arguments other than the effect's payload %s", e.PayloadHash))
	}
	return out
}

func scanMoneyEffect(row rowScanner) (moneyEffect, error) {
	var e moneyEffect
	err := row.Scan(
		&e.OperationKey,
		&e.Tool,
		&e.PayloadHash,
		&e.Status,
		textCol{&e.ApprovalID},
		textCol{(*string)(&e.ApprovalStatus)},
		textCol{&e.ApprovedHash},
		&e.TokensUsed,
		&e.TokensUsedForOtherArgs,
	)
	return e, err
}

// orphanApproval is a money request whose token was spent but which has
// no effect.
type orphanApproval struct {
	OperationKey string
	Tool         string
	ApprovalID   string
}

func scanOrphanApproval(row rowScanner) (orphanApproval, error) {
	var o orphanApproval
	err := row.Scan(&o.OperationKey, &o.Tool, &o.ApprovalID)
	return o, err
}

// classChange is a tool whose effects ran under a class the current
// registry no longer gives it.
type classChange struct {
	Tool string
	// Frozen is the class the effects ran under; Current is the class
	// now, empty when the tool left the catalog.
	Frozen, Current maestrotype.Effect
	Effects         int64
	FirstKey        string
	FrozenCatalog   string // one catalog version the effects ran under
}

func (c classChange) finding() AuditFinding {
	now := fmt.Sprintf("the catalog now classifies it %s", c.Current)
	if c.Current == "" {
		now = "the catalog no longer has it"
	}
	return AuditFinding{
		Kind:         AuditClassChanged,
		OperationKey: c.FirstKey,
		Tool:         c.Tool,
		Detail: fmt.Sprintf("%d effect(s) of %s ran classified %s (catalog %s); %s, so review them by the class they ran under",
			c.Effects, c.Tool, c.Frozen, shortVersion(c.FrozenCatalog), now),
	}
}

// shortVersion keeps a catalog hash readable in a finding.
func shortVersion(v string) string {
	if v == "" {
		return "unrecorded"
	}
	return v[:min(12, len(v))]
}

func scanClassChange(row rowScanner) (classChange, error) {
	var c classChange
	err := row.Scan(
		&c.Tool,
		&c.Frozen,
		textCol{(*string)(&c.Current)},
		&c.Effects,
		&c.FirstKey,
		textCol{&c.FrozenCatalog},
	)
	return c, err
}
