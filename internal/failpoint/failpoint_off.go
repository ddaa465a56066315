//go:build !failpoint

package failpoint

// Enabled reports whether this binary was built with failpoints.
const Enabled = false

// Inject does nothing in a normal build.
func Inject(string) {}

// LedgerBypassed is always false in a normal build.
func LedgerBypassed() bool { return false }
