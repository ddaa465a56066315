// Package grader is maestro's recovery-path grader. For every connector
// kind and every way a call can go wrong (provider unreachable, timeout,
// 4xx, 5xx, refused credentials, invalid arguments) it drives a call
// through maestro's real path: admission, the invocation workflow, the
// Execute activity, the ledger and the real connectors against stand-ins
// with injected faults. It then grades the observation the agent gets
// with deterministic rules: it must be an error or pending result with the
// right code, carry a root cause, a remediation and a stop condition, hold
// no receipt, never claim the effect, and (for an error) leave nothing
// behind at the provider.
//
// Each path runs three times on fresh stand-ins; a path passes only if all
// three runs pass (pass^3), and the grade is the share of paths that pass.
package grader
