// Package rule holds the CEL conditions that auto-approve gated calls.
// A condition reads a call's arguments and its session's facts; the
// package is a leaf so the tool catalog compiles conditions at load
// without linking the approval gate and the ledger it writes.
package rule

import (
	"encoding/json"
	"fmt"

	"github.com/google/cel-go/cel"
)

// Condition is a compiled auto-approval rule: a CEL expression over the
// call's arguments (args) and the session's facts (session) that must
// evaluate to a boolean.
type Condition struct {
	src string
	prg cel.Program
	// reads are the session facts the condition reads by name; readsAll
	// is set when it reads session some other way.
	reads    []string
	readsAll bool
}

var conditionEnv = func() *cel.Env {
	env, err := cel.NewEnv(
		cel.Variable("args", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("session", cel.MapType(cel.StringType, cel.DynType)),
	)
	if err != nil {
		panic(fmt.Sprintf("rule: building the CEL environment: %v", err))
	}
	return env
}()

// Compile parses and type-checks a rule.
func Compile(src string) (*Condition, error) {
	ast, iss := conditionEnv.Compile(src)
	if iss.Err() != nil {
		return nil, fmt.Errorf("error compiling condition %q: %w", src, iss.Err())
	}
	if ast.OutputType() != cel.BoolType {
		return nil, fmt.Errorf("error compiling condition %q: it yields %s, not a boolean", src, ast.OutputType())
	}
	prg, err := conditionEnv.Program(ast, cel.CostLimit(10_000))
	if err != nil {
		return nil, fmt.Errorf("error planning condition %q: %w", src, err)
	}
	reads, all := sessionReads(ast)
	return &Condition{src: src, prg: prg, reads: reads, readsAll: all}, nil
}

// String is the rule's source; it is logged as the actor of an
// auto-approval.
func (c *Condition) String() string { return c.src }

// Approves evaluates the rule. Any evaluation error (a missing session
// fact, a type mismatch) counts as "not approved": a rule can only ever
// spare a human, never overrule one.
func (c *Condition) Approves(args, session map[string]any) bool {
	if args == nil {
		args = map[string]any{}
	}
	if session == nil {
		session = map[string]any{}
	}
	out, _, err := c.prg.Eval(map[string]any{"args": celValue(args), "session": celValue(session)})
	if err != nil {
		return false
	}
	b, ok := out.Value().(bool)
	return ok && b
}

// celValue converts exact JSON numbers into the int or double CEL expects,
// so "args.amount_cents < 5000" compares numbers, not strings.
func celValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = celValue(e)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = celValue(e)
		}
		return out
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
		if f, err := t.Float64(); err == nil {
			return f
		}
		return t.String()
	}
	return v
}
