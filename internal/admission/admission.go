package admission

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/approval"
	"github.com/maestro-run/maestro/internal/ledger"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
	"github.com/maestro-run/maestro/workflows"
)

// Config holds the gate's dependencies.
type Config struct {
	Store    ledger.Store
	Catalog  tools.Source
	Temporal client.Client
	// TaskQueue for invocation workflows. Optional: default workflows.TaskQueue.
	TaskQueue string
	// RollbackWait bounds how long a session's rollback waits for the
	// calls in flight to settle before it compensates; it is fixed when
	// the session's workflow starts. Optional: default
	// workflows.DefaultRollbackWait (30s).
	RollbackWait time.Duration
	// Logger. Optional: default slog.Default().
	Logger *slog.Logger
	// Now is the clock. Optional: default time.Now.
	Now func() time.Time
	// Withheld reports a tool agents are kept from for now (a red
	// canary); a call to it is refused. Optional: default none.
	Withheld func(*tools.Tool) bool
}

// WithDefaults returns c with optional fields filled in.
func (c Config) WithDefaults() Config {
	if c.TaskQueue == "" {
		c.TaskQueue = workflows.TaskQueue
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.RollbackWait <= 0 {
		c.RollbackWait = workflows.DefaultRollbackWait
	}
	return c
}

func (c Config) validate() error {
	switch {
	case c.Store == nil:
		return errors.New("admission: a store is required")
	case c.Catalog == nil:
		return errors.New("admission: a catalog is required")
	case c.Temporal == nil:
		return errors.New("admission: a Temporal client is required")
	}
	return nil
}

// Gate admits tool calls.
type Gate struct {
	cfg      Config
	sessions startedSessions
}

// New validates cfg and builds a gate.
func New(cfg Config) (*Gate, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Gate{cfg: cfg}, nil
}

// Request is one call as an agent made it.
type Request struct {
	AgentID      string
	SessionID    string
	Tool         string
	Args         []byte
	OperationKey string
	ToolCallID   string
	// SessionContext holds facts the agent states about the session. They
	// are recorded as agent-declared: an approval rule sees them only if
	// it names that provenance.
	SessionContext map[string]string
	// Listen, if set, registers a wait for a new invocation's outcome
	// before its workflow starts (answer.Board.Wait), so the caller hears
	// it without first reading the ledger. Optional.
	Listen func(invocationID string) (<-chan struct{}, func())
}

// Admitted is an invocation that passed the gate and whose workflow runs.
type Admitted struct {
	Invocation ledger.Invocation
	// Created is false when the operation key was seen before with the same
	// tool and arguments: the caller gets the original invocation.
	Created    bool
	ApprovalID string
	// Decided is set for a gated call whose approval was decided at
	// admission (a rule approved it), so there is no human to wait for.
	Decided bool
	// Recorded and Forget are what Request.Listen returned for a new
	// invocation, registered before its workflow started; nil otherwise.
	// The caller calls Forget when done waiting.
	Recorded <-chan struct{}
	Forget   func()
}

// Admit runs every check and, if all pass, records the invocation and
// starts its workflow. A refused call returns a *apitype.Refusal error and
// runs nothing; every refusal is logged in the ledger.
func (g *Gate) Admit(ctx context.Context, req Request) (Admitted, error) {
	adm, err := g.admit(ctx, req)
	var ref *apitype.Refusal
	if errors.As(err, &ref) {
		g.logRefusal(ctx, req, ref)
	}
	return adm, err
}

// call is a request that passed the checks needing no ledger: a known
// agent, a tool it may use, valid arguments frozen, a usable key.
type call struct {
	agent *tools.Agent
	tool  *tools.Tool
	// catalog is the snapshot the call was checked against: its version
	// is recorded with the invocation, which runs under it throughout.
	catalog   *tools.Catalog
	canonical []byte
	hash      string
	key       string
	postCall  bool
}

func (g *Gate) admit(ctx context.Context, req Request) (Admitted, error) {
	c, err := g.check(req)
	if err != nil {
		return Admitted{}, err
	}
	if adm, ok, err := g.admitInKnownSession(ctx, req, c); ok || err != nil {
		return adm, err
	}
	// The post-call agent acts in sessions that exist already, for their
	// own agents: it opens none and is not capped.
	maxLive := c.agent.MaxLiveSessions
	if c.postCall {
		maxLive = 0
	}
	sess, err := g.cfg.Store.SessionUpsertCapped(ctx, ledger.Session{ID: req.SessionID, AgentID: c.agent.ID,
		Facts: req.SessionContext, Provenance: declared(req.SessionContext)}, maxLive)
	if ref := RefuseOverCap(err); ref != nil {
		return Admitted{}, ref
	}
	if err != nil {
		return Admitted{}, fmt.Errorf("error recording session: %w", err)
	}
	if err := g.checkSession(ctx, c, sess); err != nil {
		return Admitted{}, err
	}
	if err := g.ensureSession(ctx, c, sess); err != nil {
		return Admitted{}, err
	}
	rec, err := g.record(ctx, req, c, sess)
	if err != nil {
		return Admitted{}, err
	}
	return g.listenAndLaunch(ctx, req, c, sess, rec)
}

// check runs the checks that need no ledger: who calls, which tool, with
// what arguments, under which key.
func (g *Gate) check(req Request) (call, error) {
	cat := g.cfg.Catalog.Load()
	agent, ok := cat.Agent(req.AgentID)
	if !ok {
		return call{}, refuseUnauthorized()
	}
	pc := cat.PostCall()
	postCall := pc != nil && pc.Agent == agent.ID
	// Before anything else is read or written: every identifier ends up
	// in workflow IDs, ledger keys and operators' URLs.
	if ref := checkIdentifiers(req, postCall); ref != nil {
		return call{}, ref
	}
	tool, ok := cat.Tool(req.Tool)
	if !ok {
		return call{}, refuseUnknownTool(req.Tool)
	}
	if !agent.Allows(tool.Name) {
		return call{}, refuseNotAllowed(req.Tool, agent.ID)
	}
	if g.cfg.Withheld != nil && g.cfg.Withheld(tool) {
		return call{}, refuseCanaryRed(tool.Name)
	}
	if err := tool.ValidateArgs(req.Args); err != nil {
		return call{}, refuseInvalidArgs(tool, err)
	}
	canonical, hash, err := approval.Canonicalize(req.Args)
	if err != nil {
		return call{}, refuseInvalidArgs(tool, err)
	}
	key, err := operationKey(req, tool, hash, postCall)
	if err != nil {
		return call{}, err
	}
	if err := checkReservedKey(key, postCall); err != nil {
		return call{}, err
	}
	return call{agent: agent, tool: tool, catalog: cat, canonical: canonical, hash: hash, key: key, postCall: postCall}, nil
}

// checkSession refuses a call its session cannot take: another agent's
// session, a halted or ended one, one waiting for an approver, or one
// being rolled back.
func (g *Gate) checkSession(ctx context.Context, c call, sess ledger.Session) error {
	if err := checkSessionRow(c, sess); err != nil {
		return err
	}
	route := c.tool.Route()
	if !c.postCall && approval.SuspendsWhileAwaiting(route) && c.agent.WhileAwaitingApproval != tools.AwaitingApprovalAllowWrites {
		if w, err := approval.AwaitedIn(ctx, g.cfg.Store, sess.ID, c.key, g.cfg.Now()); err != nil {
			return err
		} else if w != nil {
			return refuseSessionAwaitingApproval(sess.ID, *w)
		}
	}
	// After the approval check, which names what the session waits for
	// when a rollback's compensation waits for a human. The effect claim
	// refuses these too, under the session row's lock: a call admitted
	// just before the rollback began is refused there, or was claimed
	// first and is waited for.
	if !c.postCall && sess.RollbackStartedAt != nil && route != mt.RouteRead {
		if err := g.refuseWhileRollingBack(ctx, sess, c.key); err != nil {
			return err
		}
	}
	return nil
}

// checkSessionRow refuses a call the session's row alone rules out:
// another agent's session, a halted or ended one.
func checkSessionRow(c call, sess ledger.Session) error {
	switch {
	// The post-call agent has no key and acts only from the post-call
	// workflow, on behalf of the session's own agent.
	case sess.AgentID != c.agent.ID && !c.postCall:
		return RefuseSessionForbidden(sess.ID)
	case sess.State == mt.SessionHalted:
		return refuseSessionHalted(sess)
	case sess.State == mt.SessionEnded && !c.postCall:
		return refuseSessionEnded(sess)
	}
	return nil
}

// record inserts the invocation under its key, or finds the one already
// there; a key already used for another call is refused. A new gated
// call's approval request opens in the same transaction, so the call is
// never recorded without it.
func (g *Gate) record(ctx context.Context, req Request, c call, sess ledger.Session) (ledger.Admission, error) {
	route := c.tool.Route()
	// Counted with the insert, under the agent's lock: see
	// ledger.Store.InvocationAdmit.
	maxOpen := c.agent.MaxOpenApprovals
	if c.postCall {
		maxOpen = 0
	}
	var open ledger.ApprovalOpener
	if route == mt.RouteGated {
		open = g.approvalOpener(c.catalog, c.tool, sess)
	}
	rec, err := g.cfg.Store.InvocationAdmit(ctx, g.invocation(req, c), maxOpen, open)
	if ref := RefuseOverCap(err); ref != nil {
		return ledger.Admission{}, ref
	}
	if err != nil {
		return ledger.Admission{}, fmt.Errorf("error recording invocation: %w", err)
	}
	if inv := rec.Invocation; !rec.Created && (inv.Tool != c.tool.Name || inv.ArgsHash != c.hash || inv.AgentID != c.agent.ID) {
		return ledger.Admission{}, refuseKeyReused(c.key, inv)
	}
	return rec, nil
}

// invocation is the row a call is recorded as.
func (g *Gate) invocation(req Request, c call) ledger.Invocation {
	route := c.tool.Route()
	state := mt.InvocationRunning
	if route == mt.RouteGated {
		state = mt.InvocationAwaitingApproval
	}
	return ledger.Invocation{
		OperationKey: c.key,
		SessionID:    req.SessionID,
		AgentID:      c.agent.ID,
		Tool:         c.tool.Name,
		Args:         c.canonical,
		ArgsHash:     c.hash,
		Route:        route,
		State:        state,
		WorkflowID:   workflows.InvocationWorkflowID(c.key),
		ToolCallID:   req.ToolCallID,
		// Frozen here, so the audit judges the call by the catalog it was
		// admitted under whatever later catalogs say.
		EffectClass:    c.tool.Effect,
		CatalogVersion: c.catalog.Hash(),
	}
}

// admitInKnownSession records a call in a session whose workflow this
// process started, in one statement that holds the session to what
// checkSession checks of its row (its agent's, active, not being rolled
// back), with no read of the session first; a gated call, whose approval
// rule reads the session's facts, reads it in the transaction that records
// the call. Either way a call finds no pending approval in the session, or
// goes to the full admission, which tells whether that approval holds the
// call and names it. It does so only where those are all the checks the
// call needs: not the post-call agent's. ok is false when it did not
// record the call: the key was taken, or the session needs a look; the
// full admission then runs and says why.
func (g *Gate) admitInKnownSession(ctx context.Context, req Request, c call) (Admitted, bool, error) {
	route := c.tool.Route()
	if c.postCall || !g.sessions.has(req.SessionID) {
		return Admitted{}, false, nil
	}
	if route == mt.RouteGated {
		return g.admitGatedInKnownSession(ctx, req, c)
	}
	inv, ok, err := g.cfg.Store.InvocationInsertInSession(ctx, g.invocation(req, c))
	if err != nil {
		return Admitted{}, false, fmt.Errorf("error recording invocation: %w", err)
	}
	if !ok {
		return Admitted{}, false, nil
	}
	// Not gated, so launch opens no approval and needs no session.
	adm, err := g.listenAndLaunch(ctx, req, c, ledger.Session{}, ledger.Admission{Invocation: inv, Created: true})
	return adm, true, err
}

// listenAndLaunch starts a recorded call's workflow unless the call is
// already final, listening for its outcome first when the caller waits.
func (g *Gate) listenAndLaunch(ctx context.Context, req Request, c call, sess ledger.Session, rec ledger.Admission) (Admitted, error) {
	adm := Admitted{Invocation: rec.Invocation, Created: rec.Created}
	if adm.Invocation.State.Terminal() {
		return adm, nil
	}
	if rec.Created && req.Listen != nil {
		// Before the workflow starts, so its outcome cannot be recorded
		// unheard; a re-sent key's workflow may have run already, and its
		// caller reads the ledger first.
		adm.Recorded, adm.Forget = req.Listen(adm.Invocation.ID)
	}
	adm, err := g.launch(ctx, c, sess, adm, rec.Approval)
	if err != nil {
		if adm.Forget != nil {
			adm.Forget()
		}
		return Admitted{}, err
	}
	return adm, nil
}

// launch opens a gated call's approval request unless its admission did
// (apr), and starts the invocation's workflow.
func (g *Gate) launch(ctx context.Context, c call, sess ledger.Session, adm Admitted, apr *ledger.ApprovalRequest) (Admitted, error) {
	inv := adm.Invocation
	in := workflows.InvocationInput{
		InvocationID:   inv.ID,
		OperationKey:   inv.OperationKey,
		SessionID:      inv.SessionID,
		AgentID:        inv.AgentID,
		Tool:           inv.Tool,
		Route:          inv.Route,
		Args:           inv.Args,
		ArgsHash:       inv.ArgsHash,
		Revision:       workflows.InvocationRevision,
		CatalogVersion: inv.CatalogVersion,
	}
	if inv.Route == mt.RouteGated {
		if apr == nil {
			// A key recorded before: its request opened with it, and is
			// found; one recorded before requests opened with their call
			// is opened now.
			opened, err := g.openApproval(ctx, c.catalog, c.tool, inv, sess)
			if err != nil {
				return adm, err
			}
			apr = &opened
		}
		adm.ApprovalID = apr.ID
		in.ApprovalID = apr.ID
		in.PreApproved = apr.Status != ledger.ApprovalPending
		adm.Decided = in.PreApproved
		in.ApprovalTimeout = c.tool.Approval.Timeout
		in.Notify = g.cfg.Catalog.Load().Notifies(apr.ApproverRole)
	}
	// Starting is idempotent: a duplicate request, or a retry after a crash
	// between the insert and the start, finds the workflow already there.
	if err := g.start(ctx, in); err != nil {
		return adm, err
	}
	return adm, nil
}

// refuseWhileRollingBack refuses a new call in a session being rolled
// back. A call re-sent under a key already admitted is answered with its
// invocation as usual: it was admitted before the rollback began.
func (g *Gate) refuseWhileRollingBack(ctx context.Context, sess ledger.Session, key string) error {
	_, err := g.cfg.Store.InvocationGetByKey(ctx, key)
	switch {
	case err == nil:
		return nil
	case !errors.Is(err, ledger.ErrNotFound):
		return fmt.Errorf("error reading the call's key: %w", err)
	}
	return refuseSessionRollingBack(sess)
}

// StartSession starts the session's workflow: on its first call, or when
// a session that made no call is ended, so that ending it runs the
// post-call workflow like any other (a platform's end-of-call event for a
// call without tool calls). A session workflow that runs or ran already is
// left as it is, and nothing is written to its history.
func (g *Gate) StartSession(ctx context.Context, agent *tools.Agent, sessionID string) error {
	_, err := g.cfg.Temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                       workflows.SessionWorkflowID(sessionID),
		TaskQueue:                g.cfg.TaskQueue,
		WorkflowIDReusePolicy:    enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		// As for an invocation's: the first workflow task runs in this
		// process when its worker does, without matching's round trip.
		EnableEagerStart: true,
	}, workflows.SessionWorkflowName, g.sessionInput(agent, sessionID))
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if err != nil && !errors.As(err, &started) {
		return fmt.Errorf("error starting the session workflow: %w", err)
	}
	g.sessions.add(sessionID)
	return nil
}

func (g *Gate) sessionInput(agent *tools.Agent, sessionID string) workflows.SessionInput {
	// A session of an agent without the rollback policy starts with no
	// policy at all, not "none": the session input stays as it always was.
	var onFailure mt.OnFailure
	if agent.OnFailure == mt.OnFailureRollback {
		onFailure = mt.OnFailureRollback
	}
	return workflows.SessionInput{SessionID: sessionID, AgentID: agent.ID, OnFailure: onFailure, RollbackWait: g.cfg.RollbackWait}
}

// checkReservedKey keeps agents off the key spaces maestro derives itself:
// a compensation's undo-{id} and a post-call item's postcall:{session}:{item}.
// An agent holding one could pre-empt the effect it names; only the
// post-call agent makes postcall: keys.
func checkReservedKey(key string, postCall bool) error {
	switch {
	case strings.HasPrefix(key, "undo-"):
		return refuseBadRequest("operation keys starting with undo- are reserved for compensations")
	case strings.HasPrefix(key, "postcall:") && !postCall:
		return refuseBadRequest("operation keys starting with postcall: are reserved for post-call delivery")
	}
	return nil
}

func (g *Gate) isPostCallAgent(agentID string) bool {
	pc := g.cfg.Catalog.Load().PostCall()
	return pc != nil && pc.Agent == agentID
}

func (g *Gate) start(ctx context.Context, in workflows.InvocationInput) error {
	_, err := g.cfg.Temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                       workflows.InvocationWorkflowID(in.OperationKey),
		TaskQueue:                g.cfg.TaskQueue,
		WorkflowIDReusePolicy:    enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		// The API and the worker share a process, so the first workflow task
		// can run here without a round trip through matching (ADR 8).
		EnableEagerStart: true,
	}, workflows.InvocationWorkflowName, in)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if err != nil && !errors.As(err, &started) {
		return fmt.Errorf("error starting invocation workflow: %w", err)
	}
	return nil
}

// derivedKeyHashLen is how much of the arguments hash a derived key
// carries: 128 bits, so two argument sets of one tool in one session never
// share a key by chance (and if they did, the stored hash would refuse the
// second as a reused key rather than answer it with the first).
const derivedKeyHashLen = 32

// operationKey is the agent's key if it gave one. Otherwise it is derived
// from what names the business effect: session, tool and canonical
// arguments. A model that re-issues a call under a new tool-call ID names
// the same effect and gets the first call's outcome, not a second effect.
// The tool-call ID joins the key only where identical arguments may
// legitimately repeat: a tool marked repeatable, and a read, which has no
// effect to duplicate and must not answer a later lookup with an earlier
// result.
func operationKey(req Request, tool *tools.Tool, argsHash string, postCall bool) (string, error) {
	if postCall && req.OperationKey != "" {
		if ref := checkMaestroKey(req.OperationKey); ref != nil {
			return "", ref
		}
		return req.OperationKey, nil
	}
	if req.OperationKey != "" {
		return req.OperationKey, nil // held to the rule by checkIdentifiers
	}
	if repeatsByCallID(tool) && req.ToolCallID == "" {
		return "", refuseKeyMissing(tool)
	}
	key := derivedKey(req, tool, argsHash)
	if ref := CheckIdentifier("operation_key", key); ref != nil {
		return "", ref // cannot happen while session_id and tool_call_id keep the rule
	}
	return key, nil
}

// repeatsByCallID reports whether a derived key includes the tool-call ID.
func repeatsByCallID(tool *tools.Tool) bool {
	return tool.Repeatable || tool.Effect == mt.EffectRead
}

func (g *Gate) logRefusal(ctx context.Context, req Request, ref *apitype.Refusal) {
	err := g.cfg.Store.RefusalInsert(ctx, ledger.Refusal{
		AgentID: req.AgentID,
		// An identifier refused for breaking the rule is left out: the
		// detail names the field, and the value would carry what the rule
		// keeps out of operators' screens.
		SessionID: loggable(mt.CheckIdentifier("session_id", req.SessionID) == nil, req.SessionID),
		Tool:      req.Tool,
		OperationKey: loggable(mt.CheckIdentifier("operation_key", req.OperationKey) == nil ||
			(g.isPostCallAgent(req.AgentID) && checkMaestroKey(req.OperationKey) == nil), req.OperationKey),
		Code:   ref.Observation.Code,
		Detail: ref.Observation.Summary,
	})
	if err != nil {
		g.cfg.Logger.Error("could not log refusal", "err", err, "code", ref.Observation.Code)
	}
	g.cfg.Logger.Info("call refused", "agent", req.AgentID, "tool", req.Tool, "code", ref.Observation.Code)
}

// errSessionNeedsLook ends an admission in a known session whose row calls
// for the checks only the full admission makes (a rollback under way).
var errSessionNeedsLook = errors.New("the session needs the full admission")

// admitGatedInKnownSession records a gated call, its session read and
// checked and its approval request opened, in one transaction. ok is false
// when the full admission must run: the session is not recorded, or is
// being rolled back.
func (g *Gate) admitGatedInKnownSession(ctx context.Context, req Request, c call) (Admitted, bool, error) {
	var sess ledger.Session
	check := func(s ledger.SessionAtAdmission) error {
		if err := checkSessionRow(c, s.Session); err != nil {
			return err
		}
		// A session being rolled back, or one with a pending approval
		// that may hold this call, is for the full admission to judge.
		if s.RollbackStartedAt != nil || (s.ApprovalPending && c.agent.WhileAwaitingApproval != tools.AwaitingApprovalAllowWrites) {
			return errSessionNeedsLook
		}
		sess = s.Session
		return nil
	}
	now := g.cfg.Now()
	open := func(inv ledger.Invocation, calls []ledger.Invocation) (ledger.ApprovalRequest, error) {
		return approval.NewRequest(inv, decodeArgs(inv.Args), sess, policyOf(c.catalog, c.tool), now, calls)
	}
	rec, err := g.cfg.Store.InvocationAdmitInSession(ctx, g.invocation(req, c), c.agent.MaxOpenApprovals, check, open)
	switch {
	case errors.Is(err, errSessionNeedsLook), errors.Is(err, ledger.ErrNotFound):
		return Admitted{}, false, nil
	case err != nil:
		var ref *apitype.Refusal
		if errors.As(err, &ref) {
			return Admitted{}, true, ref
		}
		if ref := RefuseOverCap(err); ref != nil {
			return Admitted{}, true, ref
		}
		return Admitted{}, true, fmt.Errorf("error recording invocation: %w", err)
	}
	if inv := rec.Invocation; !rec.Created && (inv.Tool != c.tool.Name || inv.ArgsHash != c.hash || inv.AgentID != c.agent.ID) {
		return Admitted{}, true, refuseKeyReused(c.key, inv)
	}
	adm, err := g.listenAndLaunch(ctx, req, c, sess, rec)
	return adm, true, err
}
