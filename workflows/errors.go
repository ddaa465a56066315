package workflows

// Error types carried by non-retryable application errors, so callers can
// branch on them without parsing messages.
const (
	ErrTypeUnknownRoute = "UnknownRoute"
	ErrTypeInvariant    = "InvariantViolation"
)
