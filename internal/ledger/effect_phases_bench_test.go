package ledger_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/maestro-run/maestro/internal/ledger"
	mt "github.com/maestro-run/maestro/maestrotype"
)

// BenchmarkEffectPhases measures the ledger work a write does around its
// provider call, on each backend. Before the provider: the claim alone,
// the claim with its undo entry (a compensable write), and a rule-approved
// real-sync write's token, minted and spent in a transaction of its own
// ahead of the claim (Separate, as the Execute activity did it) or spent
// by the claim's own transaction (Folded, as it does now). After it: the
// settle, the session read that tells whether a rollback began meanwhile
// and the invocation's finish, as three writes (Separate) or as one
// (Folded, EffectSettleFinish). Each operation gets its own invocation,
// session and approval request, made with the timer stopped.
func BenchmarkEffectPhases(b *testing.B) {
	for _, backend := range benchBackends {
		b.Run(backend.name, func(b *testing.B) {
			s := backend.open(b)
			ctx := b.Context()
			phases := []struct {
				name string
				// approved opens a rule-approved request for the write.
				approved, undo bool
				run            func(context.Context, *testing.B, ledger.Store, phaseWrite)
			}{
				{name: "Before/Claim", run: phaseClaim},
				{name: "Before/ClaimWithUndo", undo: true, run: phaseClaim},
				{name: "Before/MintSpendClaim/Separate", approved: true, run: func(ctx context.Context, b *testing.B, s ledger.Store, w phaseWrite) {
					if _, err := s.ApprovalTokenMintSpend(ctx, w.approvalID, time.Minute, "rule:args.to == session.caller_number",
						"invocation:"+w.inv.ID); err != nil {
						b.Fatal(err)
					}
					phaseClaim(ctx, b, s, w)
				}},
				{name: "Before/MintSpendClaim/Folded", approved: true, run: func(ctx context.Context, b *testing.B, s ledger.Store, w phaseWrite) {
					w.claim.Spend = &ledger.ApprovalSpend{ApprovalID: w.approvalID, UsedBy: "invocation:" + w.inv.ID, MintTTL: time.Minute}
					phaseClaim(ctx, b, s, w)
				}},
				{name: "After/SettleFinish/Separate", run: phaseSettleFinish},
				{name: "After/SettleFinish/Folded", run: phaseSettleFinishFolded},
			}
			for _, ph := range phases {
				b.Run(ph.name, func(b *testing.B) {
					b.ReportAllocs()
					// Every run claims keys of its own: -count runs it
					// again on the same ledger.
					run, i := benchRandomHex(4), 0
					for b.Loop() {
						b.StopTimer()
						i++
						w := newPhaseWrite(ctx, b, s, fmt.Sprintf("phase-%s-%d", run, i), ph.approved, ph.undo)
						if strings.HasPrefix(ph.name, "After/") {
							phaseClaim(ctx, b, s, w)
						}
						b.StartTimer()
						ph.run(ctx, b, s, w)
					}
				})
			}
		})
	}
}

// phaseWrite is one admitted write, ready for its effect.
type phaseWrite struct {
	inv        ledger.Invocation
	approvalID string
	claim      ledger.EffectClaimParams
}

// newPhaseWrite records what admission leaves behind for a write: its
// session, its invocation and, for a gated write, its approval request.
func newPhaseWrite(ctx context.Context, b *testing.B, s ledger.Store, key string, approved, undo bool) phaseWrite {
	b.Helper()
	session := "call-" + key
	if _, err := s.SessionUpsert(ctx, ledger.Session{ID: session, AgentID: "agent_bench", State: mt.SessionActive}); err != nil {
		b.Fatal(err)
	}
	// Canonical, so that the folded claim finds the frozen arguments
	// hashing to the hash they were approved under.
	args := json.RawMessage(`{"body":"We have your report.","to":"+14155550100"}`)
	p := benchClaimParams(key, nil)
	sum := sha256.Sum256(args)
	p.PayloadHash = hex.EncodeToString(sum[:])
	route := mt.RouteWrite
	switch {
	case approved:
		route = mt.RouteGated
	case undo:
		route = mt.RouteCompensable
	}
	inv, _, err := s.InvocationInsert(ctx, ledger.Invocation{
		OperationKey: key, SessionID: session, AgentID: "agent_bench", Tool: "send_sms",
		Args: args, ArgsHash: p.PayloadHash, Route: route, State: mt.InvocationRunning, WorkflowID: "wf_" + key,
	})
	if err != nil {
		b.Fatal(err)
	}
	w := phaseWrite{inv: inv}
	p.InvocationID, p.SessionID = inv.ID, session
	if undo {
		p.Undo = &ledger.UndoEntry{SessionID: session, CompensationTool: "cancel_work_order",
			ArgsSnapshot: json.RawMessage(`{"work_order_id":"wo_0123456789"}`)}
	}
	w.claim = p
	if approved {
		now := time.Now()
		req, err := s.ApprovalRequestInsert(ctx, ledger.ApprovalRequest{
			InvocationID: inv.ID, OperationKey: key, SessionID: session, AgentID: "agent_bench", Tool: "send_sms",
			Args: args, ArgsHash: p.PayloadHash, ApproverRole: "ops", Reason: "texts go to the caller only",
			Effect: mt.EffectWrite, Reversibility: mt.ReversibilityIrreversible, TimeoutAt: now.Add(time.Hour),
			Status: ledger.ApprovalAutoApproved, DecidedBy: "rule:args.to == session.caller_number", DecidedAt: &now,
		})
		if err != nil {
			b.Fatal(err)
		}
		w.approvalID = req.ID
	}
	return w
}

func phaseClaim(ctx context.Context, b *testing.B, s ledger.Store, w phaseWrite) {
	benchClaimNew(ctx, b, s, w.claim)
}

// phaseSettleFinish settles a claimed effect with the provider's receipt
// and finishes its invocation, as a write that succeeded does.
func phaseSettleFinish(ctx context.Context, b *testing.B, s ledger.Store, w phaseWrite) {
	receipt := &mt.Receipt{Provider: "twilio", ID: "SM" + w.claim.OperationKey, Status: "queued", IssuedAt: time.Now()}
	obs := mt.Observation{Status: mt.StatusSuccess, Summary: "sent", Receipt: receipt}
	if err := s.EffectSettle(ctx, ledger.EffectSettleParams{
		OperationKey: w.claim.OperationKey, Owner: w.claim.Owner, Status: mt.EffectSucceeded, Receipt: receipt, Result: &obs,
	}); err != nil {
		b.Fatal(err)
	}
	if _, err := s.SessionGet(ctx, w.inv.SessionID); err != nil {
		b.Fatal(err)
	}
	if err := s.InvocationFinish(ctx, w.inv.ID, mt.InvocationSucceeded, obs); err != nil {
		b.Fatal(err)
	}
}

// phaseSettleFinishFolded is phaseSettleFinish in one ledger write.
func phaseSettleFinishFolded(ctx context.Context, b *testing.B, s ledger.Store, w phaseWrite) {
	receipt := &mt.Receipt{Provider: "twilio", ID: "SM" + w.claim.OperationKey, Status: "queued", IssuedAt: time.Now()}
	obs := mt.Observation{Status: mt.StatusSuccess, Summary: "sent", Receipt: receipt}
	back := obs
	back.Summary = "sent while the session rolls back"
	if _, err := s.EffectSettleFinish(ctx, ledger.EffectSettleParams{
		OperationKey: w.claim.OperationKey, Owner: w.claim.Owner, Status: mt.EffectSucceeded, Receipt: receipt, Result: &obs,
	}, ledger.InvocationFinishParams{
		InvocationID: w.inv.ID, State: mt.InvocationSucceeded, Observation: obs, SessionID: w.inv.SessionID, RollingBack: &back,
	}); err != nil {
		b.Fatal(err)
	}
}
