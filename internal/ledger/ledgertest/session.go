package ledgertest

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/maestrotype"
)

// haltStep is how the saga names a failed compensation.
const haltStep = "undo_0123456789abcdef: cancel_work_order"

func testSession(t *testing.T, setup setupFunc) {
	facts := sessionFacts()

	t.Run("UpsertCreatesOnceAndFreezesFacts", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		got, err := s.SessionUpsert(ctx, ledger.Session{
			ID: "ses_a", AgentID: "agent_1", Facts: facts,
			State: maestrotype.SessionEnded, // ignored: a new session is active
		})
		require.NoError(t, err)
		require.Equal(t, "ses_a", got.ID)
		require.Equal(t, "agent_1", got.AgentID)
		require.Equal(t, maestrotype.SessionActive, got.State)
		require.Equal(t, facts, got.Facts)
		require.Empty(t, got.HaltStep)
		require.Empty(t, got.HaltReason)
		require.Empty(t, got.ResolvedBy)
		require.Empty(t, got.ResolveReason)
		require.Nil(t, got.Transcript)
		require.Nil(t, got.EndedAt)
		requireRecent(t, got.CreatedAt)
		requireRecent(t, got.UpdatedAt)

		// A later call states other facts, as another agent: the session
		// comes back as its first call left it.
		again, err := s.SessionUpsert(ctx, ledger.Session{
			ID: "ses_a", AgentID: "agent_2", Facts: map[string]string{"caller_number": "+15550000000"},
		})
		require.NoError(t, err)
		require.Equal(t, got, again)

		byID, err := s.SessionGet(ctx, "ses_a")
		require.NoError(t, err)
		require.Equal(t, got, byID)
	})

	t.Run("FactsKeepTheirProvenance", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		signed, err := maestrotype.PlatformSigned("twilio")
		require.NoError(t, err)
		got, err := s.SessionUpsert(ctx, ledger.Session{
			ID: "ses_a", AgentID: "agent_1",
			Facts:      map[string]string{"caller_number": "+15551234567", "tenant_id": "acme", "site": "north"},
			Provenance: map[string]maestrotype.Provenance{"caller_number": signed, "tenant_id": maestrotype.ProvenanceOperator},
		})
		require.NoError(t, err)
		byID, err := s.SessionGet(ctx, "ses_a")
		require.NoError(t, err)
		require.Equal(t, got, byID)

		f, ok := byID.Fact("caller_number")
		require.True(t, ok)
		require.Equal(t, maestrotype.Fact{Value: "+15551234567", Provenance: "platform-signed:twilio"}, f)
		f, _ = byID.Fact("site")
		require.Equal(t, maestrotype.ProvenanceAgentDeclared, f.Provenance, "a fact with no provenance is the agent's word")
		require.Equal(t, map[string]string{"caller_number": "+15551234567", "tenant_id": "acme"},
			byID.FactsTrusted(maestrotype.DefaultTrustedProvenances), "by default only trusted sources count")

		// A session from before provenance was recorded holds only what
		// its agent stated.
		old := newSession(t, s, "ses_b")
		require.Empty(t, old.FactsTrusted(maestrotype.DefaultTrustedProvenances))
	})

	t.Run("OperatorVouchesForAFact", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		newSession(t, s, "ses_a") // the agent stated caller_number

		got, err := s.SessionFactSet(ctx, "ses_a", "caller_number",
			maestrotype.Fact{Value: "+15557654321", Provenance: maestrotype.ProvenanceOperator})
		require.NoError(t, err)
		f, ok := got.Fact("caller_number")
		require.True(t, ok)
		require.Equal(t, maestrotype.Fact{Value: "+15557654321", Provenance: maestrotype.ProvenanceOperator}, f)
		byID, err := s.SessionGet(ctx, "ses_a")
		require.NoError(t, err)
		require.Equal(t, got, byID)
		require.Equal(t, map[string]string{"caller_number": "+15557654321"}, byID.FactsTrusted(maestrotype.DefaultTrustedProvenances))
		for name, v := range sessionFacts() {
			if name != "caller_number" {
				require.Equal(t, v, byID.Facts[name], "the other facts stay as stated")
			}
		}

		_, err = s.SessionFactSet(ctx, "ses_a", "caller_number", maestrotype.Fact{Value: "+1", Provenance: maestrotype.ProvenanceAgentDeclared})
		require.ErrorContains(t, err, "agents state facts only with the first call")
		_, err = s.SessionFactSet(ctx, "ses_a", "caller_number", maestrotype.Fact{Value: "+1", Provenance: "somebody"})
		require.ErrorContains(t, err, "unknown provenance")
		_, err = s.SessionFactSet(ctx, "ses_a", "", maestrotype.Fact{Value: "+1", Provenance: maestrotype.ProvenanceOperator})
		require.ErrorContains(t, err, "a name and a value are required")
		_, err = s.SessionFactSet(ctx, "ses_missing", "caller_number", maestrotype.Fact{Value: "+1", Provenance: maestrotype.ProvenanceOperator})
		require.ErrorIs(t, err, ledger.ErrNotFound)
	})

	t.Run("UpsertRefusesBadProvenance", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		_, err := s.SessionUpsert(ctx, ledger.Session{ID: "ses_a", AgentID: "agent_1", Facts: sessionFacts(),
			Provenance: map[string]maestrotype.Provenance{"caller_number": "trust-me"}})
		require.ErrorContains(t, err, "unknown provenance")
		_, err = s.SessionUpsert(ctx, ledger.Session{ID: "ses_a", AgentID: "agent_1", Facts: sessionFacts(),
			Provenance: map[string]maestrotype.Provenance{"unit": maestrotype.ProvenanceOperator}})
		require.ErrorContains(t, err, "not a fact")
		_, err = s.SessionGet(ctx, "ses_a")
		require.ErrorIs(t, err, ledger.ErrNotFound, "nothing was recorded")
	})

	t.Run("UpsertWithoutFacts", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		got, err := s.SessionUpsert(ctx, ledger.Session{ID: "ses_a", AgentID: "agent_1"})
		require.NoError(t, err)
		require.NotNil(t, got.Facts)
		require.Empty(t, got.Facts)

		// No facts at the first call means none ever.
		again, err := s.SessionUpsert(ctx, ledger.Session{ID: "ses_a", AgentID: "agent_1", Facts: facts})
		require.NoError(t, err)
		require.Empty(t, again.Facts)
	})

	t.Run("ConcurrentFirstCallsAgree", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		const n = 20
		var (
			wg    sync.WaitGroup
			start = make(chan struct{})
			got   = make([]ledger.Session, n)
			errs  = make([]error, n)
		)
		for i := range n {
			wg.Go(func() {
				<-start
				got[i], errs[i] = s.SessionUpsert(ctx, ledger.Session{
					ID: "ses_race", AgentID: "agent_1", Facts: map[string]string{"call": fmt.Sprint(i)},
				})
			})
		}
		close(start)
		wg.Wait()

		for i := range n {
			require.NoError(t, errs[i])
			require.Equal(t, got[0], got[i], "every caller sees the facts of the call that created the session")
		}
	})

	t.Run("UpsertRefusesMissingIDOrAgent", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		_, err := s.SessionUpsert(ctx, ledger.Session{AgentID: "agent_1"})
		require.Error(t, err)
		_, err = s.SessionUpsert(ctx, ledger.Session{ID: "ses_a"})
		require.Error(t, err)
		_, err = s.SessionGet(ctx, "ses_a")
		require.ErrorIs(t, err, ledger.ErrNotFound, "nothing was stored")
	})

	t.Run("HaltThenResolve", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		created := newSession(t, s, "ses_a")

		halted, err := s.SessionHalt(ctx, "ses_a", haltStep, "provider answered 500")
		require.NoError(t, err)
		require.Equal(t, maestrotype.SessionHalted, halted.State)
		require.Equal(t, haltStep, halted.HaltStep)
		require.Equal(t, "provider answered 500", halted.HaltReason)
		require.Equal(t, created.CreatedAt, halted.CreatedAt)
		require.False(t, halted.UpdatedAt.Before(created.UpdatedAt))

		// A second failure does not overwrite the one that halted it.
		again, err := s.SessionHalt(ctx, "ses_a", "undo_other: refund", "timeout")
		require.NoError(t, err)
		require.Equal(t, halted, again)

		resolved, err := s.SessionResolve(ctx, "ses_a", operator, "cancelled the work order by hand", ledger.ResolvedByHand)
		require.NoError(t, err)
		require.Equal(t, maestrotype.SessionActive, resolved.State)
		require.Empty(t, resolved.HaltStep, "the halt is over")
		require.Empty(t, resolved.HaltReason)
		require.Equal(t, operator, resolved.ResolvedBy)
		require.Equal(t, "cancelled the work order by hand", resolved.ResolveReason)
		require.Equal(t, facts, resolved.Facts)

		stale, err := s.SessionResolve(ctx, "ses_a", "operator:late", "me too", ledger.ResolvedByHand)
		require.ErrorIs(t, err, ledger.ErrSessionNotHalted)
		require.Equal(t, resolved, stale, "a refusal returns the session as it stands")

		// A resolved session can halt again; the last resolution stays on
		// record until the next one.
		rehalted, err := s.SessionHalt(ctx, "ses_a", "undo_other: refund", "timeout")
		require.NoError(t, err)
		require.Equal(t, maestrotype.SessionHalted, rehalted.State)
		require.Equal(t, "undo_other: refund", rehalted.HaltStep)
		require.Equal(t, operator, rehalted.ResolvedBy)

		got, err := s.SessionGet(ctx, "ses_a")
		require.NoError(t, err)
		require.Equal(t, rehalted, got)
	})

	t.Run("HaltAndResolveWithoutReason", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		newSession(t, s, "ses_a")

		// A halt must land even when the failure came without an
		// explanation: an unrecorded halt would let calls through.
		halted, err := s.SessionHalt(ctx, "ses_a", haltStep, "")
		require.NoError(t, err)
		require.Equal(t, maestrotype.SessionHalted, halted.State)
		require.Empty(t, halted.HaltReason)

		resolved, err := s.SessionResolve(ctx, "ses_a", operator, "", ledger.ResolvedByHand)
		require.NoError(t, err)
		require.Equal(t, maestrotype.SessionActive, resolved.State)
		require.Equal(t, operator, resolved.ResolvedBy)
		require.Empty(t, resolved.ResolveReason)
	})

	t.Run("HaltAndResolveRefuseMissingFields", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		created := newSession(t, s, "ses_a")

		_, err := s.SessionHalt(ctx, "ses_a", "", "why")
		require.Error(t, err, "a halt names the step that failed")
		_, err = s.SessionHalt(ctx, "ses_a", haltStep, "why")
		require.NoError(t, err)
		_, err = s.SessionResolve(ctx, "ses_a", "", "fixed", ledger.ResolvedByHand)
		require.Error(t, err, "a resolution names who resolved it")
		require.NotErrorIs(t, err, ledger.ErrSessionNotHalted)

		got, err := s.SessionGet(ctx, "ses_a")
		require.NoError(t, err)
		require.Equal(t, maestrotype.SessionHalted, got.State)
		require.Equal(t, created.CreatedAt, got.CreatedAt)
	})

	t.Run("EndsOnce", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		created := newSession(t, s, "ses_a")

		transcript := json.RawMessage(`{"turns":[{"speaker":"caller","text":"call me back","at":"2030-01-02T03:04:05Z"}]}`)
		ended, ok, err := s.SessionEnd(ctx, "ses_a", transcript)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, maestrotype.SessionEnded, ended.State)
		require.JSONEq(t, string(transcript), string(ended.Transcript))
		require.NotNil(t, ended.EndedAt)
		requireRecent(t, *ended.EndedAt)
		require.Equal(t, created.Facts, ended.Facts)

		again, ok, err := s.SessionEnd(ctx, "ses_a", json.RawMessage(`{"turns":[]}`))
		require.NoError(t, err)
		require.False(t, ok, "only the call that ended it says so")
		require.Equal(t, ended, again, "the first transcript stands")

		halted, err := s.SessionHalt(ctx, "ses_a", haltStep, "too late")
		require.NoError(t, err)
		require.Equal(t, ended, halted, "an ended session does not halt")

		_, err = s.SessionResolve(ctx, "ses_a", operator, "nothing to resolve", ledger.ResolvedByHand)
		require.ErrorIs(t, err, ledger.ErrSessionNotHalted)

		// The ended session still answers its calls' upserts, unchanged:
		// the post-call agent delivers through the same gate.
		upserted, err := s.SessionUpsert(ctx, ledger.Session{ID: "ses_a", AgentID: "agent_postcall"})
		require.NoError(t, err)
		require.Equal(t, ended, upserted)
	})

	t.Run("EndWithoutTranscript", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		newSession(t, s, "ses_a")

		ended, ok, err := s.SessionEnd(ctx, "ses_a", nil)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, maestrotype.SessionEnded, ended.State)
		require.Nil(t, ended.Transcript)
	})

	t.Run("EndWhileHaltedKeepsTheHalt", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		newSession(t, s, "ses_a")

		_, err := s.SessionHalt(ctx, "ses_a", haltStep, "provider answered 500")
		require.NoError(t, err)
		ended, ok, err := s.SessionEnd(ctx, "ses_a", nil)
		require.NoError(t, err)
		require.True(t, ok, "the caller hangs up whether or not the session is halted")
		require.Equal(t, maestrotype.SessionEnded, ended.State)
		require.Equal(t, haltStep, ended.HaltStep, "the unresolved halt stays on record")
		require.Equal(t, "provider answered 500", ended.HaltReason)

		_, err = s.SessionResolve(ctx, "ses_a", operator, "fixed", ledger.ResolvedByHand)
		require.ErrorIs(t, err, ledger.ErrSessionNotHalted)
	})

	t.Run("ConcurrentEndsHaveOneWinner", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		newSession(t, s, "ses_a")

		const n = 20
		var (
			wg    sync.WaitGroup
			start = make(chan struct{})
			ended = make([]bool, n)
			errs  = make([]error, n)
		)
		for i := range n {
			wg.Go(func() {
				<-start
				_, ended[i], errs[i] = s.SessionEnd(ctx, "ses_a", json.RawMessage(fmt.Sprintf(`{"ender":%d}`, i)))
			})
		}
		close(start)
		wg.Wait()

		winners := 0
		for i := range n {
			require.NoError(t, errs[i])
			if ended[i] {
				winners++
			}
		}
		require.Equal(t, 1, winners)
	})

	t.Run("NotFound", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		_, err := s.SessionGet(ctx, "ses_missing")
		require.ErrorIs(t, err, ledger.ErrNotFound)
		_, err = s.SessionHalt(ctx, "ses_missing", haltStep, "why")
		require.ErrorIs(t, err, ledger.ErrNotFound)
		_, err = s.SessionResolve(ctx, "ses_missing", operator, "why", ledger.ResolvedByHand)
		require.ErrorIs(t, err, ledger.ErrNotFound)
		_, _, err = s.SessionEnd(ctx, "ses_missing", nil)
		require.ErrorIs(t, err, ledger.ErrNotFound)
	})
}

// sessionFacts are what an agent runtime states at a session's first call.
func sessionFacts() map[string]string {
	return map[string]string{"caller_number": "+15551234567", "tenant_id": "acme"}
}

// newSession creates an active session with sessionFacts.
func newSession(t *testing.T, s ledger.Store, id string) ledger.Session {
	t.Helper()
	got, err := s.SessionUpsert(t.Context(), ledger.Session{ID: id, AgentID: "agent_1", Facts: sessionFacts()})
	require.NoError(t, err)
	return got
}
