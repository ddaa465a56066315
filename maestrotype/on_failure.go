package maestrotype

// OnFailure is an agent's policy for a session whose call failed. The
// catalog declares it per agent and the session workflow acts on it.
type OnFailure string

const (
	// OnFailureNone leaves completed effects in place (the default): each
	// effect stands on its own and the agent tells the human what failed.
	OnFailureNone OnFailure = "none"
	// OnFailureRollback runs the session's undo stack, newest first, for an
	// agent whose calls make sense only together, so a failure part-way
	// leaves nothing half-done.
	OnFailureRollback OnFailure = "rollback"
)

// Valid reports whether f is a known policy.
func (f OnFailure) Valid() bool {
	return f == OnFailureNone || f == OnFailureRollback
}
