package twilio

import "strings"

// TrialPrefix is what Twilio puts in front of every body a trial account
// sends.
const TrialPrefix = "Sent from your Twilio trial account - "

// smartEncoding maps the Unicode look-alikes Twilio's Smart Encoding
// replaces to what it stores instead.
var smartEncoding = strings.NewReplacer(
	"\u2018", "'", "\u2019", "'", "\u201A", "'", "\u2032", "'",
	"\u201C", `"`, "\u201D", `"`, "\u201E", `"`, "\u2033", `"`,
	"\u2013", "-", "\u2014", "-", "\u2212", "-",
	"\u2026", "...", "\u00A0", " ", "\u2009", " ",
)

// bodyRewriter is how the stand-in changes a body before storing it, the
// ways a real account can: a reader of the message sees the stored body,
// not the one that was sent.
func bodyRewriter(trial, smart bool) func(string) string {
	return func(body string) string {
		if smart {
			body = smartEncoding.Replace(body)
		}
		if trial {
			body = TrialPrefix + body
		}
		return body
	}
}
