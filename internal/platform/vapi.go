package platform

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// Vapi server message types maestro acts on; every other type is
// acknowledged and ignored.
const (
	VapiToolCalls       = "tool-calls"
	VapiEndOfCallReport = "end-of-call-report"
)

// VapiEnvelope is a Vapi server message.
type VapiEnvelope struct {
	Message VapiMessage `json:"message"`
}

// VapiMessage holds the fields of the server messages maestro reads.
type VapiMessage struct {
	Type         string         `json:"type"`
	Timestamp    float64        `json:"timestamp"`
	Call         vapiCall       `json:"call"`
	Customer     *vapiNumber    `json:"customer"`
	PhoneNumber  *vapiNumber    `json:"phoneNumber"`
	ToolCallList []vapiToolCall `json:"toolCallList"`
	// ToolWithToolCallList pairs each call with its tool's configuration;
	// ToolCalls is the model's own list. Vapi sends all three; maestro
	// reads the first that is there.
	// The tool's own name and function hold its schema, never arguments.
	ToolWithToolCallList []struct {
		Name     string        `json:"name"`
		Function *vapiFunction `json:"function"`
		ToolCall vapiToolCall  `json:"toolCall"`
	} `json:"toolWithToolCallList"`
	ModelToolCalls []vapiToolCall `json:"toolCalls"`
	EndedReason    string         `json:"endedReason"`
	Artifact       struct {
		Transcript string        `json:"transcript"`
		Messages   []vapiMessage `json:"messages"`
	} `json:"artifact"`
}

type vapiCall struct {
	ID                  string      `json:"id"`
	Customer            *vapiNumber `json:"customer"`
	PhoneNumber         *vapiNumber `json:"phoneNumber"`
	PhoneCallProviderID string      `json:"phoneCallProviderId"`
	CreatedAt           string      `json:"createdAt"`
	Monitor             struct {
		ControlURL string `json:"controlUrl"`
	} `json:"monitor"`
}

// ControlURL is where the live call takes control messages, such as an
// add-message that tells the model a pending call's outcome; empty when
// the call has none.
func (m VapiMessage) ControlURL() string {
	return m.Call.Monitor.ControlURL
}

// VapiAddMessage is the control message that hands the model a system
// message in the live call and lets it speak at once.
type VapiAddMessage struct {
	Type    string `json:"type"`
	Message struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"message"`
	TriggerResponseEnabled bool `json:"triggerResponseEnabled"`
}

// NewVapiAddMessage is an add-message carrying content as a system message.
func NewVapiAddMessage(content string) VapiAddMessage {
	m := VapiAddMessage{Type: "add-message", TriggerResponseEnabled: true}
	m.Message.Role, m.Message.Content = "system", content
	return m
}

type vapiNumber struct {
	Number string `json:"number"`
}

func (n *vapiNumber) number() string {
	if n == nil {
		return ""
	}
	return n.Number
}

// vapiToolCall is a call as Vapi lists it: flat ({id, name, arguments or
// parameters}) or OpenAI-style ({id, type, function: {name, arguments}}),
// the arguments an object or a JSON string holding one.
type vapiToolCall struct {
	ID         string          `json:"id"`
	Name       string          `json:"name"`
	Parameters json.RawMessage `json:"parameters"`
	Arguments  json.RawMessage `json:"arguments"`
	Function   *vapiFunction   `json:"function"`
}

type vapiFunction struct {
	Name       string          `json:"name"`
	Arguments  json.RawMessage `json:"arguments"`
	Parameters json.RawMessage `json:"parameters"`
}

type vapiMessage struct {
	Role    string  `json:"role"`
	Message string  `json:"message"`
	Time    float64 `json:"time"`
}

// ParseVapi reads a Vapi server message.
func ParseVapi(body []byte) (VapiMessage, error) {
	var env VapiEnvelope
	if err := json.Unmarshal(body, &env); err != nil {
		return VapiMessage{}, fmt.Errorf("error reading Vapi message: %w", err)
	}
	if env.Message.Type == "" {
		return VapiMessage{}, fmt.Errorf("error reading Vapi message: message.type is missing")
	}
	return env.Message, nil
}

// Call is the call the message belongs to, with what Vapi signs about it.
func (m VapiMessage) CallInfo() Call {
	caller := m.Call.Customer.number()
	if caller == "" {
		caller = m.Customer.number()
	}
	called := m.PhoneNumber.number()
	if called == "" {
		called = m.Call.PhoneNumber.number()
	}
	return Call{ID: m.Call.ID, Signed: signed(
		tools.SignedCallerNumber, caller,
		tools.SignedCalledNumber, called,
		tools.SignedCallSID, m.Call.PhoneCallProviderID,
	)}
}

// ToolCalls lists the message's tool calls in order, from toolCallList,
// else toolWithToolCallList, else toolCalls. A call whose arguments cannot
// be read comes back with nil Args and the reason.
func (m VapiMessage) ToolCalls() ([]ToolCall, []error) {
	list := m.ToolCallList
	if len(list) == 0 {
		for _, tw := range m.ToolWithToolCallList {
			tc := tw.ToolCall
			if tc.Name == "" && (tc.Function == nil || tc.Function.Name == "") {
				tc.Name = tw.Name
				if tw.Function != nil && tw.Function.Name != "" {
					tc.Name = tw.Function.Name
				}
			}
			list = append(list, tc)
		}
	}
	if len(list) == 0 {
		list = m.ModelToolCalls
	}
	calls := make([]ToolCall, len(list))
	errs := make([]error, len(list))
	for i, tc := range list {
		name, raw := tc.Name, tc.Parameters
		if len(raw) == 0 {
			raw = tc.Arguments
		}
		if tc.Function != nil {
			if name == "" {
				name = tc.Function.Name
			}
			if len(raw) == 0 {
				raw = tc.Function.Arguments
			}
			if len(raw) == 0 {
				raw = tc.Function.Parameters
			}
		}
		args, err := argsObject(raw)
		calls[i], errs[i] = ToolCall{ID: tc.ID, Name: name, Args: args}, err
	}
	return calls, errs
}

// Transcript converts the call's messages to maestro's transcript: the
// bot's turns are the agent's, the user's the caller's; system and tool
// messages are left out.
func (m VapiMessage) Transcript() mt.Transcript {
	t := mt.Transcript{Turns: []mt.Turn{}}
	for _, msg := range m.Artifact.Messages {
		speaker := speakerOf(msg.Role)
		if speaker == "" || strings.TrimSpace(msg.Message) == "" {
			continue
		}
		t.Turns = append(t.Turns, mt.Turn{Speaker: speaker, Text: msg.Message, At: millis(msg.Time)})
	}
	if len(t.Turns) == 0 && m.Artifact.Transcript != "" {
		// Only the flat transcript: "AI: ...\nUser: ..." lines.
		for _, line := range strings.Split(m.Artifact.Transcript, "\n") {
			who, text, ok := strings.Cut(line, ":")
			if sp := speakerOf(who); ok && sp != "" && strings.TrimSpace(text) != "" {
				t.Turns = append(t.Turns, mt.Turn{Speaker: sp, Text: strings.TrimSpace(text)})
			}
		}
	}
	return t
}

// speakerOf maps the platforms' role names to maestro's speakers.
func speakerOf(role string) string {
	switch strings.ToLower(strings.TrimSpace(role)) {
	case "user", "customer", "caller", "human":
		return "caller"
	case "agent", "assistant", "bot", "ai":
		return "agent"
	}
	return ""
}

func millis(ms float64) time.Time {
	if ms <= 0 {
		return time.Time{}
	}
	return time.UnixMilli(int64(ms)).UTC()
}

// VapiResult is one entry of the answer to a tool-calls message: Result
// or Error, never both.
type VapiResult struct {
	ToolCallID string `json:"toolCallId"`
	Result     string `json:"result,omitempty"`
	Error      string `json:"error,omitempty"`
}

// VapiResults is the answer to a tool-calls message, in call order.
type VapiResults struct {
	Results []VapiResult `json:"results"`
}
