package tools

const (
	// DefaultMaxOpenApprovals is an agent's max_open_approvals unless
	// the catalog says otherwise: more requests than a team works in an
	// hour, far fewer than it takes to hide one among them.
	DefaultMaxOpenApprovals = 20
	// DefaultMaxLiveSessions is an agent's max_live_sessions unless the
	// catalog says otherwise: room for many concurrent calls of one
	// deployment, not for sessions an agent never ends.
	DefaultMaxLiveSessions = 200
	// maxCap bounds either cap: past it a cap no longer protects anyone.
	maxCap = 100_000
)

func capOr(v *int, def int) int {
	if v == nil {
		return def
	}
	return *v
}

// capProblems checks an agent's caps on what it may hold open at once.
func capProblems(p *problems, row string, a *Agent) {
	for _, c := range []struct {
		field string
		value int
	}{{"max_open_approvals", a.MaxOpenApprovals}, {"max_live_sessions", a.MaxLiveSessions}} {
		if c.value < 1 || c.value > maxCap {
			p.add(row, c.field, "must be between 1 and %d, got %d", maxCap, c.value)
		}
	}
}
