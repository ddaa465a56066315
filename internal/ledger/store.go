package ledger

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/maestro-run/maestro/maestrotype"
)

// ErrNotFound is returned by getters when no row matches.
var ErrNotFound = errors.New("not found")

// ErrLeaseLost is returned when a worker tries to settle an effect whose
// lease another worker has taken over.
var ErrLeaseLost = errors.New("effect lease lost")

// ErrApprovalNotPending is returned when an approval request is not in the
// state a call needs: a decision needs a pending request whose timeout has
// not passed (whether or not the timer has closed it yet), and a token can
// only be minted for an approved or auto-approved request.
var ErrApprovalNotPending = errors.New("approval request is not pending")

// Why ApprovalTokenSpend refused. Each refusal is also logged as a
// 'token_refused' event.
var (
	// ErrTokenUsed: the request's token was already spent. One approval
	// authorises one execution.
	ErrTokenUsed = errors.New("approval token already used")
	// ErrTokenExpired: the token's TTL ran out before it was spent; a policy
	// may mint a fresh one with ApprovalTokenMint.
	ErrTokenExpired = errors.New("approval token expired")
	// ErrTokenMismatch: the arguments no longer hash to the approved
	// (frozen or modified) value.
	ErrTokenMismatch = errors.New("arguments do not match the approved arguments")
	// ErrNoToken: the request has no token to spend.
	ErrNoToken = errors.New("approval request has no token")
)

// ErrSessionNotHalted is returned by SessionResolve for a session that is
// not halted: there is nothing to resolve.
var ErrSessionNotHalted = errors.New("session is not halted")

// ErrUndoTransition is returned by UndoSetStatus when the entry's status
// cannot move to the one asked for: compensated and skipped are final, and
// a failed entry can only become compensated or skipped.
var ErrUndoTransition = errors.New("undo entry cannot move to that status")

// ErrDeferredTransition is returned by DeferredSetOutcome when the item's
// status cannot move to the one asked for: delivered is final, and a failed
// item can only become delivered.
var ErrDeferredTransition = errors.New("deferred item cannot move to that status")

// DefaultListLimit is the number of rows a List method returns when its
// limit is zero or negative: an unbounded list is never what an operator
// meant.
const DefaultListLimit = 100

// Store is the ledger interface every backend implements.
//
// Row IDs left empty by the caller are generated ("inv_…", "undo_…",
// "def_…", "apr_…"), except a session's, which the agent runtime names.
// CreatedAt, UpdatedAt and the other times a row records (EndedAt, say) are
// stamped by the database's clock and ignored on insert; times come back in
// UTC.
//
// A refused status change (ErrSessionNotHalted, ErrUndoTransition,
// ErrDeferredTransition) returns the row as it stands along with the error,
// so an attempt retried after a crash can recognise that its own write
// already landed.
type Store interface {
	// Migrate applies the embedded, numbered migrations that have not run yet.
	Migrate(ctx context.Context) error
	Close() error
	// Ping checks that the database answers, for a readiness probe.
	Ping(ctx context.Context) error

	ToolRegistrySync(ctx context.Context, rows []ToolRegistryRow) error
	ToolRegistryList(ctx context.Context) ([]ToolRegistryRow, error)
	// ToolRegistryHistory returns every classification of a tool ever
	// synced, oldest first, CatalogHash naming each one's catalog version.
	ToolRegistryHistory(ctx context.Context, name string) ([]ToolRegistryRow, error)
	// CatalogActivate records a catalog file under its version, makes it
	// the current version and mirrors its rows, in one transaction.
	CatalogActivate(ctx context.Context, v CatalogVersion, rows []ToolRegistryRow) error
	// CatalogCurrent returns the version activated last: the one every
	// process converges on. ErrNotFound before any.
	CatalogCurrent(ctx context.Context) (string, error)
	// CatalogVersionSource returns the file of a recorded version, so a
	// process can run work admitted under a version it never loaded.
	CatalogVersionSource(ctx context.Context, version string) ([]byte, error)
	// CatalogActivationList returns the last limit activations, newest
	// first: the history of which version was current when.
	CatalogActivationList(ctx context.Context, limit int) ([]CatalogActivation, error)

	// CanaryRecord stores one canary run's results; CanaryLastResults
	// returns each tool's last one with its last success time, and
	// CanaryRunResults one run's (see canary.go).
	CanaryRecord(ctx context.Context, results []CanaryResult) error
	CanaryLastResults(ctx context.Context) ([]CanaryResult, error)
	CanaryRunResults(ctx context.Context, runID string) ([]CanaryResult, error)

	RefusalInsert(ctx context.Context, r Refusal) error
	// RefusalPage returns one page of refusals, newest first, filtered by
	// code (PageQuery.Status), tool, agent and age.
	RefusalPage(ctx context.Context, q PageQuery) (Page[Refusal], error)
	// RefusalList returns the most recent refusals, newest first.
	RefusalList(ctx context.Context, limit int) ([]Refusal, error)

	// MetricCounts returns the totals metrics report, counted now.
	MetricCounts(ctx context.Context) (MetricCounts, error)

	// SessionUpsert creates the session on its first call, active, and
	// returns it as stored: on every later call the stored session comes
	// back unchanged, so facts given later are ignored and a session's
	// facts cannot be changed by a later call. The caller compares AgentID
	// to detect a session ID reused by another agent. ID and AgentID are
	// required; State is ignored.
	SessionUpsert(ctx context.Context, s Session) (Session, error)
	// SessionUpsertCapped is SessionUpsert that refuses to create the
	// agent's session past maxLive sessions not ended, with a *CapError
	// (ErrCapReached), counted and inserted under the agent's lock so a
	// burst cannot overshoot. An existing session is returned whatever the
	// count. maxLive of zero or less is no cap.
	SessionUpsertCapped(ctx context.Context, s Session, maxLive int) (Session, error)
	SessionGet(ctx context.Context, id string) (Session, error)
	// SessionPage returns one page of sessions, newest first, filtered by
	// state (PageQuery.Status), a tool one of their calls named, agent and
	// age.
	SessionPage(ctx context.Context, q PageQuery) (Page[Session], error)
	// SessionFactSet records a fact someone other than the agent vouches
	// for (an operator, a signing platform) on an existing session,
	// replacing any earlier value of that name and its provenance. Agents
	// state facts only with a session's first call.
	SessionFactSet(ctx context.Context, id, name string, fact maestrotype.Fact) (Session, error)
	// SessionHalt moves an active session to halted, naming the failing
	// step (required) and why. A halted or ended session is returned
	// unchanged: the first failure is the one that halted it.
	// A halt also ends a rollback's hold on the session: the halt refuses
	// calls from then on.
	SessionHalt(ctx context.Context, id, step, reason string) (Session, error)
	// SessionResolve moves a halted session back to active, recording who
	// resolved it (required), why, and how. ResolvedByHand closes, in the
	// same transaction, the undo entries a rollback could not run (failed
	// ones, and pending ones held with a detail) as compensated with the
	// reason; ResolvedRetry leaves them and marks the session as being
	// rolled back again, so no call slips in before the retried rollback
	// begins. A session that is not halted, ended ones included, gets
	// ErrSessionNotHalted.
	SessionResolve(ctx context.Context, id, actor, reason string, how Resolution) (Session, error)
	// SessionRollbackBegin marks an active session as being rolled back
	// (RollbackStartedAt), which refuses new effect claims in it from then
	// on; a mark already there is kept. A halted or ended session is
	// returned unchanged: it refuses calls already.
	SessionRollbackBegin(ctx context.Context, id string) (Session, error)
	// SessionRollbackEnd clears the mark when the rollback finishes.
	SessionRollbackEnd(ctx context.Context, id string) (Session, error)
	// SessionEnd marks the session ended and stores its transcript (nil for
	// none), once: ended is true only for the call that ended it, and a
	// repeat returns the stored session, transcript and all, with
	// ended=false. A halted session ends too, keeping its unresolved halt.
	SessionEnd(ctx context.Context, id string, transcript json.RawMessage) (s Session, ended bool, err error)
	// SessionEndSignalled is SessionEnd that also queues signal in the
	// outbox, in the same transaction, when (and only when) this call ended
	// the session: the call-ended signal is then owed until delivered.
	SessionEndSignalled(ctx context.Context, id string, transcript []byte, signal OutboxSignal) (s Session, ended bool, queued OutboxSignal, err error)

	// OutboxInsert queues a signal for delivery.
	OutboxInsert(ctx context.Context, s OutboxSignal) (OutboxSignal, error)
	// OutboxListDue lists undelivered signals whose next attempt is due,
	// oldest first, up to limit (0 for the default).
	OutboxListDue(ctx context.Context, limit int) ([]OutboxSignal, error)
	OutboxGet(ctx context.Context, id int64) (OutboxSignal, error)
	// OutboxMarkDelivered records that Temporal accepted the signal.
	OutboxMarkDelivered(ctx context.Context, id int64) error
	// OutboxMarkFailed counts a failed attempt and makes the next due after
	// retryIn, on the database's clock.
	OutboxMarkFailed(ctx context.Context, id int64, reason string, retryIn time.Duration) error
	// OutboxMarkAbandoned stops delivery of a signal whose workflow is gone.
	OutboxMarkAbandoned(ctx context.Context, id int64, reason string) error
	// OutboxMarkHeld stops delivery of a signal Temporal refuses as
	// invalid and holds it for a human, who finds it in the
	// reconciliation queue under OutboxHeldKey.
	OutboxMarkHeld(ctx context.Context, id int64, reason string) error

	// CallbackOwe records that an invocation answered "pending" owes its
	// agent the final observation at url. Owing it again is a no-op.
	CallbackOwe(ctx context.Context, invocationID, agentID, url string) error
	// CallbackGet returns an invocation's callback, or ErrNotFound.
	CallbackGet(ctx context.Context, invocationID string) (Callback, error)
	// CallbackClaimDue claims up to limit pending callbacks whose invocation
	// is final and whose next attempt is due, oldest first, making each due
	// again only after lease: an attempt in flight is not claimed twice.
	CallbackClaimDue(ctx context.Context, lease time.Duration, limit int) ([]Callback, error)
	// CallbackMarkDelivered records that the receiver accepted the callback.
	CallbackMarkDelivered(ctx context.Context, invocationID string) error
	// CallbackMarkFailed counts a failed attempt and makes the next due
	// after retryIn, on the database's clock.
	CallbackMarkFailed(ctx context.Context, invocationID, reason string, retryIn time.Duration) error
	// CallbackGiveUp counts a failed last attempt and stops delivery.
	CallbackGiveUp(ctx context.Context, invocationID, reason string) error

	// PlatformSignatureClaim records a platform's signature, by the
	// identity its verifier computed, until expires, and reports whether
	// this is its first use: false while an earlier claim of it has not
	// expired on the database's clock. A claim past its expiry is taken
	// again. Of any number of concurrent claimers, on any process sharing
	// the ledger, exactly one gets true.
	PlatformSignatureClaim(ctx context.Context, id string, expires time.Time) (first bool, err error)
	// PlatformSignatureForget drops a claim, so the platform may send the
	// request again: for a request that failed before it did anything.
	// Forgetting an unknown signature is a no-op.
	PlatformSignatureForget(ctx context.Context, id string) error

	// ConsoleSessionCreate records a console sign-in, deleting a bounded
	// batch of expired ones first.
	ConsoleSessionCreate(ctx context.Context, s ConsoleSession) error
	// ConsoleSessionGet reads a live console session by the hash of its
	// token; ErrNotFound when there is none or it has expired.
	ConsoleSessionGet(ctx context.Context, idHash string) (ConsoleSession, error)
	// ConsoleSessionDelete signs a session out. Deleting an unknown
	// session is a no-op.
	ConsoleSessionDelete(ctx context.Context, idHash string) error

	// InvocationInsert records an admitted invocation. If a row with the same
	// operation key exists it is returned unchanged with created=false; the
	// caller compares ArgsHash to detect a reused key.
	InvocationInsert(ctx context.Context, inv Invocation) (got Invocation, created bool, err error)
	// InvocationInsertCapped is InvocationInsert that refuses to record a
	// new call awaiting approval when its agent already holds maxOpen
	// approval requests open (CapOpenApprovals), with a *CapError
	// (ErrCapReached), counted and inserted under the agent's lock so a
	// burst cannot overshoot. A key already recorded is answered whatever
	// the count. maxOpen of zero or less is no cap.
	InvocationInsertCapped(ctx context.Context, inv Invocation, maxOpen int) (got Invocation, created bool, err error)
	// InvocationAdmit is InvocationInsertCapped that also opens a new
	// call's approval request, built by open, in the same transaction: a
	// gated call is never recorded without its request, and admission
	// costs one transaction. open may be nil.
	InvocationAdmit(ctx context.Context, inv Invocation, maxOpen int, open ApprovalOpener) (Admission, error)
	// InvocationAdmitInSession is InvocationAdmit that reads the call's
	// session first, in the same transaction, and records nothing when
	// check refuses it (check's error is returned) or it is not recorded
	// (ErrNotFound).
	InvocationAdmitInSession(ctx context.Context, inv Invocation, maxOpen int, check func(SessionAtAdmission) error, open ApprovalOpener) (Admission, error)
	// InvocationInsertInSession records a new call only if its session is
	// its agent's, active and not being rolled back, checked by the insert
	// itself; ok is false, and nothing is written, when the key is taken
	// or the session does not pass.
	InvocationInsertInSession(ctx context.Context, inv Invocation) (got Invocation, ok bool, err error)
	InvocationGet(ctx context.Context, id string) (Invocation, error)
	// InvocationGetWithMessage is InvocationGet with the latest status
	// provider reported for the message the invocation's receipt names:
	// nil when it names none or none was reported.
	InvocationGetWithMessage(ctx context.Context, id, provider string) (Invocation, *MessageStatus, error)
	// InvocationGetWithApproval is InvocationGet with the ID of the
	// approval request opened under the invocation's operation key: ""
	// when there is none.
	InvocationGetWithApproval(ctx context.Context, id string) (Invocation, string, error)
	InvocationGetByKey(ctx context.Context, operationKey string) (Invocation, error)
	// InvocationAnswerPart stores the observation of a running invocation
	// whose composite effect went out in part: the answer given while the
	// remaining parts are still delivered. ErrNotFound if it is not running.
	InvocationAnswerPart(ctx context.Context, id string, obs maestrotype.Observation) error
	// InvocationFinish stores the final state and observation.
	InvocationFinish(ctx context.Context, id string, state maestrotype.InvocationState, obs maestrotype.Observation) error
	// InvocationFinishRow is InvocationFinish that returns the row as it
	// recorded it, in the same statement.
	InvocationFinishRow(ctx context.Context, id string, state maestrotype.InvocationState, obs maestrotype.Observation) (Invocation, error)
	InvocationSetState(ctx context.Context, id string, state maestrotype.InvocationState) error
	// InvocationFinishOpen is InvocationFinish for a finisher that may come
	// late (the sweeper, a finalizer): it finishes the invocation only if it
	// is not final yet, and otherwise fails with ErrInvocationFinal, leaving
	// the outcome the agent may already have heard.
	InvocationFinishOpen(ctx context.Context, id string, state maestrotype.InvocationState, obs maestrotype.Observation) error
	// InvocationListOpen returns invocations not yet final (running or
	// awaiting approval) whose row has not changed for at least idleFor,
	// least recently changed first: those whose workflow may have ended
	// without finishing them.
	InvocationListOpen(ctx context.Context, idleFor time.Duration, limit int) ([]Invocation, error)
	// InvocationListBySession returns a session's invocations in the order
	// they were admitted.
	InvocationListBySession(ctx context.Context, sessionID string) ([]Invocation, error)

	// EffectClaim is the exactly-once arbiter (INSERT … ON CONFLICT). See
	// ClaimOutcome for the possible results. When p.Undo is set and the claim
	// is new, the undo entry is written in the same transaction, so the
	// compensation exists before the effect can.
	EffectClaim(ctx context.Context, p EffectClaimParams) (EffectClaimResult, error)
	// EffectSettle records the outcome of a claimed effect. It fails with
	// ErrLeaseLost unless p.Owner still holds the lease, and with
	// ErrReceiptTaken, changing nothing, if another operation key already
	// holds p.Receipt (same provider and ID; HTTP receipts excepted, as
	// they name the resource acted on).
	EffectSettle(ctx context.Context, p EffectSettleParams) error
	// EffectSettleFinish is EffectSettle that also records the invocation's
	// outcome f, atomically: either both commit or neither does (ErrLeaseLost
	// records nothing). It returns the invocation as recorded, read by the
	// same statement on PostgreSQL and the same transaction on SQLite.
	EffectSettleFinish(ctx context.Context, p EffectSettleParams, f InvocationFinishParams) (FinishedInvocation, error)
	// EffectHandOver passes owner's in-progress claim to the attempt named
	// to, which gets ClaimTakeover when it claims, however early, while
	// every other claimer gets ClaimBusy until the lease, now ttl from now
	// on the database's clock, expires. An attempt that must look at the
	// provider again later hands the claim to its own retry this way, so
	// the claim is kept and no timing decides who holds it. It fails with
	// ErrLeaseLost unless owner holds the in-progress claim.
	EffectHandOver(ctx context.Context, operationKey, owner, to string, ttl time.Duration) error
	// EffectRelease hands back a claim whose provider call provably did not
	// happen (the provider was unreachable or answered 5xx): the effect row
	// and any undo entry pushed with it are deleted, so the next attempt
	// claims afresh instead of treating the key as an unknown outcome. It
	// fails with ErrLeaseLost unless owner holds an in-progress claim.
	EffectRelease(ctx context.Context, operationKey, owner string) error
	EffectGet(ctx context.Context, operationKey string) (Effect, error)
	// EffectListByStatus returns effects in a status, oldest first: the
	// order a reconciliation queue is worked in.
	EffectListByStatus(ctx context.Context, status maestrotype.EffectStatus, limit int) ([]Effect, error)
	// EffectListLeaseExpired returns in-progress effects whose lease has
	// expired by the database's clock, longest expired first: attempts that
	// stopped between claiming a key and settling it.
	EffectListLeaseExpired(ctx context.Context, limit int) ([]Effect, error)

	// EffectReconcile settles an effect whose outcome was unknown from what
	// reconciliation found, and appends p.Event in the same transaction, so
	// the ledger never shows an outcome its log does not explain:
	//   - with p.Owner set, the effect must be in progress under that
	//     owner's lease (an attempt that took over the key or lost its
	//     answer) and may take any final status; otherwise ErrLeaseLost;
	//   - without, it must be held in needs_reconciliation (a later check, or
	//     a human's decision) and becomes succeeded or failed; otherwise
	//     ErrEffectNotHeld, returned with the effect as it stands.
	// With p.InvocationState set, the effect's invocation is finished with
	// that state and p.Result in the same transaction. Like EffectSettle it
	// fails with ErrReceiptTaken, changing nothing and logging nothing,
	// when another operation key already holds p.Receipt. It returns the
	// effect as settled.
	EffectReconcile(ctx context.Context, p EffectReconcileParams) (Effect, error)
	// EffectListByReceiptID returns the effects whose receipt carries the
	// provider ID id, oldest first: whom the ledger already credits with a
	// provider's record.
	EffectListByReceiptID(ctx context.Context, id string) ([]Effect, error)
	// EffectRecordBeforeRead records what the catalog's before read saw,
	// by the claim's holder while the effect is in progress and before the
	// provider is called, once: ErrLeaseLost if owner does not hold the
	// claim or a before read is already recorded.
	EffectRecordBeforeRead(ctx context.Context, operationKey, owner string, read maestrotype.StateRead) error
	// EffectRecordAfterRead records the after read-back of a succeeded
	// effect. The first one recorded is kept: recorded is false when one
	// already was, or the effect has not succeeded.
	EffectRecordAfterRead(ctx context.Context, operationKey string, read maestrotype.StateRead) (reads EffectStateReads, recorded bool, err error)
	// EffectStateReadsGet returns an effect's before and after reads.
	EffectStateReadsGet(ctx context.Context, operationKey string) (EffectStateReads, error)
	// EffectStateReadsListBySession returns the reads recorded with the
	// effects of a session's invocations, oldest effect first; effects
	// with neither are left out.
	EffectStateReadsListBySession(ctx context.Context, sessionID string) ([]EffectStateReads, error)
	// MessageStatusRecord records a provider's status callback for a
	// message, by the provider's message ID alone: a callback may arrive
	// before the ledger has settled the send whose receipt names the ID,
	// and is joined to it when read. The same status for the message, or
	// the same idempotency token, again is MessageStatusReplayed and changes
	// nothing; a status that does not supersede the stored one
	// (maestrotype.MessageStatus.Supersedes) is MessageStatusStale and is
	// logged only. It returns the message's status as it then stands.
	MessageStatusRecord(ctx context.Context, r MessageStatusReport) (MessageStatus, MessageStatusOutcome, error)
	// MessageStatusGet returns a message's latest status, or ErrNotFound
	// when the provider has reported none.
	MessageStatusGet(ctx context.Context, provider, messageID string) (MessageStatus, error)
	// MessageStatusListBySession returns the session's effects whose
	// receipt names a Twilio message with a reported status, in the order
	// their invocations were admitted.
	MessageStatusListBySession(ctx context.Context, sessionID string) ([]EffectMessage, error)
	// MessageStatusListFailed returns succeeded effects whose message then
	// ended undelivered, failed or canceled, oldest report first.
	MessageStatusListFailed(ctx context.Context, limit int) ([]EffectMessage, error)
	// ReconciliationEventInsert logs a finding that changes no effect: a
	// complete search that found nothing before a resend ('absent'), or a
	// replay under the provider's idempotency key ('replayed'). Findings
	// that settle an effect are logged by EffectReconcile.
	ReconciliationEventInsert(ctx context.Context, e ReconciliationEvent) (ReconciliationEvent, error)
	// ReconciliationEventList returns an operation key's events, oldest
	// first.
	ReconciliationEventList(ctx context.Context, operationKey string) ([]ReconciliationEvent, error)

	// UndoListBySession returns a session's undo stack in LIFO order (Seq
	// descending), the order its compensations run in.
	UndoListBySession(ctx context.Context, sessionID string) ([]UndoEntry, error)
	UndoGet(ctx context.Context, id string) (UndoEntry, error)
	// UndoSetStatus records how an entry's compensation settled, with detail
	// saying why (empty for none). A pending entry may become compensated,
	// skipped or failed; a failed one compensated or skipped, when a retry
	// after a human's fix succeeds or finds nothing to undo. A pending
	// entry may also stay pending with a detail: its effect was still
	// unsettled when the rollback reached it, and it runs when the
	// rollback is retried. Any other move gets ErrUndoTransition.
	UndoSetStatus(ctx context.Context, id string, to UndoStatus, detail string) (UndoEntry, error)

	// DeferredInsert records a record-deferred intent, idempotent by
	// operation key: if the key is already recorded, the stored item is
	// returned unchanged. Status defaults to DeferredRecorded; an item
	// inserted delivered needs a receipt with the provider's ID.
	DeferredInsert(ctx context.Context, d DeferredItem) (DeferredItem, error)
	DeferredGet(ctx context.Context, id string) (DeferredItem, error)
	// DeferredListBySession returns a session's items in the order they
	// were recorded.
	DeferredListBySession(ctx context.Context, sessionID string) ([]DeferredItem, error)
	// DeferredSetOutcome records what delivering an item came to. Delivered
	// needs a receipt with the provider's ID, failed a reason. A recorded
	// item may become either, and a failed one delivered by a later retry;
	// any other move gets ErrDeferredTransition. A reason, when given,
	// replaces the stored one; a delivery without one keeps it.
	DeferredSetOutcome(ctx context.Context, id string, status DeferredStatus, receipt *maestrotype.Receipt, reason string) (DeferredItem, error)

	// PostCallItemUpsert records a post-call work item by its session and
	// key: the first upsert inserts it (Status defaulting to
	// PostCallPending), later ones update its status, invocation, receipt
	// and reason. A delivered item is returned unchanged, never downgraded,
	// so a re-run learns it is done. Delivered needs a receipt with the
	// provider's ID; an empty InvocationID keeps the one linked before.
	PostCallItemUpsert(ctx context.Context, it PostCallItem) (PostCallItem, error)
	// PostCallItemList returns a session's items in the order they were
	// first recorded.
	PostCallItemList(ctx context.Context, sessionID string) ([]PostCallItem, error)
	// PostCallItemGet returns one item by its session and key.
	PostCallItemGet(ctx context.Context, sessionID, key string) (PostCallItem, error)
	// PostCallItemListHeld returns up to limit items held for a human,
	// oldest first.
	PostCallItemListHeld(ctx context.Context, limit int) ([]PostCallItem, error)
	// ReconciliationPage returns one page of the reconciliation queue:
	// held post-call work, held money, other held effects, then
	// undelivered messages, oldest first within each; filtered by kind
	// (PageQuery.Status), tool, the agent of the call behind it and age.
	ReconciliationPage(ctx context.Context, q PageQuery) (Page[ReconciliationItem], error)

	// ApprovalRequestInsert opens an approval request, idempotent by
	// operation key: if the key already has a request, the stored one is
	// returned unchanged. Status defaults to ApprovalPending; TimeoutAt is
	// required, and a request inserted already decided needs DecidedAt and
	// DecidedBy. A new request logs a 'requested' event by the agent and,
	// when inserted decided (a rule approved it at admission, say), the
	// decision as a second event by DecidedBy, in the same transaction.
	ApprovalRequestInsert(ctx context.Context, a ApprovalRequest) (ApprovalRequest, error)
	ApprovalRequestGet(ctx context.Context, id string) (ApprovalRequest, error)
	// ApprovalRequestGetDecided is ApprovalRequestGet for a workflow a
	// decision woke: a decider sends its wake-up before its transaction
	// commits (ApprovalDecideParams.Wake), so this read waits for a
	// decision in flight on the request to commit or roll back, and never
	// answers pending for a decision already signalled.
	ApprovalRequestGetDecided(ctx context.Context, id string) (ApprovalRequest, error)
	ApprovalRequestGetByKey(ctx context.Context, operationKey string) (ApprovalRequest, error)
	// ApprovalRequestListPendingBySession lists the session's requests
	// still pending, whatever their timeout.
	ApprovalRequestListPendingBySession(ctx context.Context, sessionID string) ([]ApprovalRequest, error)
	// ApprovalRequestExpire closes a still-pending request whose timeout
	// fired, as timed_out or auto_approved by policy, and logs the outcome
	// as an event by TimeoutActor. A request that was decided first is
	// returned unchanged and logs nothing. It mints no token: the policy
	// that auto-approves calls ApprovalTokenMint.
	ApprovalRequestExpire(ctx context.Context, id string, to ApprovalStatus) (ApprovalRequest, error)
	// ApprovalRequestList returns requests in a status (every status when
	// empty), oldest first: the order an approver works a queue in.
	ApprovalRequestList(ctx context.Context, status ApprovalStatus, limit int) ([]ApprovalRequest, error)
	// ApprovalRequestPage returns one page of requests, oldest first,
	// filtered by status, tool, agent and age.
	ApprovalRequestPage(ctx context.Context, q PageQuery) (Page[ApprovalRequest], error)

	// ApprovalDecide applies a human decision in one transaction: the
	// request's status, the decision's events and, for approve and modify,
	// a single-use token bound to the final arguments hash all commit
	// together. Modify replaces the request's frozen arguments with
	// p.NewArgs and logs both hashes and both documents. Only a pending
	// request inside its timeout moves; anything else, including the loser
	// of two racing deciders, gets ErrApprovalNotPending. An unknown request
	// is ErrNotFound.
	ApprovalDecide(ctx context.Context, p ApprovalDecideParams) (ApprovalDecideResult, error)

	// ApprovalEventInsert logs an attempt that changed nothing: a decision
	// refused (an approver without the role, say), a token refused, or an
	// operator notified of the request (or not, or an escalation). The
	// events that record a change are written only by the call that makes
	// it, so the log cannot claim a decision the request does not show.
	// ArgsHashBefore defaults to the request's current arguments hash. An
	// unknown request is ErrNotFound.
	ApprovalEventInsert(ctx context.Context, e ApprovalEvent) (ApprovalEvent, error)
	// ApprovalEventList returns a request's events, oldest first.
	ApprovalEventList(ctx context.Context, approvalID string) ([]ApprovalEvent, error)

	// ApprovalTokenSpend spends the request's token for argsHash: of any
	// number of concurrent spenders exactly one succeeds, and a 'token_used'
	// event by usedBy commits with it. Otherwise it logs a 'token_refused'
	// event saying why and returns ErrTokenUsed, ErrTokenMismatch,
	// ErrTokenExpired or ErrNoToken (ErrNotFound for an unknown request).
	// With ErrTokenUsed it also returns the spent token, so an attempt
	// retried after a crash can recognise its own spend by UsedBy.
	ApprovalTokenSpend(ctx context.Context, approvalID, argsHash, usedBy string) (ApprovalToken, error)
	// ApprovalTokenMint mints a token for a request a policy decided (a
	// rule at admission, auto-approval on timeout) or whose token expired
	// before the worker ran, bound to the request's arguments hash. A fresh
	// token supersedes an unspent one. It refuses a request that is not
	// approved or auto-approved with ErrApprovalNotPending, and one whose
	// token was already spent with ErrTokenUsed.
	ApprovalTokenMint(ctx context.Context, approvalID string, ttl time.Duration, actor string) (ApprovalToken, error)
	// ApprovalTokenMintSpend mints a token for a request a policy approved
	// and spends it by usedBy in the same transaction, logging both: the
	// execution a policy authorised needs no window in which its token
	// sits unspent. Like ApprovalTokenSpend, it returns ErrTokenUsed with
	// the spent token when the request's token was spent already, and
	// logs the refusal; a request not auto-approved is refused with
	// ErrApprovalNotPending.
	ApprovalTokenMintSpend(ctx context.Context, approvalID string, ttl time.Duration, actor, usedBy string) (ApprovalToken, error)

	// AuditMoneyEffects reconciles every money-class effect that may have
	// moved money against the approval records, and every spent money
	// token against the effects. It returns the divergences sorted by
	// operation key; an empty slice means the two agree. A compensation a
	// rollback ran (key "undo-{undo_id}", the entry's compensation tool) is
	// authorised by the rollback and not audited against approvals.
	AuditMoneyEffects(ctx context.Context) ([]AuditFinding, error)
}

// CatalogActivation is one time a catalog version became current.
type CatalogActivation struct {
	Version     string
	ActivatedAt time.Time
}

// CatalogVersion is a catalog file as the ledger keeps it: Version is the
// sha256 of Source.
type CatalogVersion struct {
	Version string
	Source  []byte
}

// ToolRegistryRow mirrors one catalog row; the table's CHECK constraints
// refuse unknown classes even if the loader were bypassed.
type ToolRegistryRow struct {
	Name             string
	Effect           maestrotype.Effect
	Delivery         maestrotype.Delivery
	Reversibility    maestrotype.Reversibility
	CompensationTool string // empty when none
	ApproverRole     string // empty when none
	ConnectorKind    string
	Owner            string
	CatalogHash      string
}

// Refusal is a call refused before anything ran (deny by default, invalid
// arguments, reused key). Refusals are logged, never executed.
type Refusal struct {
	ID           int64
	AgentID      string // empty when the caller was not authenticated
	SessionID    string
	Tool         string
	OperationKey string
	Code         maestrotype.Code
	Detail       string
	CreatedAt    time.Time
}

// Session is a call or agent session as the ledger records it.
type Session struct {
	ID      string // named by the agent runtime
	AgentID string // the agent of the session's first call
	// State is active, halted or ended. awaiting_approval is derived by
	// callers from the session's calls and never stored.
	State maestrotype.SessionState
	// Facts are what the agent runtime stated at the session's first call
	// (caller_number, tenant_id…), frozen from then on: approval conditions
	// read them, so a later call must not be able to change them.
	Facts map[string]string
	// Provenance says who vouches for each fact, by name. A fact with no
	// entry is agent-declared.
	Provenance map[string]maestrotype.Provenance
	// HaltStep names the compensation whose failure halted the session
	// ("undo_…: cancel_work_order"), HaltReason why it failed. Both are set
	// while the session is halted, cleared when a human resolves the halt,
	// and kept if the session ends halted.
	HaltStep   string
	HaltReason string
	// ResolvedBy, ResolveReason and Resolution record the last resolution
	// of a halt.
	ResolvedBy    string
	ResolveReason string
	Resolution    Resolution
	// RollbackStartedAt is set while a rollback runs: from before it waits
	// for the session's calls in flight until it finishes or halts. No new
	// effect is claimed in the session meanwhile.
	RollbackStartedAt *time.Time
	Transcript        json.RawMessage // stored when the session ends; may be nil
	CreatedAt         time.Time
	UpdatedAt         time.Time
	EndedAt           *time.Time // nil until the session ends
}

// Invocation is one admitted tool call.
type Invocation struct {
	ID           string
	OperationKey string
	SessionID    string
	AgentID      string
	Tool         string
	Args         json.RawMessage // canonical JSON
	ArgsHash     string          // sha256 hex of Args
	Route        maestrotype.Route
	State        maestrotype.InvocationState
	Observation  *maestrotype.Observation // nil until finished
	WorkflowID   string
	// ToolCallID is the agent's ID for the call that created the
	// invocation, kept for correlation; it names no effect. Empty when the
	// agent gave none.
	ToolCallID string
	// EffectClass and CatalogVersion are the tool's classification and the
	// catalog's hash when the call was admitted, frozen so the audit judges
	// the call by the rules it ran under. Empty on rows from before they
	// were recorded.
	EffectClass    maestrotype.Effect
	CatalogVersion string
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// ClaimOutcome is what EffectClaim decided.
type ClaimOutcome string

const (
	// ClaimNew: the key was unclaimed; the caller holds a fresh lease.
	ClaimNew ClaimOutcome = "new"
	// ClaimTakeover: an earlier holder's lease expired while in progress,
	// or the holder handed it to the caller (EffectHandOver); the caller
	// now holds the lease, and the earlier attempt's outcome is unknown
	// (reconcile or replay the provider's idempotency key first).
	ClaimTakeover ClaimOutcome = "takeover"
	// ClaimBusy: another holder's lease is live; retry later.
	ClaimBusy ClaimOutcome = "busy"
	// ClaimSettled: the effect already has a final status; use its result.
	ClaimSettled ClaimOutcome = "settled"
	// ClaimConflict: the key was used with a different payload hash.
	ClaimConflict ClaimOutcome = "conflict"
	// ClaimSessionClosed: the key was unclaimed and the claim's session is
	// being rolled back, so nothing was claimed and nothing may be sent.
	ClaimSessionClosed ClaimOutcome = "session_closed"
)

// EffectClaimParams are the inputs of EffectClaim.
type EffectClaimParams struct {
	OperationKey string
	InvocationID string
	Tool         string
	PayloadHash  string
	// Owner names the claiming attempt. It must be unique per attempt
	// (worker identity plus attempt number, say): the lease fences a stale
	// attempt out only if the attempt that took over has another name.
	Owner string
	// LeaseTTL is how long the claim is exclusive, measured on the
	// database's clock at millisecond precision. It must be positive.
	LeaseTTL    time.Duration
	BeforeState json.RawMessage
	// EffectClass and CatalogVersion are the tool's classification and the
	// catalog's hash as the claimer runs it, recorded with a new claim so
	// the audit judges an effect no invocation admitted (a compensation a
	// rollback ran) by the rules it ran under. Optional: default unrecorded,
	// and the audit falls back to the tool's last recorded classification.
	EffectClass    maestrotype.Effect
	CatalogVersion string
	// Undo is optional: pushed atomically with a new claim (ID generated when
	// empty, OperationKey defaulting to the claim's, Seq and Status assigned
	// by the store). It is ignored unless the outcome is ClaimNew.
	Undo *UndoEntry
	// BeforeRead is optional: a before read the claimer made before
	// claiming, recorded with a new claim (and ignored otherwise), so that
	// a new claim and its before read cost one write. A read made before a
	// new claim precedes any provider call for the key: no one held it.
	BeforeRead *maestrotype.StateRead
	// SessionID, when set, is read under its row's lock before the key is
	// claimed: a new claim in a session being rolled back is refused
	// (ClaimSessionClosed), so an effect is either claimed before the
	// rollback began, and waited for, or never sent. Claims that find the
	// key already claimed go on as usual. Compensations leave it empty.
	SessionID string
	// Spend is optional: an approved call's token is spent (and, for a
	// request a policy approved, minted first) in the claim's transaction,
	// bound to PayloadHash. A request not approved, or approved for other
	// arguments than PayloadHash, claims nothing and comes back as it
	// stands (EffectClaimResult.Approval). A refused spend commits its
	// refusal event and claims nothing (EffectClaimResult.Spend); a token
	// this same spender spent already (a retry after a crash) lets the
	// claim go on.
	Spend *ApprovalSpend
}

// ApprovalSpend is the approval token a claim spends in its transaction.
type ApprovalSpend struct {
	ApprovalID string
	// UsedBy names the spender, the invocation that executes the call.
	UsedBy string
	// MintTTL is the life of the token a request a policy approved mints
	// for itself, its deciding policy recorded as the minter; a human's
	// approval minted its token with the decision.
	MintTTL time.Duration
}

// EffectClaimResult is the outcome of EffectClaim and the row as it stands.
type EffectClaimResult struct {
	Outcome ClaimOutcome
	Effect  Effect
	// Undo is the entry as stored when this claim pushed one, else nil.
	Undo *UndoEntry
	// Spend is set when the claim's token spend was refused
	// (ErrTokenUsed, ErrTokenMismatch, ErrTokenExpired, ErrNoToken):
	// nothing was claimed and Outcome is empty. Token is the token the
	// spend found, if any.
	Spend error
	Token ApprovalToken
	// Approval is the spend's request as the claim found it when it was
	// not approved for PayloadHash (pending, rejected, timed out, or
	// approved with modified arguments): nothing was written.
	Approval *ApprovalRequest
}

// InvocationFinishParams record an invocation's outcome with the settle
// of its effect (EffectSettleFinish).
type InvocationFinishParams struct {
	InvocationID string
	State        maestrotype.InvocationState
	Observation  maestrotype.Observation
	// SessionID and RollingBack are optional: when the session's rollback
	// has begun by the time the effect settles, RollingBack is recorded
	// instead of Observation.
	SessionID   string
	RollingBack *maestrotype.Observation
	// MessageProvider, when set, has the latest status that provider
	// reported for the message the recorded receipt names read with it.
	MessageProvider string
}

// EffectSettleParams record the outcome of an effect.
type EffectSettleParams struct {
	OperationKey string
	Owner        string
	Status       maestrotype.EffectStatus // succeeded, failed or needs_reconciliation
	Receipt      *maestrotype.Receipt
	AfterState   json.RawMessage
	Result       *maestrotype.Observation
	Error        string
	// AfterRead is a succeeded effect's after read-back, recorded with the
	// settle unless one is recorded already. Optional: default none.
	AfterRead *maestrotype.StateRead
}

// Effect is one row of the idempotency ledger.
type Effect struct {
	OperationKey   string
	InvocationID   string
	Tool           string
	PayloadHash    string
	Status         maestrotype.EffectStatus
	LeaseOwner     string
	LeaseExpiresAt time.Time
	Attempts       int
	BeforeState    json.RawMessage
	AfterState     json.RawMessage
	Receipt        *maestrotype.Receipt
	Result         *maestrotype.Observation
	Error          string
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// Resolution is how an operator resolved a halt.
type Resolution string

const (
	// ResolvedByHand: a human undid what the rollback could not; the
	// entries it could not run are closed with the reason.
	ResolvedByHand Resolution = "by_hand"
	// ResolvedRetry: the rollback runs again, the entries it could not
	// run included.
	ResolvedRetry Resolution = "retry"
)

// UndoStatus is the lifecycle of an undo entry.
type UndoStatus string

const (
	UndoPending     UndoStatus = "pending"
	UndoCompensated UndoStatus = "compensated"
	UndoFailed      UndoStatus = "failed"
	UndoSkipped     UndoStatus = "skipped" // the effect never happened
)

// UndoEntry is a compensation pushed on a session's undo stack before the
// effect it undoes runs.
type UndoEntry struct {
	ID                  string
	SessionID           string
	OperationKey        string // the effect this entry undoes
	Seq                 int64  // assigned by the store; LIFO order is Seq descending
	CompensationTool    string
	CompensationVersion string
	ArgsSnapshot        json.RawMessage
	Status              UndoStatus
	// Detail says why the entry settled as it did, or, while it is still
	// pending, why a rollback could not run it yet.
	Detail    string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// DeferredStatus is the lifecycle of a record-deferred item.
type DeferredStatus string

const (
	DeferredRecorded  DeferredStatus = "recorded"
	DeferredDelivered DeferredStatus = "delivered"
	DeferredFailed    DeferredStatus = "failed"
	// DeferredHeld: no channel delivered it by its deadline; a human must.
	// Only a delivery moves it on.
	DeferredHeld DeferredStatus = "held"
)

// DeferredItem is work recorded in-call and delivered after the call.
type DeferredItem struct {
	ID           string
	SessionID    string
	OperationKey string
	Tool         string
	Args         json.RawMessage
	Status       DeferredStatus
	Receipt      *maestrotype.Receipt
	Reason       string
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// PostCallStatus is the lifecycle of a post-call work item.
type PostCallStatus string

const (
	PostCallPending   PostCallStatus = "pending"
	PostCallDelivered PostCallStatus = "delivered"
	PostCallFailed    PostCallStatus = "failed"
	// PostCallAwaitingApproval: the item's call waits for a human.
	PostCallAwaitingApproval PostCallStatus = "awaiting_approval"
	// PostCallHeld: no channel delivered the item by its deadline, or
	// every channel refused it; it waits for a human.
	PostCallHeld PostCallStatus = "held"
)

// PostCallItem is one piece of work the post-call workflow judged from a
// session and delivers through the normal gate.
type PostCallItem struct {
	SessionID string
	// Key identifies the item within its session, stably across re-runs
	// (see maestrotype.WorkItem).
	Key          string
	Tool         string
	Source       string // where the item came from ("deferred:def_…", "transcript:…")
	DeferredID   string // the recorded intent it delivers; empty for none
	OperationKey string
	InvocationID string // empty until the item's call is admitted
	Status       PostCallStatus
	Receipt      *maestrotype.Receipt // the provider's proof of delivery
	Reason       string
	// Attempts are the calls made to deliver it, as the post-call
	// workflow reports them (a JSON array); empty keeps the stored ones.
	Attempts json.RawMessage
	// Item is the work item as judged, channels included, so a retry can
	// redo it; empty keeps the stored one.
	Item      json.RawMessage
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ApprovalStatus is the lifecycle of an approval request.
type ApprovalStatus string

const (
	ApprovalPending      ApprovalStatus = "pending"
	ApprovalApproved     ApprovalStatus = "approved"
	ApprovalRejected     ApprovalStatus = "rejected"
	ApprovalTimedOut     ApprovalStatus = "timed_out"
	ApprovalAutoApproved ApprovalStatus = "auto_approved"
)

// ApprovalRequest freezes the exact arguments of a gated call.
type ApprovalRequest struct {
	ID           string
	InvocationID string
	OperationKey string
	SessionID    string
	AgentID      string
	Tool         string
	Args         json.RawMessage // canonical, frozen
	ArgsHash     string
	ApproverRole string
	Reason       string
	RiskTags     []string
	// Effect and Reversibility are the tool's classes when the request
	// opened, shown to approvers: how much friction a decision deserves
	// depends on whether it can be undone.
	Effect        maestrotype.Effect
	Reversibility maestrotype.Reversibility
	Context       json.RawMessage // the session's recent calls, shown to approvers
	Status        ApprovalStatus
	TimeoutAt     time.Time
	DecidedBy     string
	DecidedAt     *time.Time
	CreatedAt     time.Time
	// DecisionDetail is logged as the detail of the decision event of a
	// request inserted already decided: what an auto-approval rested on
	// (each fact, and who vouched for it). It is not a column of the
	// request, so reads leave it empty. Optional: default no detail.
	DecisionDetail json.RawMessage
}

// TimeoutActor is the actor of decisions taken because a request's timeout
// fired.
const TimeoutActor = "policy:timeout"

// ApprovalEventKind is what an approval event records.
type ApprovalEventKind string

const (
	ApprovalEventRequested    ApprovalEventKind = "requested"
	ApprovalEventApproved     ApprovalEventKind = "approved"
	ApprovalEventRejected     ApprovalEventKind = "rejected"
	ApprovalEventModified     ApprovalEventKind = "modified"
	ApprovalEventTimedOut     ApprovalEventKind = "timed_out"
	ApprovalEventAutoApproved ApprovalEventKind = "auto_approved"
	ApprovalEventTokenMinted  ApprovalEventKind = "token_minted"
	ApprovalEventTokenUsed    ApprovalEventKind = "token_used"
	// ApprovalEventTokenRefused: a spend was refused; Detail says why.
	ApprovalEventTokenRefused ApprovalEventKind = "token_refused"
	// ApprovalEventDecisionRefused: a decision attempt was refused before
	// it reached the request (the wrong role, say).
	ApprovalEventDecisionRefused ApprovalEventKind = "decision_refused"
	// ApprovalEventNotified: an operator was told of the request; Detail
	// holds the stage, recipient, channel and the provider's receipt.
	ApprovalEventNotified ApprovalEventKind = "notified"
	// ApprovalEventNotifyFailed: a notification could not be sent; Detail
	// says to whom and why. It never decides the request.
	ApprovalEventNotifyFailed ApprovalEventKind = "notify_failed"
	// ApprovalEventEscalated: the request was still undecided when its
	// role's escalation time came, and the escalation list is told.
	ApprovalEventEscalated ApprovalEventKind = "escalated"
)

// ApprovalEvent is one entry of a request's append-only log.
type ApprovalEvent struct {
	ID         int64 // assigned by the store, increasing in log order
	ApprovalID string
	Kind       ApprovalEventKind
	// Actor says who or what acted: "operator:<id>", "agent:<id>",
	// "rule:<condition>", "policy:timeout", or a worker spending a token.
	Actor string
	// ArgsHashBefore is the request's arguments hash when the event
	// happened; ArgsHashAfter is set only by 'modified', to the new hash.
	ArgsHashBefore string
	ArgsHashAfter  string
	Detail         json.RawMessage // a JSON object, or nil
	CreatedAt      time.Time
}

// ApprovalToken authorises one execution of an approved request with the
// arguments that hash to ArgsHash.
type ApprovalToken struct {
	ID         string // "tok_" and 128 random bits
	ApprovalID string
	ArgsHash   string
	ExpiresAt  time.Time
	UsedAt     *time.Time // nil until spent
	UsedBy     string
	CreatedAt  time.Time
}

// Decision is what a human approver decided.
type Decision string

const (
	DecisionApprove Decision = "approve"
	DecisionReject  Decision = "reject"
	// DecisionModify approves edited arguments in place of the frozen ones.
	DecisionModify Decision = "modify"
)

// ApprovalDecideParams are the inputs of ApprovalDecide.
type ApprovalDecideParams struct {
	ApprovalID string
	Decision   Decision
	Actor      string // "operator:<id>"
	Reason     string // recorded in the events' detail
	// NewArgs and NewArgsHash are the edited arguments, for modify only:
	// canonical JSON, already validated by the caller, and the hex sha256
	// of exactly those bytes.
	NewArgs     json.RawMessage
	NewArgsHash string
	// TokenTTL is the lifetime of the token an approval or modification
	// mints, measured on the database's clock at millisecond precision.
	TokenTTL time.Duration
	// Signal is queued in the outbox with the decision, in the same
	// transaction, to wake the waiting workflow. Optional: none when nil.
	Signal *OutboxSignal
	// Check vets the decision against the request as locked (an
	// approver's role, say), so that no read ahead of the decision is
	// needed; an error rolls the decision back and is returned wrapped.
	// It runs before Signal is read, so it may complete Signal from the
	// locked request. Optional.
	Check func(locked ApprovalRequest) error
	// Wake sends Signal while the decision's transaction is still open,
	// so that the outbox row is written already delivered and no second
	// write records the delivery. A wake-up that arrives before the commit
	// is safe: the woken claim locks the request and waits for it, and one
	// whose decision then rolls back finds the request pending and goes
	// back to waiting. A failed send leaves the row owed, for the caller's
	// next attempt and the relay. Optional: the row is queued owed.
	Wake func(ctx context.Context, s OutboxSignal) error
	// ReadBack reads, in the decision's transaction, what the decided
	// request's view shows besides the request: its events, its
	// invocation (or for a compensation its effect) and its session.
	ReadBack bool
}

// ApprovalDecideResult is the decided request and, for approve and modify,
// the token minted with the decision.
type ApprovalDecideResult struct {
	Request ApprovalRequest
	Token   *ApprovalToken
	// Signal is the queued wake-up, when the params carried one;
	// DeliveredAt is set when Wake delivered it.
	Signal *OutboxSignal
	// WakeErr is why Wake failed to deliver Signal, if it did.
	WakeErr error
	// Events, Invocation, Effect and Session are read back for ReadBack;
	// nil where the request has none.
	Events     []ApprovalEvent
	Invocation *Invocation
	Effect     *Effect
	Session    *Session
}

// OutboxSignal is a signal a committed decision owes a workflow. It is
// delivered until Temporal accepts it, abandoned when the workflow is
// gone, or held for a human when Temporal refuses it as invalid.
type OutboxSignal struct {
	ID         int64
	WorkflowID string
	SignalName string
	Payload    json.RawMessage // the signal's argument, JSON
	// ApprovalID is set for an approval's wake-up: a late delivery renews
	// the approval's unspent token, so a delay on maestro's side does not
	// let it expire unused.
	ApprovalID    string
	Attempts      int
	LastError     string
	NextAttemptAt time.Time
	CreatedAt     time.Time
	DeliveredAt   *time.Time
	AbandonedAt   *time.Time
	// HeldAt is set once Temporal refused the signal as invalid, which no
	// retry changes: it waits for a human, and LastError says why.
	HeldAt *time.Time
}

// Kinds of AuditFinding.
const (
	// AuditNoApproval: a money effect has no approval request.
	AuditNoApproval = "no_approval"
	// AuditNotApproved: the request was not approved by a human. Money is
	// never auto-approved, by rule or by timeout.
	AuditNotApproved = "not_approved"
	// AuditTokenUnused: no token was spent for the request.
	AuditTokenUnused = "token_unused"
	// AuditHashMismatch: the effect ran with a payload other than the one
	// approved or the one its token was spent for.
	AuditHashMismatch = "hash_mismatch"
	// AuditApprovalWithoutEffect: a money token was spent but no effect was
	// ever claimed for the request's operation key.
	AuditApprovalWithoutEffect = "approval_without_effect"
	// AuditClassChanged: effects of a tool ran under an effect class the
	// current catalog no longer gives it, or the tool left the catalog.
	// The other kinds judge each effect by its frozen class; this one
	// tells a human the classification moved under past effects.
	AuditClassChanged = "class_changed"
)

// AuditFinding is one divergence between money effects and approvals.
type AuditFinding struct {
	Kind         string
	OperationKey string
	Tool         string
	ApprovalID   string // empty for no_approval
	Detail       string
}
