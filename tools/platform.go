package tools

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// PlatformKind names a voice platform that calls an agent's tools by
// webhook.
type PlatformKind string

const (
	PlatformElevenLabs PlatformKind = "elevenlabs"
	PlatformVapi       PlatformKind = "vapi"
	PlatformRetell     PlatformKind = "retell"
)

// PlatformKinds lists the platforms maestro has adapters for.
var PlatformKinds = []PlatformKind{PlatformElevenLabs, PlatformVapi, PlatformRetell}

// Signed fields: what a platform vouches for about a call, by its signature
// (Vapi, Retell) or by filling a system variable the model cannot write
// (ElevenLabs). Only these may become platform-signed session facts.
const (
	SignedCallerNumber = "caller_number"
	SignedCalledNumber = "called_number"
	SignedCallSID      = "call_sid"
)

// SignedFields lists every signed field a platform may map to a fact.
var SignedFields = []string{SignedCallerNumber, SignedCalledNumber, SignedCallSID}

// DefaultAnswerBudget is how long an adapter waits for a call's outcome
// before answering with its pending wording: the 20 s ElevenLabs
// (response_timeout_secs) and Vapi (server.timeoutSeconds) wait by
// default, and well below Retell's 120 s function timeout.
const DefaultAnswerBudget = 20 * time.Second

// maxAnswerBudget bounds the budget by the longest tool timeout any of the
// platforms lets a builder set (ElevenLabs: 120 s).
const maxAnswerBudget = 120 * time.Second

// ElevenLabsMaxResponseTimeout is the longest response_timeout_secs an
// ElevenLabs webhook tool takes (5 to 120 s).
const ElevenLabsMaxResponseTimeout = 120 * time.Second

// TimeoutMargin is how much longer than maestro's budget the exported
// platform timeouts are, so maestro always answers first.
const TimeoutMargin = 5 * time.Second

// maxElevenLabsBudget is the longest budget whose exported timeout
// ElevenLabs still takes.
const maxElevenLabsBudget = ElevenLabsMaxResponseTimeout - TimeoutMargin

// DefaultAsyncBudget is how long an ElevenLabs async tool call waits for its
// outcome: as long as ElevenLabs lets the tool take, since the agent keeps
// talking meanwhile.
const DefaultAsyncBudget = maxElevenLabsBudget

// Platform is how a voice platform reaches one agent's tools.
type Platform struct {
	Kind PlatformKind
	// SecretEnv names the environment variable holding the secret the
	// platform signs (or authenticates) its requests with.
	SecretEnv string
	// Tools are the tools the platform may call, sorted: a subset of the
	// agent's allowlist. Optional in the file: default the allowlist.
	Tools []string
	// AnswerBudget is how long a tool call waits for its outcome before
	// the adapter answers with the pending wording; the platform's own
	// timeout must be longer. With AsyncTools it is AsyncBudget.
	AnswerBudget time.Duration
	// AsyncTools exports ElevenLabs tools with execution_mode async: the
	// agent goes on talking while a call runs and takes its answer when it
	// comes, so the adapter waits the longer AsyncBudget for the final
	// outcome instead of answering pending early (ElevenLabs only).
	// Optional: default false.
	AsyncTools bool
	// Facts maps a signed field (caller_number, called_number, call_sid) to
	// the session fact it becomes, with provenance platform-signed:<kind>.
	// Optional in the file: default each signed field to the declared
	// session fact of the same name, if any.
	Facts map[string]string
	// PushResults has maestro push a call's final outcome into the live
	// call when its answer within the budget was pending (Vapi only: an
	// add-message to the call's control URL), through the agent callback
	// relay. Optional: default false.
	PushResults bool
	// ControlHosts are the hosts a live call's control URL may name for a
	// pushed result to be posted to it: exact names or "*.domain"
	// (push_results only). Optional in the file: default
	// DefaultControlHosts, Vapi's own domain.
	ControlHosts []string
}

// Exposes reports whether the platform may call the named tool.
func (p *Platform) Exposes(tool string) bool {
	_, ok := slices.BinarySearch(p.Tools, tool)
	return ok
}

type platformFile struct {
	Kind         string            `yaml:"kind"`
	SecretEnv    string            `yaml:"secret_env"`
	Tools        []string          `yaml:"tools"`
	AnswerBudget string            `yaml:"answer_budget"`
	Facts        map[string]string `yaml:"facts"`
	PushResults  bool              `yaml:"push_results"`
	AsyncTools   bool              `yaml:"async_tools"`
	AsyncBudget  string            `yaml:"async_budget"`
	ControlHosts []string          `yaml:"control_hosts"`
}

// buildPlatform reads an agent's platform block; facts are checked against
// the declared session facts later, by the validator.
func buildPlatform(p *problems, row string, af agentFile) *Platform {
	pf := af.Platform
	if pf == nil {
		return nil
	}
	pl := &Platform{Kind: PlatformKind(pf.Kind), SecretEnv: pf.SecretEnv, AnswerBudget: DefaultAnswerBudget, Facts: pf.Facts}
	if !slices.Contains(PlatformKinds, pl.Kind) {
		p.add(row, "platform.kind", "unknown platform %q (want elevenlabs, vapi or retell)", pf.Kind)
	}
	switch {
	case pf.SecretEnv == "":
		p.add(row, "platform.secret_env", "required: name the environment variable holding the platform's signing secret (never the secret itself)")
	case !envName.MatchString(pf.SecretEnv):
		p.add(row, "platform.secret_env", "want an environment variable name, got %q", pf.SecretEnv)
	}
	if pf.Tools == nil {
		pl.Tools = slices.Compact(slices.Sorted(slices.Values(af.Allow)))
	} else {
		pl.Tools = slices.Compact(slices.Sorted(slices.Values(pf.Tools)))
		if len(pl.Tools) == 0 {
			p.add(row, "platform.tools", "is empty: leave it out to expose the agent's allowlist")
		}
		for _, name := range pl.Tools {
			if !slices.Contains(af.Allow, name) {
				p.add(row, "platform.tools", "%q is not on the agent's allowlist", name)
			}
		}
	}
	longest := maxAnswerBudget
	if pl.Kind == PlatformElevenLabs {
		longest = maxElevenLabsBudget
	}
	if pf.AnswerBudget != "" {
		d, err := time.ParseDuration(pf.AnswerBudget)
		if err != nil || d < time.Second || d > longest {
			p.add(row, "platform.answer_budget", "%q is not a duration from 1s to %s (e.g. 15s)", pf.AnswerBudget, longest)
		} else {
			pl.AnswerBudget = d
		}
	}
	asyncTools(p, row, pf, pl)
	if pl.PushResults = pf.PushResults; pl.PushResults {
		switch {
		case pl.Kind != PlatformVapi:
			p.add(row, "platform.push_results", "is offered only for vapi, not %s", pf.Kind)
		case af.CallbackURL != "":
			// Both would owe the same invocation's callback.
			p.add(row, "platform.push_results", "cannot be combined with callback_url: a pending call's result goes to one place")
		}
	}
	buildControlHosts(p, row, pf, pl)
	for field := range pf.Facts {
		if !slices.Contains(SignedFields, field) {
			p.add(row, "platform.facts."+field, "not a signed field (want %s)", strings.Join(SignedFields, ", "))
		}
	}
	return pl
}

// asyncTools reads the ElevenLabs async setting: its budget replaces the
// answer budget, so the two are never both set.
func asyncTools(p *problems, row string, pf *platformFile, pl *Platform) {
	if !pf.AsyncTools {
		if pf.AsyncBudget != "" {
			p.add(row, "platform.async_budget", "applies only with async_tools: true")
		}
		return
	}
	pl.AsyncTools = true
	if pl.Kind != PlatformElevenLabs {
		p.add(row, "platform.async_tools", "is offered only for elevenlabs, not %s (vapi: push_results)", pf.Kind)
		return
	}
	if pf.AnswerBudget != "" {
		p.add(row, "platform.answer_budget", "does not apply with async_tools: set async_budget instead")
	}
	pl.AnswerBudget = DefaultAsyncBudget
	if pf.AsyncBudget != "" {
		d, err := time.ParseDuration(pf.AsyncBudget)
		if err != nil || d < time.Second || d > maxElevenLabsBudget {
			p.add(row, "platform.async_budget", "%q is not a duration from 1s to %s: ElevenLabs waits at most %s for a tool, and maestro answers %s before it (e.g. 90s)",
				pf.AsyncBudget, maxElevenLabsBudget, ElevenLabsMaxResponseTimeout, TimeoutMargin)
		} else {
			pl.AnswerBudget = d
		}
	}
}

// platforms checks each platform's fact mapping against the declared
// session facts, and fills in the default mapping.
func (v *validator) platforms() {
	declared := make(map[string]bool, len(v.c.sessionFacts))
	for _, f := range v.c.sessionFacts {
		declared[f.Name] = true
	}
	for i, a := range v.c.agents {
		pl := a.Platform
		if pl == nil {
			continue
		}
		row := rowName("agents", i, a.ID)
		if pl.Facts == nil {
			pl.Facts = map[string]string{}
			for _, field := range SignedFields {
				if declared[field] {
					pl.Facts[field] = field
				}
			}
			continue
		}
		for _, field := range slices.Sorted(maps.Keys(pl.Facts)) {
			if fact := pl.Facts[field]; !declared[fact] {
				v.p.add(row, "platform.facts."+field, "%q is not a declared session fact (session_facts: %s)", fact, v.describeSessionFacts())
			}
		}
	}
}

// String describes the platform for logs and errors.
func (p *Platform) String() string {
	return fmt.Sprintf("%s (secret in $%s)", p.Kind, p.SecretEnv)
}
