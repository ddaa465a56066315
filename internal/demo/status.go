package demo

import "fmt"

// statusPhrases say a provider's status as English after the thing it
// describes: "refund re_1 has succeeded", never "refund re_1 is succeeded".
var statusPhrases = map[string]string{
	// back-office resources
	"open":      "is open",
	"pending":   "is pending",
	"succeeded": "has succeeded",
	"failed":    "has failed",
	"cancelled": "is cancelled",
	"canceled":  "is cancelled",
	"active":    "is active",
	// Twilio message statuses
	"accepted":    "was accepted by Twilio",
	"scheduled":   "is scheduled",
	"queued":      "is queued to send",
	"sending":     "is being sent",
	"sent":        "has been sent",
	"delivered":   "has been delivered",
	"undelivered": "could not be delivered",
	"read":        "has been read",
}

// statusPhrase is the phrase for a status; one it does not know is quoted
// as a label rather than forced into a sentence.
func statusPhrase(status string) string {
	if p, ok := statusPhrases[status]; ok {
		return p
	}
	return fmt.Sprintf("has status %q", status)
}

// times counts occurrences in English: "once", "twice", "3 times".
func times(n int) string {
	switch n {
	case 1:
		return "once"
	case 2:
		return "twice"
	}
	return fmt.Sprintf("%d times", n)
}
