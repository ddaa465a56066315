package tools

import "strings"

// WhenOpenings are the openings an agent-facing tool's description may
// start with. A model picks tools by their descriptions; one that says what
// the tool does but not when to call it leaves the choice to guesswork, so
// the description must open by naming the condition.
var WhenOpenings = []string{"Call when ", "Call only when ", "Call if ", "Call only if ", "Use when ", "Use only when "}

// PrescribesWhen reports whether a description opens by saying when to call
// the tool: one of WhenOpenings followed by the condition.
func PrescribesWhen(description string) bool {
	d := strings.TrimSpace(description)
	for _, o := range WhenOpenings {
		if strings.HasPrefix(d, o) && strings.TrimSpace(d[len(o):]) != "" {
			return true
		}
	}
	return false
}

// whenOpeningList is WhenOpenings quoted for a message.
func whenOpeningList() string {
	quoted := make([]string, len(WhenOpenings))
	for i, o := range WhenOpenings {
		quoted[i] = `"` + strings.TrimSpace(o) + `"`
	}
	return strings.Join(quoted, ", ")
}
