package maestrotype

import (
	"fmt"
	"regexp"
	"strings"
)

// Provenance says who vouches for a session fact. Auto-approval rests only
// on facts whose provenance the rule accepts: what an agent merely states
// about its own session (the caller's number, the tenant) proves nothing.
type Provenance string

const (
	// ProvenanceAgentDeclared is a fact the agent runtime stated in a
	// request's session_context.
	ProvenanceAgentDeclared Provenance = "agent-declared"
	// ProvenanceOperator is a fact an operator set.
	ProvenanceOperator Provenance = "operator"
	// platformSignedPrefix starts a fact a platform signed (a telephony
	// provider's verified webhook); the platform's name follows.
	platformSignedPrefix = "platform-signed:"
)

var platformName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,39}$`)

// PlatformSigned is the provenance of a fact the named platform signed.
func PlatformSigned(platform string) (Provenance, error) {
	if !platformName.MatchString(platform) {
		return "", fmt.Errorf("platform %q must be 1-40 lowercase letters, digits, _ or -", platform)
	}
	return Provenance(platformSignedPrefix + platform), nil
}

// ParseProvenance reads a provenance as the catalog and the ledger spell
// it: agent-declared, operator or platform-signed:<platform>.
func ParseProvenance(s string) (Provenance, error) {
	switch p := Provenance(s); {
	case p == ProvenanceAgentDeclared, p == ProvenanceOperator:
		return p, nil
	case strings.HasPrefix(s, platformSignedPrefix):
		return PlatformSigned(strings.TrimPrefix(s, platformSignedPrefix))
	}
	return "", fmt.Errorf("unknown provenance %q: use agent-declared, operator or platform-signed:<platform>", s)
}

// Platform is the signing platform of a platform-signed provenance, or "".
func (p Provenance) Platform() string {
	if after, ok := strings.CutPrefix(string(p), platformSignedPrefix); ok {
		return after
	}
	return ""
}

// DefaultTrustedProvenances are what an auto-approval rule accepts when
// the catalog names none: an operator, or any platform that signs. Never
// the agent's own word.
func DefaultTrustedProvenances(p Provenance) bool {
	return p == ProvenanceOperator || p.Platform() != ""
}

// Fact is one session fact with who vouches for it.
type Fact struct {
	Value      string     `json:"value"`
	Provenance Provenance `json:"provenance"`
}
