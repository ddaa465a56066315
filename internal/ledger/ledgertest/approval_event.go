package ledgertest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/ledger"
)

// operator is the human who decides in these tests.
const operator = "operator:demo-manager"

func testApprovalEvent(t *testing.T, setup setupFunc) {
	t.Run("InsertLogsRequested", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		req := openRequest(t, ctx, s)
		events, err := s.ApprovalEventList(ctx, req.ID)
		require.NoError(t, err)
		require.Len(t, events, 1)
		e := events[0]
		require.Positive(t, e.ID)
		require.Equal(t, req.ID, e.ApprovalID)
		require.Equal(t, ledger.ApprovalEventRequested, e.Kind)
		require.Equal(t, "agent:agent_1", e.Actor)
		require.Equal(t, req.ArgsHash, e.ArgsHashBefore)
		require.Empty(t, e.ArgsHashAfter)
		require.Nil(t, e.Detail)
		requireRecent(t, e.CreatedAt)

		again := newApprovalRequest(soon())
		again.OperationKey = req.OperationKey
		_, err = s.ApprovalRequestInsert(ctx, again)
		require.NoError(t, err)
		requireEventKinds(t, s, req.ID, []ledger.ApprovalEventKind{ledger.ApprovalEventRequested},
			"an idempotent re-insert logs nothing")
	})

	t.Run("InsertDecidedLogsTheDecision", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		req := insertRuleApproved(t, ctx, s)

		events, err := s.ApprovalEventList(ctx, req.ID)
		require.NoError(t, err)
		require.Equal(t, []ledger.ApprovalEventKind{ledger.ApprovalEventRequested, ledger.ApprovalEventAutoApproved}, kindsOf(events))
		require.Equal(t, "agent:agent_1", events[0].Actor)
		require.Equal(t, req.DecidedBy, events[1].Actor, "the rule is the recorded actor")
		require.Equal(t, req.ArgsHash, events[1].ArgsHashBefore)

		// The events commit with the request or not at all.
		anonymous := newApprovalRequest(soon())
		anonymous.Status = ledger.ApprovalAutoApproved
		anonymous.DecidedAt = req.DecidedAt
		_, err = s.ApprovalRequestInsert(ctx, anonymous)
		require.Error(t, err, "a decision names who took it")
		_, err = s.ApprovalRequestGetByKey(ctx, anonymous.OperationKey)
		require.ErrorIs(t, err, ledger.ErrNotFound)
	})

	t.Run("InsertDecidedLogsWhatTheDecisionRestedOn", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		now := time.Now()
		a := newApprovalRequest(soon())
		a.Status, a.DecidedBy, a.DecidedAt = ledger.ApprovalAutoApproved, "rule:args.to == session.caller_number", &now
		a.DecisionDetail = json.RawMessage(`{"rested_on":[{"fact":"caller_number","provenance":"operator:demo-manager"}]}`)
		req, err := s.ApprovalRequestInsert(ctx, a)
		require.NoError(t, err)
		events, err := s.ApprovalEventList(ctx, req.ID)
		require.NoError(t, err)
		require.Len(t, events, 2)
		require.Empty(t, events[0].Detail, "the request itself has no detail")
		require.JSONEq(t, string(a.DecisionDetail), string(events[1].Detail), "the decision names whose word it rested on")

		pending := newApprovalRequest(soon())
		pending.DecisionDetail = json.RawMessage(`{"rested_on":[]}`)
		_, err = s.ApprovalRequestInsert(ctx, pending)
		require.Error(t, err, "a pending request has no decision to detail")
	})

	t.Run("ExpireLogsTheOutcome", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		for _, to := range []ledger.ApprovalStatus{ledger.ApprovalTimedOut, ledger.ApprovalAutoApproved} {
			req := openRequest(t, ctx, s)
			_, err := s.ApprovalRequestExpire(ctx, req.ID, to)
			require.NoError(t, err)
			_, err = s.ApprovalRequestExpire(ctx, req.ID, to)
			require.NoError(t, err)

			events, err := s.ApprovalEventList(ctx, req.ID)
			require.NoError(t, err)
			require.Equal(t, []ledger.ApprovalEventKind{ledger.ApprovalEventRequested, ledger.ApprovalEventKind(to)},
				kindsOf(events), "%s, logged once", to)
			require.Equal(t, ledger.TimeoutActor, events[1].Actor)
			require.Equal(t, req.ArgsHash, events[1].ArgsHashBefore)
		}
	})

	t.Run("InsertLogsRefusals", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		req := openRequest(t, ctx, s)
		e, err := s.ApprovalEventInsert(ctx, ledger.ApprovalEvent{
			ApprovalID: req.ID,
			Kind:       ledger.ApprovalEventDecisionRefused,
			Actor:      "operator:intern",
			Detail:     json.RawMessage(`{"reason":"role support is not finance"}`),
		})
		require.NoError(t, err)
		require.Positive(t, e.ID)
		require.Equal(t, ledger.ApprovalEventDecisionRefused, e.Kind)
		require.Equal(t, "operator:intern", e.Actor)
		require.Equal(t, req.ArgsHash, e.ArgsHashBefore, "defaults to the request's hash")
		require.JSONEq(t, `{"reason":"role support is not finance"}`, string(e.Detail))
		requireRecent(t, e.CreatedAt)

		events, err := s.ApprovalEventList(ctx, req.ID)
		require.NoError(t, err)
		require.Equal(t, []ledger.ApprovalEventKind{ledger.ApprovalEventRequested, ledger.ApprovalEventDecisionRefused}, kindsOf(events))
		require.Equal(t, e, events[1])
		require.Greater(t, events[1].ID, events[0].ID)
	})

	t.Run("InsertRefusesWhatOnlyAChangeMayLog", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		req := openRequest(t, ctx, s)
		for _, kind := range []ledger.ApprovalEventKind{
			ledger.ApprovalEventRequested,
			ledger.ApprovalEventApproved,
			ledger.ApprovalEventRejected,
			ledger.ApprovalEventModified,
			ledger.ApprovalEventTimedOut,
			ledger.ApprovalEventAutoApproved,
			ledger.ApprovalEventTokenMinted,
			ledger.ApprovalEventTokenUsed,
			"exploded",
		} {
			_, err := s.ApprovalEventInsert(ctx, ledger.ApprovalEvent{ApprovalID: req.ID, Kind: kind, Actor: operator})
			require.Error(t, err, kind)
		}
		_, err := s.ApprovalEventInsert(ctx, ledger.ApprovalEvent{ApprovalID: req.ID, Kind: ledger.ApprovalEventDecisionRefused})
		require.Error(t, err, "an event names its actor")
		requireEventKinds(t, s, req.ID, []ledger.ApprovalEventKind{ledger.ApprovalEventRequested})

		_, err = s.ApprovalEventInsert(ctx, ledger.ApprovalEvent{
			ApprovalID: "apr_missing", Kind: ledger.ApprovalEventDecisionRefused, Actor: operator,
		})
		require.ErrorIs(t, err, ledger.ErrNotFound)
	})

	t.Run("ListUnknownIsEmpty", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)

		events, err := s.ApprovalEventList(ctx, "apr_missing")
		require.NoError(t, err)
		require.NotNil(t, events)
		require.Empty(t, events)
	})
}

// soon is a timeout comfortably in the future.
func soon() time.Time {
	return time.Now().Add(15 * time.Minute).UTC().Truncate(time.Millisecond)
}

// openRequest inserts a pending request.
func openRequest(t *testing.T, ctx context.Context, s ledger.Store) ledger.ApprovalRequest {
	t.Helper()
	req, err := s.ApprovalRequestInsert(ctx, newApprovalRequest(soon()))
	require.NoError(t, err)
	return req
}

// insertRuleApproved inserts a request a catalog rule approved at
// admission.
func insertRuleApproved(t *testing.T, ctx context.Context, s ledger.Store) ledger.ApprovalRequest {
	t.Helper()
	now := time.Now()
	a := newApprovalRequest(soon())
	a.Status = ledger.ApprovalAutoApproved
	a.DecidedBy = "rule:args.to == session.caller_number"
	a.DecidedAt = &now
	req, err := s.ApprovalRequestInsert(ctx, a)
	require.NoError(t, err)
	return req
}

// approve has the operator approve a request, minting a token of ttl.
func approve(t *testing.T, ctx context.Context, s ledger.Store, id string, ttl time.Duration) ledger.ApprovalDecideResult {
	t.Helper()
	res, err := s.ApprovalDecide(ctx, ledger.ApprovalDecideParams{
		ApprovalID: id, Decision: ledger.DecisionApprove, Actor: operator, TokenTTL: ttl,
	})
	require.NoError(t, err)
	require.NotNil(t, res.Token)
	return res
}

func requireEventKinds(t *testing.T, s ledger.Store, approvalID string, want []ledger.ApprovalEventKind, msgAndArgs ...any) {
	t.Helper()
	events, err := s.ApprovalEventList(t.Context(), approvalID)
	require.NoError(t, err)
	require.Equal(t, want, kindsOf(events), msgAndArgs...)
}

func kindsOf(events []ledger.ApprovalEvent) []ledger.ApprovalEventKind {
	out := make([]ledger.ApprovalEventKind, len(events))
	for i, e := range events {
		out[i] = e.Kind
	}
	return out
}

// detailOf decodes an event's detail.
func detailOf(t *testing.T, e ledger.ApprovalEvent) map[string]any {
	t.Helper()
	var d map[string]any
	require.NoError(t, json.Unmarshal(e.Detail, &d), "detail of %s event", e.Kind)
	return d
}
