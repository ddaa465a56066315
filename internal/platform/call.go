package platform

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
)

// ToolCall is one tool call a platform made, in maestro's terms.
type ToolCall struct {
	// ID is the platform's tool-call ID: it tells repeats apart only for a
	// tool the catalog marks repeatable; everywhere else a re-issued call
	// names the same effect.
	ID   string
	Name string
	// Args are what the model filled in. They never become session facts.
	Args json.RawMessage
}

// Call is what the platform says about the call a request belongs to.
type Call struct {
	// ID is the platform's call or conversation ID: maestro's session.
	ID string
	// Signed holds the fields the platform vouches for, by signed field
	// name (tools.SignedCallerNumber, ...); empty values are left out.
	Signed map[string]string
}

func signed(pairs ...string) map[string]string {
	out := map[string]string{}
	for i := 0; i+1 < len(pairs); i += 2 {
		if v := strings.TrimSpace(pairs[i+1]); v != "" {
			out[pairs[i]] = v
		}
	}
	return out
}

// ArgumentsError is arguments the model filled in that cannot be read, in
// a request that is otherwise sound: the model is told, as of any invalid
// argument, rather than the platform refused.
type ArgumentsError struct{ Err error }

func (e *ArgumentsError) Error() string { return "error reading arguments: " + e.Err.Error() }

func (e *ArgumentsError) Unwrap() error { return e.Err }

// argsObject reads arguments sent as an object or as a JSON string holding
// one (OpenAI-style function arguments); absent arguments are {}.
func argsObject(raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage(`{}`), nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, &ArgumentsError{Err: err}
		}
		if strings.TrimSpace(s) == "" {
			return json.RawMessage(`{}`), nil
		}
		raw = json.RawMessage(s)
	}
	if !json.Valid(raw) {
		return nil, &ArgumentsError{Err: errors.New("not JSON")}
	}
	return raw, nil
}

// OneLine folds a wording onto one line: Vapi wants a single-line result.
func OneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
