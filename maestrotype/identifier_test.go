package maestrotype

import (
	"strings"
	"testing"
)

func TestCheckIdentifier(t *testing.T) {
	t.Parallel()
	ok := []string{"call-1", "refund:invoice_842:approval_17", "x%2F..%2Fapprovals", "a?b#c", "...", strings.Repeat("k", MaxIdentifierLen)}
	for _, v := range ok {
		if err := CheckIdentifier("session_id", v); err != nil {
			t.Errorf("CheckIdentifier(%q) = %v, want nil", v, err)
		}
	}
	bad := map[string]string{
		"":                                      "required",
		strings.Repeat("k", MaxIdentifierLen+1): "201 characters",
		"x/../../approvals/a/approve?":          "'/'",
		`a\b`:                                   `'\'`,
		"a b":                                   "a space",
		"a\nb":                                  "control character 0x0a",
		"caf\u00e9":                             "non-ASCII",
		".":                                     "may not be",
		"..":                                    "may not be",
	}
	for v, want := range bad {
		err := CheckIdentifier("session_id", v)
		if err == nil {
			t.Errorf("CheckIdentifier(%q) = nil, want an error", v)
			continue
		}
		if !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "session_id ") {
			t.Errorf("CheckIdentifier(%q) = %q, want the field and %q", v, err, want)
		}
	}
}
