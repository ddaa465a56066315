package activities

import (
	"strings"
	"unicode"
)

// An approver notification carries text an agent chose: the arguments of
// the call waiting for a decision. Each channel gets that text in a form
// its reader's client shows as plain words, so nothing an agent writes
// can add a link, a mention or a line of its own beside maestro's one
// "Decide" link. The console shows the arguments exactly; a notification
// only says a request is waiting.

// smsLimit bounds a text message, in characters: two segments of plain
// text, and the "Decide" link is never what gets cut.
const smsLimit = 320

// cleanText keeps text on one line: control characters (CR and LF among
// them, which could start a header or a line of their own) become spaces,
// and format characters (a right-to-left override that reverses what
// follows, zero-width characters that split a word a reader would check)
// are dropped.
func cleanText(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Cf, r):
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// defangLinks stops a phone, mail or chat client from finding a link in
// agent text: every "://" becomes "[:]//", and every dot between a letter
// or digit and a letter becomes "[.]", so neither
// https://evil.example nor a bare evil.example is linked. Amounts
// (12.50) keep their dots.
func defangLinks(s string) string {
	rs := []rune(s)
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == ':' && i+2 < len(rs) && rs[i+1] == '/' && rs[i+2] == '/':
			b.WriteString("[:]")
		case r == '.' && i > 0 && i+1 < len(rs) &&
			(unicode.IsLetter(rs[i-1]) || unicode.IsDigit(rs[i-1])) && unicode.IsLetter(rs[i+1]):
			b.WriteString("[.]")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// agentText is agent-chosen text as any notification shows it: on one
// line, with no link in it.
func agentText(s string) string { return defangLinks(cleanText(s)) }

// slackEscaper escapes the three characters Slack's mrkdwn gives meaning
// to, as Slack documents: with them escaped, "<https://x|label>" is no
// link and "<!channel>" pings nobody.
var slackEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

func slackEscape(s string) string { return slackEscaper.Replace(s) }

// cutRunes shortens s to at most n runes, marking the cut.
func cutRunes(s string, n int) string {
	r := []rune(s)
	switch {
	case len(r) <= n:
		return s
	case n <= 1:
		return "…"
	}
	return string(r[:n-1]) + "…"
}
