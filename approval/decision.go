package approval

import (
	"encoding/json"
	"fmt"

	"github.com/maestro-run/maestro/internal/ledger"
)

// Approver is whoever asks to decide a request: an operator whose roles
// are known.
type Approver interface {
	HasRole(role string) bool
}

// Schema validates arguments against a tool's argument schema; a catalog
// tool satisfies it. It is an interface so this package need not import
// the catalog, which imports this package for hashing and conditions.
type Schema interface {
	ValidateArgs(args json.RawMessage) error
}

// Decision is an approver's attempt to decide a request.
type Decision struct {
	Kind     ledger.Decision
	Approver Approver
	// Args are the edited arguments of a modify; no other decision takes
	// arguments.
	Args json.RawMessage
}

// Refused names the rule a decision broke.
type Refused int

const (
	// RefusedNotApprover: the approver lacks the request's approver role.
	RefusedNotApprover Refused = iota + 1
	// RefusedArgsMissing: a modify came without the edited arguments.
	RefusedArgsMissing
	// RefusedArgsInvalid: the edited arguments fail the tool's schema.
	RefusedArgsInvalid
	// RefusedArgsUncheckable: the edited arguments could not be checked or
	// frozen (the tool left the catalog, or they are not canonical JSON).
	RefusedArgsUncheckable
	// RefusedArgsUnexpected: a decision other than modify carried arguments.
	RefusedArgsUnexpected
)

// DecisionError is a decision the gate's rules refuse. Nothing is recorded
// as decided; a refusal with an Audit reason is recorded as a refused
// decision on the request.
type DecisionError struct {
	Rule Refused
	// Msg is what the approver is told.
	Msg string
	// Audit is why the refusal goes on the request's record; empty for a
	// malformed request that never amounted to a decision.
	Audit string
}

func (e *DecisionError) Error() string { return e.Msg }

// CheckDecision applies the gate's rules to a decision on req: only an
// approver holding the request's role may decide, and a modify must carry
// arguments that pass the tool's schema, which it returns frozen with
// their hash. schema is nil when the tool is no longer in the catalog.
// A broken rule is a *DecisionError.
func CheckDecision(req ledger.ApprovalRequest, d Decision, schema Schema) (args []byte, argsHash string, err error) {
	if req.ApproverRole == "" || !d.Approver.HasRole(req.ApproverRole) {
		return nil, "", &DecisionError{
			Rule:  RefusedNotApprover,
			Msg:   fmt.Sprintf("only an operator with the %q role may decide approval %s; the attempt was logged", req.ApproverRole, req.ID),
			Audit: "operator lacks the approver role " + req.ApproverRole,
		}
	}
	if d.Kind != ledger.DecisionModify {
		if len(d.Args) > 0 {
			return nil, "", &DecisionError{Rule: RefusedArgsUnexpected, Msg: `"args" is only accepted by modify`}
		}
		return nil, "", nil
	}
	return modifiedArgs(req, d.Args, schema)
}

// modifiedArgs re-validates an approver's edited arguments against the
// tool's schema and freezes them: a modify must not let through what the
// gate would have refused from the agent.
func modifiedArgs(req ledger.ApprovalRequest, edited json.RawMessage, schema Schema) ([]byte, string, error) {
	if len(edited) == 0 {
		msg := `modify needs "args": the edited arguments`
		return nil, "", &DecisionError{Rule: RefusedArgsMissing, Msg: msg, Audit: msg}
	}
	if schema == nil {
		return nil, "", &DecisionError{Rule: RefusedArgsUncheckable, Msg: fmt.Sprintf("tool %s is no longer in the catalog", req.Tool)}
	}
	if err := schema.ValidateArgs(edited); err != nil {
		msg := "the edited arguments are invalid: " + err.Error()
		return nil, "", &DecisionError{Rule: RefusedArgsInvalid, Msg: msg, Audit: msg}
	}
	args, hash, err := Canonicalize(edited)
	if err != nil {
		return nil, "", &DecisionError{Rule: RefusedArgsUncheckable, Msg: err.Error()}
	}
	return args, hash, nil
}

// RefusedEvent is the record of a refused decision on req.
func RefusedEvent(req ledger.ApprovalRequest, actor string, d ledger.Decision, why string) ledger.ApprovalEvent {
	detail, _ := json.Marshal(map[string]string{"decision": string(d), "why": why})
	return ledger.ApprovalEvent{
		ApprovalID:     req.ID,
		Kind:           ledger.ApprovalEventDecisionRefused,
		Actor:          actor,
		ArgsHashBefore: req.ArgsHash,
		Detail:         detail,
	}
}
