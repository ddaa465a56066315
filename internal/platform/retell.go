package platform

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// Retell webhook events that end a call; call_started is acknowledged and
// ignored.
const (
	RetellCallEnded    = "call_ended"
	RetellCallAnalyzed = "call_analyzed"
)

// RetellCall is the call object Retell sends with functions and webhooks.
type RetellCall struct {
	CallID              string `json:"call_id"`
	AgentID             string `json:"agent_id"`
	FromNumber          string `json:"from_number"`
	ToNumber            string `json:"to_number"`
	StartTimestamp      int64  `json:"start_timestamp"`
	Transcript          string `json:"transcript"`
	TelephonyIdentifier *struct {
		TwilioCallSID string `json:"twilio_call_sid"`
	} `json:"telephony_identifier"`
	TranscriptObject []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
		Words   []struct {
			Start float64 `json:"start"`
		} `json:"words"`
	} `json:"transcript_object"`
}

// CallInfo is the call with what Retell signs about it.
func (c RetellCall) CallInfo() Call {
	sid := ""
	if c.TelephonyIdentifier != nil {
		sid = c.TelephonyIdentifier.TwilioCallSID
	}
	return Call{ID: c.CallID, Signed: signed(
		tools.SignedCallerNumber, c.FromNumber,
		tools.SignedCalledNumber, c.ToNumber,
		tools.SignedCallSID, sid,
	)}
}

// Turns converts the call's transcript to maestro's.
func (c RetellCall) Turns() mt.Transcript {
	t := mt.Transcript{Turns: []mt.Turn{}}
	for _, u := range c.TranscriptObject {
		speaker := speakerOf(u.Role)
		if speaker == "" || strings.TrimSpace(u.Content) == "" {
			continue
		}
		at := time.Time{}
		if c.StartTimestamp > 0 {
			at = time.UnixMilli(c.StartTimestamp).UTC()
			if len(u.Words) > 0 {
				at = at.Add(time.Duration(u.Words[0].Start * float64(time.Second)))
			}
		}
		t.Turns = append(t.Turns, mt.Turn{Speaker: speaker, Text: u.Content, At: at})
	}
	return t
}

// RetellFunction is a custom function call: {name, call, args}.
type RetellFunction struct {
	Name string          `json:"name"`
	Call RetellCall      `json:"call"`
	Args json.RawMessage `json:"args"`
}

// ParseRetellFunction reads a custom function call. Arguments that cannot
// be read are an *ArgumentsError, with the function call read.
func ParseRetellFunction(body []byte) (RetellFunction, error) {
	var f RetellFunction
	if err := json.Unmarshal(body, &f); err != nil {
		return f, fmt.Errorf("error reading the function call: %w", err)
	}
	if f.Name == "" || f.Call.CallID == "" {
		return f, fmt.Errorf("error reading the function call: name and call.call_id are required (turn off \"args only\" in the function's settings)")
	}
	args, err := argsObject(f.Args)
	if err != nil {
		return f, err
	}
	f.Args = args
	return f, nil
}

// RetellWebhook is a call event.
type RetellWebhook struct {
	Event string     `json:"event"`
	Call  RetellCall `json:"call"`
}

// ParseRetellWebhook reads a call event.
func ParseRetellWebhook(body []byte) (RetellWebhook, error) {
	var w RetellWebhook
	if err := json.Unmarshal(body, &w); err != nil {
		return w, fmt.Errorf("error reading the webhook: %w", err)
	}
	if w.Event == "" || w.Call.CallID == "" {
		return w, fmt.Errorf("error reading the webhook: event and call.call_id are required")
	}
	return w, nil
}
