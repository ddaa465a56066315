package ledgertest

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/maestrotype"
)

func testAuditMoneyEffects(t *testing.T, setup setupFunc) {
	refund := ledger.ToolRegistryRow{
		Name: "payments.refund", Effect: maestrotype.EffectMoney, Delivery: maestrotype.DeliveryRealSync,
		Reversibility: maestrotype.ReversibilityIrreversible, ApproverRole: "finance",
		ConnectorKind: "http", Owner: "payments", CatalogHash: "h1",
	}
	sms := ledger.ToolRegistryRow{
		Name: "sms.send", Effect: maestrotype.EffectWrite, Delivery: maestrotype.DeliveryRealSync,
		Reversibility: maestrotype.ReversibilityCompensable, CompensationTool: "sms.retract",
		ConnectorKind: "twilio", Owner: "comms", CatalogHash: "h1",
	}
	otherArgs := hashOf(json.RawMessage(`{"amount":{"cents":999999}}`))

	t.Run("CleanLedgerHasNoFindings", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		require.NoError(t, s.ToolRegistrySync(ctx, []ledger.ToolRegistryRow{refund, sms}))

		findings, err := s.AuditMoneyEffects(ctx)
		require.NoError(t, err)
		require.NotNil(t, findings)
		require.Empty(t, findings, "an empty ledger")

		req := spentApproval(t, ctx, s)
		settledEffect(t, ctx, s, req.OperationKey, refund.Name, req.ArgsHash, maestrotype.EffectSucceeded)
		// Neither a write nor a money call that provably did not happen
		// needs an approval.
		settledEffect(t, ctx, s, newKey(), sms.Name, otherArgs, maestrotype.EffectSucceeded)
		settledEffect(t, ctx, s, newKey(), refund.Name, otherArgs, maestrotype.EffectFailed)

		findings, err = s.AuditMoneyEffects(ctx)
		require.NoError(t, err)
		require.NotNil(t, findings)
		require.Empty(t, findings)
	})

	t.Run("ReportsEachDivergence", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		require.NoError(t, s.ToolRegistrySync(ctx, []ledger.ToolRegistryRow{refund, sms}))

		type finding struct{ Kind, OperationKey, ApprovalID string }
		var want []finding

		for _, status := range []maestrotype.EffectStatus{
			maestrotype.EffectSucceeded, maestrotype.EffectInProgress, maestrotype.EffectNeedsReconciliation,
		} {
			key := newKey()
			settledEffect(t, ctx, s, key, refund.Name, otherArgs, status)
			want = append(want, finding{ledger.AuditNoApproval, key, ""})
		}

		unspent := openRequest(t, ctx, s)
		approve(t, ctx, s, unspent.ID, time.Hour)
		settledEffect(t, ctx, s, unspent.OperationKey, refund.Name, unspent.ArgsHash, maestrotype.EffectSucceeded)
		want = append(want, finding{ledger.AuditTokenUnused, unspent.OperationKey, unspent.ID})

		swapped := spentApproval(t, ctx, s)
		settledEffect(t, ctx, s, swapped.OperationKey, refund.Name, otherArgs, maestrotype.EffectSucceeded)
		want = append(want, finding{ledger.AuditHashMismatch, swapped.OperationKey, swapped.ID})

		// Money that a rule let through: the token was spent and the
		// payload matches, but no human approved it.
		now := time.Now()
		a := newApprovalRequest(soon())
		a.Status, a.DecidedBy, a.DecidedAt = ledger.ApprovalAutoApproved, "rule:amount < 10", &now
		ruled, err := s.ApprovalRequestInsert(ctx, a)
		require.NoError(t, err)
		_, err = s.ApprovalTokenMint(ctx, ruled.ID, time.Hour, a.DecidedBy)
		require.NoError(t, err)
		_, err = s.ApprovalTokenSpend(ctx, ruled.ID, ruled.ArgsHash, "worker:a")
		require.NoError(t, err)
		settledEffect(t, ctx, s, ruled.OperationKey, refund.Name, ruled.ArgsHash, maestrotype.EffectSucceeded)
		want = append(want, finding{ledger.AuditNotApproved, ruled.OperationKey, ruled.ID})

		// Rejected, yet something ran: every broken link is reported.
		rejected := openRequest(t, ctx, s)
		_, err = s.ApprovalDecide(ctx, ledger.ApprovalDecideParams{
			ApprovalID: rejected.ID, Decision: ledger.DecisionReject, Actor: operator,
		})
		require.NoError(t, err)
		settledEffect(t, ctx, s, rejected.OperationKey, refund.Name, otherArgs, maestrotype.EffectSucceeded)
		want = append(want,
			finding{ledger.AuditNotApproved, rejected.OperationKey, rejected.ID},
			finding{ledger.AuditTokenUnused, rejected.OperationKey, rejected.ID},
			finding{ledger.AuditHashMismatch, rejected.OperationKey, rejected.ID},
		)

		orphan := spentApproval(t, ctx, s)
		want = append(want, finding{ledger.AuditApprovalWithoutEffect, orphan.OperationKey, orphan.ID})

		findings, err := s.AuditMoneyEffects(ctx)
		require.NoError(t, err)
		got := make([]finding, len(findings))
		for i, f := range findings {
			require.Equal(t, refund.Name, f.Tool)
			require.NotEmpty(t, f.Detail)
			got[i] = finding{f.Kind, f.OperationKey, f.ApprovalID}
		}
		slices.SortStableFunc(want, func(a, b finding) int { return cmp.Compare(a.OperationKey, b.OperationKey) })
		require.Equal(t, want, got, "sorted by operation key")
	})

	t.Run("CoversCompensationsRunByARollback", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		charge := ledger.ToolRegistryRow{
			Name: "payments.charge", Effect: maestrotype.EffectMoney, Delivery: maestrotype.DeliveryRealSync,
			Reversibility: maestrotype.ReversibilityCompensable, CompensationTool: refund.Name,
			ApproverRole: "finance", ConnectorKind: "http", Owner: "payments", CatalogHash: "h1",
		}
		require.NoError(t, s.ToolRegistrySync(ctx, []ledger.ToolRegistryRow{refund, charge, sms}))

		// Two approved charges push their refunds on the undo stack.
		undone := func() string {
			req := spentApproval(t, ctx, s)
			p := claimParams("worker-a", time.Hour)
			p.OperationKey, p.Tool, p.PayloadHash = req.OperationKey, charge.Name, req.ArgsHash
			p.Undo = &ledger.UndoEntry{SessionID: "ses_a", CompensationTool: refund.Name}
			claimed, err := s.EffectClaim(ctx, p)
			require.NoError(t, err)
			require.NoError(t, s.EffectSettle(ctx, ledger.EffectSettleParams{
				OperationKey: p.OperationKey, Owner: "worker-a", Status: maestrotype.EffectSucceeded,
			}))
			return "undo-" + claimed.Undo.ID
		}
		// One rollback ran its refund with a human's approval under the
		// compensation's key; the other ran it with none.
		approved, unapproved := undone(), undone()
		open := newApprovalRequest(soon())
		open.OperationKey = approved
		req, err := s.ApprovalRequestInsert(ctx, open)
		require.NoError(t, err)
		approve(t, ctx, s, req.ID, time.Hour)
		_, err = s.ApprovalTokenSpend(ctx, req.ID, req.ArgsHash, "compensation:"+approved)
		require.NoError(t, err)
		settledEffect(t, ctx, s, approved, refund.Name, req.ArgsHash, maestrotype.EffectSucceeded)
		settledEffect(t, ctx, s, unapproved, refund.Name, otherArgs, maestrotype.EffectSucceeded)

		findings, err := s.AuditMoneyEffects(ctx)
		require.NoError(t, err)
		type finding struct{ Kind, OperationKey string }
		got := make([]finding, len(findings))
		for i, f := range findings {
			got[i] = finding{f.Kind, f.OperationKey}
		}
		require.Equal(t, []finding{{ledger.AuditNoApproval, unapproved}}, got)
	})

	t.Run("JudgesEffectsByTheirFrozenClass", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		require.NoError(t, s.ToolRegistrySync(ctx, []ledger.ToolRegistryRow{refund, sms}))

		// Each effect records the class it ran under, as the worker does.
		moneyKey, smsKey := newKey(), newKey()
		classifiedEffect(t, ctx, s, moneyKey, refund.Name, maestrotype.EffectMoney, "h1")
		classifiedEffect(t, ctx, s, smsKey, sms.Name, maestrotype.EffectWrite, "h1")
		findings, err := s.AuditMoneyEffects(ctx)
		require.NoError(t, err)
		require.Equal(t, []ledger.AuditFinding{{
			Kind: ledger.AuditNoApproval, OperationKey: moneyKey, Tool: refund.Name,
			Detail: "a succeeded money effect has no approval request",
		}}, findings)

		// The next catalog swaps the classes. The refund still moved money
		// and stays under audit; the text ran as a write and needed no
		// approval. Both reclassifications are flagged.
		asWrite := refund
		asWrite.Effect, asWrite.ApproverRole, asWrite.CatalogHash = maestrotype.EffectWrite, "", "h2"
		asMoney := sms
		asMoney.Effect, asMoney.ApproverRole, asMoney.CatalogHash = maestrotype.EffectMoney, "comms-lead", "h2"
		require.NoError(t, s.ToolRegistrySync(ctx, []ledger.ToolRegistryRow{asWrite, asMoney}))
		type finding struct{ Kind, OperationKey, Tool string }
		kinds := func() ([]finding, []string) {
			findings, err := s.AuditMoneyEffects(ctx)
			require.NoError(t, err)
			got, details := make([]finding, len(findings)), make([]string, len(findings))
			for i, f := range findings {
				got[i], details[i] = finding{f.Kind, f.OperationKey, f.Tool}, f.Detail
			}
			return got, details
		}
		want := []finding{
			{ledger.AuditNoApproval, moneyKey, refund.Name},
			{ledger.AuditClassChanged, moneyKey, refund.Name},
			{ledger.AuditClassChanged, smsKey, sms.Name},
		}
		slices.SortStableFunc(want, func(a, b finding) int { return cmp.Compare(a.OperationKey, b.OperationKey) })
		got, details := kinds()
		require.Equal(t, want, got)
		require.Contains(t, details, "1 effect(s) of payments.refund ran classified money (catalog h1); the catalog now classifies it write, so review them by the class they ran under")
		require.Contains(t, details, "1 effect(s) of sms.send ran classified write (catalog h1); the catalog now classifies it money, so review them by the class they ran under")

		// Removing the tool hides nothing either.
		require.NoError(t, s.ToolRegistrySync(ctx, []ledger.ToolRegistryRow{sms}))
		want = []finding{
			{ledger.AuditNoApproval, moneyKey, refund.Name},
			{ledger.AuditClassChanged, moneyKey, refund.Name},
		}
		got, details = kinds()
		require.Equal(t, want, got)
		require.Contains(t, details, "1 effect(s) of payments.refund ran classified money (catalog h1); the catalog no longer has it, so review them by the class they ran under")
	})

	t.Run("AdmissionClassOutranksTheClaim", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		require.NoError(t, s.ToolRegistrySync(ctx, []ledger.ToolRegistryRow{refund, sms}))

		// Admitted as money, executed after a restart that made the tool a
		// write: the call is judged by the class it was admitted under.
		inv := newInvocation("ses_a")
		inv.Tool, inv.EffectClass, inv.CatalogVersion = sms.Name, maestrotype.EffectMoney, "h0"
		_, _, err := s.InvocationInsert(ctx, inv)
		require.NoError(t, err)
		classifiedEffect(t, ctx, s, inv.OperationKey, sms.Name, maestrotype.EffectWrite, "h1")

		findings, err := s.AuditMoneyEffects(ctx)
		require.NoError(t, err)
		type finding struct{ Kind, OperationKey string }
		got := make([]finding, len(findings))
		for i, f := range findings {
			got[i] = finding{f.Kind, f.OperationKey}
		}
		require.Equal(t, []finding{
			{ledger.AuditNoApproval, inv.OperationKey},
			{ledger.AuditClassChanged, inv.OperationKey},
		}, got)
		require.Contains(t, findings[1].Detail, "(catalog h0)")
	})

	t.Run("UnrecordedClassFallsBackToTheLastSyncedOne", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		require.NoError(t, s.ToolRegistrySync(ctx, []ledger.ToolRegistryRow{refund, sms}))
		// An effect from before classes were recorded, of a tool the
		// catalog has since dropped, is still audited as money.
		key := newKey()
		settledEffect(t, ctx, s, key, refund.Name, otherArgs, maestrotype.EffectSucceeded)
		require.NoError(t, s.ToolRegistrySync(ctx, []ledger.ToolRegistryRow{sms}))

		findings, err := s.AuditMoneyEffects(ctx)
		require.NoError(t, err)
		require.Len(t, findings, 1)
		require.Equal(t, ledger.AuditNoApproval, findings[0].Kind)
		require.Equal(t, key, findings[0].OperationKey)
	})
}

// classifiedEffect claims and settles a succeeded effect recording the
// class it ran under, as the worker does.
func classifiedEffect(t *testing.T, ctx context.Context, s ledger.Store, key, tool string, class maestrotype.Effect, catalog string) {
	t.Helper()
	p := claimParams("worker-a", time.Hour)
	p.OperationKey, p.Tool, p.EffectClass, p.CatalogVersion = key, tool, class, catalog
	res, err := s.EffectClaim(ctx, p)
	require.NoError(t, err)
	require.Equal(t, ledger.ClaimNew, res.Outcome)
	require.NoError(t, s.EffectSettle(ctx, ledger.EffectSettleParams{
		OperationKey: key, Owner: "worker-a", Status: maestrotype.EffectSucceeded,
	}))
}

// spentApproval opens a request, approves it and spends its token.
func spentApproval(t *testing.T, ctx context.Context, s ledger.Store) ledger.ApprovalRequest {
	t.Helper()
	req := openRequest(t, ctx, s)
	approve(t, ctx, s, req.ID, time.Hour)
	_, err := s.ApprovalTokenSpend(ctx, req.ID, req.ArgsHash, "worker:"+req.OperationKey)
	require.NoError(t, err)
	return req
}

// settledEffect claims an effect and, unless status is in progress, settles
// it with status.
func settledEffect(t *testing.T, ctx context.Context, s ledger.Store, key, tool, payloadHash string, status maestrotype.EffectStatus) {
	t.Helper()
	p := claimParams("worker-a", time.Hour)
	p.OperationKey, p.Tool, p.PayloadHash = key, tool, payloadHash
	res, err := s.EffectClaim(ctx, p)
	require.NoError(t, err)
	require.Equal(t, ledger.ClaimNew, res.Outcome)
	if status == maestrotype.EffectInProgress {
		return
	}
	require.NoError(t, s.EffectSettle(ctx, ledger.EffectSettleParams{
		OperationKey: key, Owner: "worker-a", Status: status,
	}))
}
