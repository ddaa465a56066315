package tools

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"github.com/maestro-run/maestro/maestrotype"
	"slices"
)

// keyHash is the sha256 of an API key. The catalog stores only hashes, so
// a leaked catalog does not leak keys.
type keyHash [sha256.Size]byte

func parseKeyHash(s string) (keyHash, error) {
	var h keyHash
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != sha256.Size {
		return h, fmt.Errorf("want %d hex digits (the sha256 of the key), got %q", 2*sha256.Size, s)
	}
	copy(h[:], b)
	return h, nil
}

// HashKey returns the hex sha256 of an API key, the form the catalog
// stores in api_key_sha256.
func HashKey(key string) string {
	h := sha256.Sum256([]byte(key))
	return hex.EncodeToString(h[:])
}

// equal compares in constant time so response timing does not reveal how
// much of a guessed key's hash was right.
func (h keyHash) equal(other keyHash) bool {
	return subtle.ConstantTimeCompare(h[:], other[:]) == 1
}

// An Agent is a caller that may invoke the tools on its allowlist, and no
// others.
type Agent struct {
	ID          string
	Description string
	// OnFailure is what the agent's sessions do with the effects they
	// already performed when one of their calls fails.
	OnFailure maestrotype.OnFailure
	// Callback is where the agent hears how a pending call ended; nil when
	// the agent only polls.
	Callback *Callback
	// OnReject is what the agent's sessions do when an approver rejects
	// one of their calls.
	OnReject OnReject
	// WhileAwaitingApproval is whether the agent's sessions may write while
	// one of their irreversible or money calls waits for a human.
	WhileAwaitingApproval WhileAwaitingApproval
	// Platform is the voice platform that calls the agent's tools by
	// webhook; nil when the agent calls the API itself.
	Platform *Platform
	key      keyHash
	hasKey   bool
	allow    []string

	// MaxOpenApprovals is how many of the agent's calls may wait for a
	// human at once, MaxLiveSessions how many of its sessions may be open
	// (not ended) at once: a call past either is refused, so one agent
	// cannot drown the approval queue or the ledger. See caps.go.
	MaxOpenApprovals int
	MaxLiveSessions  int
}

// OnReject is an agent's policy for a session whose call an approver
// rejected.
type OnReject string

const (
	// OnRejectHalt halts the session (the default): the human said no, so
	// the agent stops acting until an operator has looked at the session,
	// rather than asking again under another key.
	OnRejectHalt OnReject = "halt"
	// OnRejectContinue leaves the session active: the rejected call alone
	// is refused.
	OnRejectContinue OnReject = "continue"
)

// Valid reports whether r is a known policy.
func (r OnReject) Valid() bool {
	return r == OnRejectHalt || r == OnRejectContinue
}

// WhileAwaitingApproval is an agent's policy for writes made while one of
// its session's irreversible or money calls waits for a human.
type WhileAwaitingApproval string

const (
	// AwaitingApprovalStrict refuses the session's writes until the human
	// decides (the default): what the human is deciding may depend on them.
	// Reads and record-deferred intents go on.
	AwaitingApprovalStrict WhileAwaitingApproval = "strict"
	// AwaitingApprovalAllowWrites lets writes run while the human decides.
	AwaitingApprovalAllowWrites WhileAwaitingApproval = "allow_writes"
)

// Valid reports whether w is a known policy.
func (w WhileAwaitingApproval) Valid() bool {
	return w == AwaitingApprovalStrict || w == AwaitingApprovalAllowWrites
}

// Allows reports whether the agent may call the named tool.
func (a *Agent) Allows(tool string) bool {
	_, ok := slices.BinarySearch(a.allow, tool)
	return ok
}

// Allowed returns the agent's allowlist, sorted.
func (a *Agent) Allowed() []string {
	return slices.Clone(a.allow)
}

// An Operator is a human (or ops tool) who decides approvals. Roles are
// matched against a gated tool's approver role.
type Operator struct {
	ID    string
	Roles []string
	// Notify are the channels the operator is told at when a request
	// waits for one of their roles.
	Notify []Channel
	key    keyHash
	hasKey bool
}

// HasRole reports whether the operator holds role.
func (o *Operator) HasRole(role string) bool {
	return slices.Contains(o.Roles, role)
}

// byKey finds the principal whose key hash matches key. It compares against
// every candidate, even after a match, so the time taken does not depend
// on which one matched.
func byKey[P any](candidates []P, key string, hash func(P) (keyHash, bool)) (P, bool) {
	var found P
	ok := false
	if key == "" {
		return found, false
	}
	sum := keyHash(sha256.Sum256([]byte(key)))
	for _, c := range candidates {
		h, has := hash(c)
		if has && h.equal(sum) {
			found, ok = c, true
		}
	}
	return found, ok
}
