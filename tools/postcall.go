package tools

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/maestro-run/maestro/maestrotype"
)

// PostCall is the catalog's post-call section: how the post-call workflow
// turns what happened on a call into real deliveries, each performed by a
// real-sync tool that returns a receipt.
//
// A PostCall handed out by a Catalog is shared and must not be modified.
type PostCall struct {
	// Agent is the catalog agent the post-call workflow dispatches as. Its
	// allowlist bounds what post-call work may do, and it has no API key,
	// so no caller from outside can act as it.
	Agent string
	// Deliveries say how each record-deferred tool's recorded intent is
	// delivered. Every record-deferred tool has exactly one, which is what
	// makes "recorded during the call, delivered after it" structural.
	Deliveries []Delivery
	// Rules find work in the transcript that nobody recorded as an intent.
	Rules []Rule
	// Urgent says which work cannot wait a day: its deadlines shrink to
	// Urgent.Deadline, so it moves to its fallbacks quickly. Nil: none.
	Urgent *Urgency
}

// DefaultDeliveryDeadline is how long post-call work keeps trying one
// channel when the catalog names no deadline: long enough to outlast a
// provider's outage, short enough that a human hears of it the same day.
const DefaultDeliveryDeadline = 24 * time.Hour

// Urgency is the catalog's word on what work is urgent.
type Urgency struct {
	// Any are phrases that make work urgent wherever they appear in what
	// the caller said: a recorded intent's arguments or a matching turn.
	Any []string
	// Deadline caps every channel's deadline for urgent work.
	Deadline time.Duration

	phrases *regexp.Regexp
}

// Matches reports whether text holds one of the urgent phrases. It is
// safe to call on a nil Urgency.
func (u *Urgency) Matches(text string) bool {
	if u == nil || len(u.Any) == 0 {
		return false
	}
	re := u.phrases
	if re == nil {
		re = phrasesRE(u.Any)
	}
	return re.MatchString(normalizeApostrophes(text))
}

// Delivery returns the delivery of intents recorded by the named
// record-deferred tool. It is safe to call on a nil PostCall.
func (pc *PostCall) Delivery(from string) (Delivery, bool) {
	if pc == nil {
		return Delivery{}, false
	}
	for _, d := range pc.Deliveries {
		if d.From == from {
			return d, true
		}
	}
	return Delivery{}, false
}

// A Delivery maps the intents one record-deferred tool records onto a call
// of the real-sync tool that delivers them.
type Delivery struct {
	// From is the record-deferred tool whose intents this delivers.
	From string
	// Tool is the real-sync tool that delivers them.
	Tool string
	// Args render the delivering call's arguments from .Args (the recorded
	// intent's arguments) and .Session (the session's facts); see
	// RenderArgs for how absent values and empty results are treated.
	Args map[string]*Template
	// Deadline is how long delivery keeps trying Tool through provider
	// outages before it moves on to the fallbacks.
	Deadline time.Duration
	// Fallbacks are tried in order when the channel before fails
	// definitively or misses its deadline. Their arguments render like
	// Args, from the same recorded intent.
	Fallbacks []Fallback
}

// A Fallback is another channel for a recorded intent.
type Fallback struct {
	Tool     string
	Args     map[string]*Template
	Deadline time.Duration
}

// Render renders a fallback's arguments from a recorded intent.
func (f Fallback) Render(from string, recorded json.RawMessage, session map[string]any) (json.RawMessage, error) {
	return Delivery{From: from, Tool: f.Tool, Args: f.Args}.Render(recorded, session)
}

// Render renders the delivering call's arguments from a recorded intent.
func (d Delivery) Render(recorded json.RawMessage, session map[string]any) (json.RawMessage, error) {
	args, err := DecodeArgs(recorded)
	if err != nil {
		return nil, fmt.Errorf("error reading the intent recorded by %s: %w", d.From, err)
	}
	return RenderArgs(d.Args, TemplateData{Args: args, Session: session})
}

// A Rule turns a transcript turn into work: a turn by Speaker that
// contains any of the phrases yields one call of Tool.
type Rule struct {
	// Name identifies the rule in work item keys, so renaming a rule
	// changes the keys of the work it finds.
	Name string
	// Speaker is whose turns the rule reads, compared case-insensitively.
	Speaker string
	// Any are the phrases that trigger the rule. They match whole words,
	// ignoring case and how much whitespace separates their words.
	Any []string
	// Tool is the real-sync tool called for each matching turn.
	Tool string
	// Args render the call's arguments from .Args.text and .Args.speaker
	// (the matching turn) and .Session (the session's facts).
	Args map[string]*Template
	// Urgent makes all the rule's work urgent, whatever the turn says.
	Urgent bool

	// phrases is Any compiled at load; a Rule built in code compiles on
	// use.
	phrases *regexp.Regexp
}

// The arguments a rule's templates read from the matching turn.
const (
	ruleArgText    = "text"
	ruleArgSpeaker = "speaker"
)

var ruleArgs = []string{ruleArgSpeaker, ruleArgText}

// Matches reports whether the turn triggers the rule.
func (r Rule) Matches(turn maestrotype.Turn) bool {
	if !strings.EqualFold(turn.Speaker, r.Speaker) {
		return false
	}
	re := r.phrases
	if re == nil {
		re = phrasesRE(r.Any)
	}
	return re.MatchString(normalizeApostrophes(turn.Text))
}

// Render renders the call's arguments for a turn the rule matched.
func (r Rule) Render(turn maestrotype.Turn, session map[string]any) (json.RawMessage, error) {
	args := map[string]any{ruleArgText: turn.Text, ruleArgSpeaker: turn.Speaker}
	return RenderArgs(r.Args, TemplateData{Args: args, Session: session})
}

// notWord is what must sit on either side of a phrase, so "leak" does
// not match "leaky" or "bleak". Unlike \b it knows letters beyond ASCII.
const notWord = `[^\p{L}\p{N}_]`

// phrasesRE compiles phrases into one case-insensitive, whole-word
// pattern. Each phrase is literal text; only its word separators are
// loosened, because transcription spacing is not the caller's choice.
func phrasesRE(phrases []string) *regexp.Regexp {
	alts := make([]string, 0, len(phrases))
	for _, p := range phrases {
		words := strings.Fields(normalizeApostrophes(p))
		if len(words) == 0 {
			continue
		}
		for i, w := range words {
			words[i] = regexp.QuoteMeta(w)
		}
		alts = append(alts, strings.Join(words, `\s+`))
	}
	if len(alts) == 0 {
		// Matches nothing: a rule without phrases finds no work.
		return regexp.MustCompile(`[^\s\S]`)
	}
	return regexp.MustCompile(`(?i)(?:^|` + notWord + `)(?:` + strings.Join(alts, "|") + `)(?:$|` + notWord + `)`)
}

// normalizeApostrophes lets "can't" in a rule match "can’t" in a
// transcript.
func normalizeApostrophes(s string) string {
	return strings.ReplaceAll(s, "’", "'")
}
