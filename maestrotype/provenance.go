package maestrotype

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// Provenance says who vouches for a session fact. Auto-approval rests only
// on facts whose provenance the rule accepts: what an agent merely states
// about its own session (the caller's number, the tenant) proves nothing.
type Provenance string

const (
	// ProvenanceAgentDeclared is a fact the agent runtime stated in a
	// request's session_context.
	ProvenanceAgentDeclared Provenance = "agent-declared"
	// ProvenanceOperator is the kind of a fact an operator set, as a rule
	// lists it. The fact itself records which operator: see
	// OperatorVouched. A bare "operator" names nobody; it is what facts
	// set before operators were named carry.
	ProvenanceOperator Provenance = "operator"
	// operatorPrefix starts a fact an operator vouched for; the operator's
	// ID follows.
	operatorPrefix = string(ProvenanceOperator) + ":"
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

// OperatorVouched is the provenance of a fact the operator with this ID
// vouched for; the ID is bounded as identifiers are (MaxIdentifierLen).
// Whether it counts for a rule depends on the roles that operator holds
// when the rule is evaluated, so the ID is kept.
func OperatorVouched(id string) (Provenance, error) {
	if id == "" || len(id) > MaxIdentifierLen || strings.ContainsFunc(id, unicode.IsControl) {
		return "", fmt.Errorf("operator ID %q must be 1-%d characters with no control characters", id, MaxIdentifierLen)
	}
	return Provenance(operatorPrefix + id), nil
}

// ParseProvenance reads a provenance as the catalog and the ledger spell
// it: agent-declared, operator, operator:<id> or platform-signed:<platform>.
func ParseProvenance(s string) (Provenance, error) {
	switch p := Provenance(s); {
	case p == ProvenanceAgentDeclared, p == ProvenanceOperator:
		return p, nil
	case strings.HasPrefix(s, operatorPrefix):
		return OperatorVouched(strings.TrimPrefix(s, operatorPrefix))
	case strings.HasPrefix(s, platformSignedPrefix):
		return PlatformSigned(strings.TrimPrefix(s, platformSignedPrefix))
	}
	return "", fmt.Errorf("unknown provenance %q: use agent-declared, operator, operator:<id> or platform-signed:<platform>", s)
}

// Kind is the provenance as an auto-approval rule lists it: operator for
// any operator's fact, the provenance itself otherwise.
func (p Provenance) Kind() Provenance {
	if p.Operator() != "" {
		return ProvenanceOperator
	}
	return p
}

// Operator is the ID of the operator who vouched for a fact, or "" when
// the provenance names none (a bare "operator" included).
func (p Provenance) Operator() string {
	if after, ok := strings.CutPrefix(string(p), operatorPrefix); ok {
		return after
	}
	return ""
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
	return p.Kind() == ProvenanceOperator || p.Platform() != ""
}

// Fact is one session fact with who vouches for it.
type Fact struct {
	Value      string     `json:"value"`
	Provenance Provenance `json:"provenance"`
}
