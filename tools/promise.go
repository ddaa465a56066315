package tools

import (
	"regexp"
	"strings"
)

// PromisesDelivery reports whether text tells a human that something was
// delivered, sent, transferred or otherwise done: "I've sent the text",
// "your refund has been issued", "you're all set". Only a receipt can back
// such a sentence.
//
// The check is lexical and errs towards flagging. A completion word does not
// count when something earlier in its clause negates it or moves it into the
// future or a condition ("I couldn't send it", "it will be sent", "once it
// is approved"). Template actions are ignored, since they render values,
// not claims.
func PromisesDelivery(text string) bool {
	for _, clause := range clauses(text) {
		words := wordRE.FindAllString(clause, -1)
		for i := range words {
			if completes(words, i) && !hedged(words[:i]) {
				return true
			}
		}
	}
	return false
}

// ClaimsDelivery reports whether text tells a human that a message reached
// the person it was for: "it's been delivered", "they've received it", "it
// arrived". A send's receipt proves only that the provider accepted the
// message; only a final delivered status, reported later, could back such
// a sentence, so no wording spoken at the receipt may say it. Hedges and
// negations count as in PromisesDelivery ("once it's delivered").
func ClaimsDelivery(text string) bool {
	for _, clause := range clauses(text) {
		words := wordRE.FindAllString(clause, -1)
		for i := range words {
			if deliveryWords[words[i]] && !hedged(words[:i]) {
				return true
			}
		}
	}
	return false
}

// deliveryWords claim that a message reached its recipient, not merely
// that it was sent.
var deliveryWords = set("delivered", "delivers", "arrived", "arrives", "received", "receives", "reached", "landed")

// completionWords claim that an effect happened (past tense and
// participles), or describe one happening now.
var completionWords = set(
	"done", "sent", "texted", "emailed", "e-mailed", "mailed", "messaged",
	"delivered", "notified", "paged", "alerted", "informed", "told",
	"contacted", "called", "reached", "transferred", "forwarded",
	"escalated", "connected", "dispatched", "submitted", "filed",
	"created", "opened", "issued", "refunded", "credited", "charged",
	"paid", "cancelled", "canceled", "deleted", "removed", "closed",
	"scheduled", "booked", "placed", "processed", "completed", "finished",
	"handled", "resolved", "fixed", "arranged", "sorted",
	"sends", "delivers", "notifies", "forwards", "escalates", "dispatches",
)

// idioms claim completion without a completion word.
var idioms = [][]string{
	{"all", "set"},
	{"taken", "care", "of"},
	{"on", "its", "way"},
	{"on", "the", "way"},
	{"went", "out"},
	{"gone", "out"},
	{"went", "through"},
	{"gone", "through"},
	{"good", "to", "go"},
}

// perfect precedes "been" in "has been …", "it's been …".
var perfect = set("has", "have", "had", "it's", "that's", "they've", "we've", "i've", "you've")

// hedges move a claim into the future or a condition.
var hedges = set(
	"will", "shall", "would", "should", "could", "can", "may", "might",
	"must", "going", "gonna", "be", "once", "when", "whenever", "if",
	"unless", "until", "after", "before", "soon", "later",
)

var negations = set("not", "no", "never", "nothing", "cannot", "unable", "without", "neither", "nor")

var (
	actionRE = regexp.MustCompile(`(?s)\{\{.*?\}\}`)
	clauseRE = regexp.MustCompile(`[.;:!?,()\[\]\n—–]+|\s-\s|\b(?:and|but|so|then|or)\b`)
	wordRE   = regexp.MustCompile(`[a-z0-9]+(?:['-][a-z0-9]+)*`)
)

func clauses(text string) []string {
	text = strings.ToLower(strings.ReplaceAll(text, "’", "'"))
	text = actionRE.ReplaceAllString(text, " ")
	return clauseRE.Split(text, -1)
}

// completes reports whether a claim of completion starts at words[i].
func completes(words []string, i int) bool {
	w := words[i]
	if completionWords[w] {
		return true
	}
	if w == "been" && i > 0 && perfect[words[i-1]] {
		return true
	}
	for _, idiom := range idioms {
		if i+len(idiom) <= len(words) && equal(words[i:i+len(idiom)], idiom) {
			return true
		}
	}
	return false
}

// hedged reports whether the words before a claim in its clause negate it
// or make it future or conditional.
func hedged(before []string) bool {
	for _, w := range before {
		if hedges[w] || negations[w] || strings.HasSuffix(w, "n't") || strings.HasSuffix(w, "'ll") {
			return true
		}
	}
	return false
}

func equal(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}
