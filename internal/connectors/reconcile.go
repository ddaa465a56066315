package connectors

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/maestro-run/maestro/maestrotype"
)

// ErrNotSearchable means the provider keeps no record of sent effects that
// maestro can read back (SES, say), so a lost answer can only be settled by
// a human.
var ErrNotSearchable = errors.New("the provider's records cannot be searched for this call")

// Lookup is what a provider's own records say about a call whose answer was
// lost.
type Lookup struct {
	// Matches are the provider's records of effects matching the call, each
	// as the Result the call itself would have returned, receipt included,
	// with the evidence it was matched on.
	Matches []Match
	// Complete reports whether the search covered every record that could
	// match. Only a complete search that matched nothing is evidence that
	// the call had no effect; an incomplete one proves nothing either way.
	Complete bool
}

// Match is one provider record taken for the call's effect.
type Match struct {
	Result
	// Evidence says why the record was taken for this call's: which fields
	// matched, how the body compared, and what could not be compared. It
	// goes into the reconciliation log with the adoption.
	Evidence string
}

// Reconciler is a connector whose provider can be searched for the effect of
// a call, so an unknown outcome can be settled from the provider's records
// instead of by resending.
type Reconciler interface {
	// Lookup searches the provider for effects of call made at or after
	// since. since should lie before the earliest moment the call could
	// have been sent, with room for the provider's clock to differ from ours.
	Lookup(ctx context.Context, call Call, since time.Time) (Lookup, error)
}

// Lookup runs the lookup of the connector registered for call.Kind. A
// connector that cannot search its provider answers ErrNotSearchable.
func (s Set) Lookup(ctx context.Context, call Call, since time.Time) (Lookup, error) {
	c, ok := s[call.Kind]
	if !ok {
		return Lookup{}, &Error{Class: ClassInvalid, Message: fmt.Sprintf("no connector is configured for kind %q", call.Kind)}
	}
	r, ok := c.(Reconciler)
	if !ok {
		return Lookup{}, fmt.Errorf("%w (connector %s)", ErrNotSearchable, call.Kind)
	}
	return r.Lookup(ctx, call, since)
}

// digest identifies a message body without carrying its text, so what a
// lookup compares and reports never holds the personal data a body may.
func digest(body string) [sha256.Size]byte {
	return sha256.Sum256([]byte(body))
}

// twilioLookAlikes are the characters Twilio's Smart Encoding replaces, and
// what it stores instead.
var twilioLookAlikes = strings.NewReplacer(
	"\u2018", "'", "\u2019", "'", "\u201A", "'", "\u2032", "'",
	"\u201C", `"`, "\u201D", `"`, "\u201E", `"`, "\u2033", `"`,
	"\u2013", "-", "\u2014", "-", "\u2212", "-",
	"\u2026", "...", "\u00A0", " ", "\u2009", " ",
)

// normalizeBody reduces a body to what survives Twilio's rewriting: look-
// alike characters replaced as Smart Encoding does, runs of whitespace
// collapsed.
func normalizeBody(body string) string {
	return strings.Join(strings.Fields(twilioLookAlikes.Replace(body)), " ")
}

// twilioBodyMatch compares the body maestro sent with the body Twilio
// stored, which Twilio may have changed: a trial account prefixes it, Smart
// Encoding replaces curly quotes and long dashes. It reports whether the
// stored body supports the match and how, without quoting either body.
func twilioBodyMatch(sent, stored string) (string, bool) {
	if digest(sent) == digest(stored) {
		return "body identical (same SHA-256 digest)", true
	}
	want, got := normalizeBody(sent), normalizeBody(stored)
	if want == "" {
		return "", false
	}
	if got == want {
		return "body identical once look-alike characters and spacing are normalised, as Twilio's Smart Encoding changes them", true
	}
	if strings.Contains(got, want) {
		return fmt.Sprintf("stored body contains ours once normalised, with %d characters Twilio added (a trial-account prefix, say)",
			len([]rune(got))-len([]rune(want))), true
	}
	return "", false
}

// Searchable reports whether the connector for kind can search its
// provider's records.
func (s Set) Searchable(kind maestrotype.ConnectorKind) bool {
	_, ok := s[kind].(Reconciler)
	return ok
}
