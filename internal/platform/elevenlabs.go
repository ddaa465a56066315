package platform

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// ElevenLabs system dynamic variables a server tool's body carries. The
// platform fills them; the model cannot.
const (
	ElevenLabsConversationID = "system__conversation_id"
	ElevenLabsCallerID       = "system__caller_id"
	ElevenLabsCalledNumber   = "system__called_number"
	ElevenLabsCallSID        = "system__call_sid"
	elevenLabsSystemPrefix   = "system__"
)

// ElevenLabsSystemVariables are the system variables maestro asks for in
// every exported tool, with the signed field each one is.
var ElevenLabsSystemVariables = []struct{ Name, Field string }{
	{ElevenLabsConversationID, ""},
	{ElevenLabsCallerID, tools.SignedCallerNumber},
	{ElevenLabsCalledNumber, tools.SignedCalledNumber},
	{ElevenLabsCallSID, tools.SignedCallSID},
}

// ParseElevenLabsTool splits a server tool's body into the call (from the
// system variables) and the model's arguments (everything else).
func ParseElevenLabsTool(body []byte) (Call, json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return Call{}, nil, fmt.Errorf("error reading the tool body: %w", err)
	}
	str := func(name string) string {
		var s string
		_ = json.Unmarshal(fields[name], &s)
		return s
	}
	call := Call{ID: str(ElevenLabsConversationID), Signed: signed(
		tools.SignedCallerNumber, str(ElevenLabsCallerID),
		tools.SignedCalledNumber, str(ElevenLabsCalledNumber),
		tools.SignedCallSID, str(ElevenLabsCallSID),
	)}
	for name := range fields {
		if strings.HasPrefix(name, elevenLabsSystemPrefix) {
			delete(fields, name)
		}
	}
	if call.ID == "" {
		return Call{}, nil, fmt.Errorf("error reading the tool body: %s is missing; add it to the tool's body as a dynamic variable", ElevenLabsConversationID)
	}
	args, err := json.Marshal(fields)
	if err != nil {
		return Call{}, nil, fmt.Errorf("error encoding arguments: %w", err)
	}
	return call, args, nil
}

// ElevenLabsPostCall is ElevenLabs' post-call webhook.
type ElevenLabsPostCall struct {
	Type           string `json:"type"`
	EventTimestamp int64  `json:"event_timestamp"`
	Data           struct {
		AgentID        string `json:"agent_id"`
		ConversationID string `json:"conversation_id"`
		Status         string `json:"status"`
		Transcript     []struct {
			Role           string  `json:"role"`
			Message        *string `json:"message"`
			TimeInCallSecs float64 `json:"time_in_call_secs"`
		} `json:"transcript"`
		Metadata struct {
			StartTimeUnixSecs int64 `json:"start_time_unix_secs"`
			// PhoneCall is the telephony leg of a phone conversation
			// (Twilio or SIP trunking); absent for web and chat ones.
			PhoneCall *struct {
				Type           string `json:"type"`
				Direction      string `json:"direction"`
				AgentNumber    string `json:"agent_number"`
				ExternalNumber string `json:"external_number"`
				CallSID        string `json:"call_sid"`
			} `json:"phone_call"`
		} `json:"metadata"`
		// ClientData holds the conversation's dynamic variables, the
		// system__ ones among them.
		ClientData struct {
			DynamicVariables map[string]any `json:"dynamic_variables"`
		} `json:"conversation_initiation_client_data"`
	} `json:"data"`
}

// CallInfo is the conversation the webhook ends, with what ElevenLabs
// signs about it: for a call that made no tool call, the post-call
// webhook is the first maestro hears of it. The telephony record
// (metadata.phone_call) comes first, the system__ dynamic variables the
// conversation started with fill what it leaves out; both are in the
// signed body. The caller is whoever placed the call: the external number
// on an inbound call, the agent's on an outbound one.
func (pc ElevenLabsPostCall) CallInfo() Call {
	str := func(name string) string {
		v, _ := pc.Data.ClientData.DynamicVariables[name].(string)
		return v
	}
	caller, called, sid := str(ElevenLabsCallerID), str(ElevenLabsCalledNumber), str(ElevenLabsCallSID)
	if pcall := pc.Data.Metadata.PhoneCall; pcall != nil {
		from, to := pcall.ExternalNumber, pcall.AgentNumber
		if pcall.Direction == "outbound" {
			from, to = to, from
		}
		caller, called, sid = cmp.Or(from, caller), cmp.Or(to, called), cmp.Or(pcall.CallSID, sid)
	}
	return Call{ID: pc.Data.ConversationID, Signed: signed(
		tools.SignedCallerNumber, caller,
		tools.SignedCalledNumber, called,
		tools.SignedCallSID, sid,
	)}
}

// ElevenLabsTranscription is the post-call event that ends a call; others
// (audio, initiation failures) are acknowledged and ignored.
const ElevenLabsTranscription = "post_call_transcription"

// ParseElevenLabsPostCall reads a post-call webhook.
func ParseElevenLabsPostCall(body []byte) (ElevenLabsPostCall, error) {
	var pc ElevenLabsPostCall
	if err := json.Unmarshal(body, &pc); err != nil {
		return pc, fmt.Errorf("error reading the post-call webhook: %w", err)
	}
	if pc.Type == ElevenLabsTranscription && pc.Data.ConversationID == "" {
		return pc, fmt.Errorf("error reading the post-call webhook: data.conversation_id is missing")
	}
	return pc, nil
}

// Transcript converts the conversation's turns to maestro's transcript.
func (pc ElevenLabsPostCall) Transcript() mt.Transcript {
	t := mt.Transcript{Turns: []mt.Turn{}}
	start := time.Unix(pc.Data.Metadata.StartTimeUnixSecs, 0).UTC()
	for _, turn := range pc.Data.Transcript {
		speaker := speakerOf(turn.Role)
		if speaker == "" || turn.Message == nil || strings.TrimSpace(*turn.Message) == "" {
			continue
		}
		at := time.Time{}
		if pc.Data.Metadata.StartTimeUnixSecs > 0 {
			at = start.Add(time.Duration(turn.TimeInCallSecs * float64(time.Second)))
		}
		t.Turns = append(t.Turns, mt.Turn{Speaker: speaker, Text: *turn.Message, At: at})
	}
	return t
}
