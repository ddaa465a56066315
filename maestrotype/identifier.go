package maestrotype

import (
	"fmt"
	"strings"
)

// MaxIdentifierLen is the longest session ID, operation key, tool-call ID
// or platform call ID maestro admits. Workflow IDs are built from these
// with a short prefix, and Temporal refuses workflow IDs over 1000 bytes;
// 200 keeps every derived ID far inside that and readable in a console.
const MaxIdentifierLen = 200

// IdentifierRule says in words what CheckIdentifier enforces, for errors,
// help text and documentation.
const IdentifierRule = "1 to 200 printable ASCII characters (letters, digits and punctuation), with no spaces, no '/' or '\\', no control characters, and not '.' or '..'"

// CheckIdentifier reports whether value may name a session, an operation
// or a call. Everything an agent chooses ends up in workflow IDs, ledger
// keys and console URLs, so the rule refuses what could change a path
// ('/', '\\', '.', '..'), what a terminal or log would render misleadingly
// (control characters, spaces, non-ASCII) and what Temporal would refuse
// only after the ledger had recorded the call (length). The error names
// field and the rule.
func CheckIdentifier(field, value string) error {
	if value == "" {
		return fmt.Errorf("%s is required: %s", field, IdentifierRule)
	}
	if len(value) > MaxIdentifierLen {
		return fmt.Errorf("%s is %d characters long: it must be %s", field, len(value), IdentifierRule)
	}
	for i := 0; i < len(value); i++ {
		c := value[i]
		if c <= ' ' || c >= 0x7f || c == '/' || c == '\\' {
			return fmt.Errorf("%s has %s at position %d: it must be %s", field, describeByte(c), i+1, IdentifierRule)
		}
	}
	if strings.Trim(value, ".") == "" && len(value) <= 2 {
		return fmt.Errorf("%s may not be %q: it must be %s", field, value, IdentifierRule)
	}
	return nil
}

func describeByte(c byte) string {
	switch {
	case c == ' ':
		return "a space"
	case c == '/':
		return "a '/'"
	case c == '\\':
		return "a '\\'"
	case c < ' ' || c == 0x7f:
		return fmt.Sprintf("the control character 0x%02x", c)
	default:
		return "a non-ASCII byte"
	}
}
