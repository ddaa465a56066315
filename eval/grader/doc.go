// Package grader is maestro's recovery-path grader. For every connector
// kind, on the success path and every way a call can go wrong (provider
// unreachable, timeout, 4xx, 5xx, refused credentials, invalid arguments)
// it drives a call through maestro's real path: admission, the invocation workflow, the
// Execute activity, the ledger and the real connectors against stand-ins
// with injected faults. It then grades the observation the agent gets
// with deterministic rules: on an error path it must be an error or pending result with the
// right code, carry a root cause, a remediation and a stop condition, hold
// no receipt, never claim the effect, and (for an error) leave nothing
// behind at the provider. A success must carry its source, a receipt
// (for a real-sync tool) with every field the catalog declares, a payload
// within the cap, and wording that repeats what the receipt says; the
// providers must hold the effect. A composite tool (the page by text and
// email) is graded twice: with every provider faulted, when nothing goes
// out and the call must answer as a single effect would, and with one
// part faulted alone, when the other goes out and the agent must hear
// exactly that: a partly_delivered warning naming each delivered part by
// its receipt, the receivers holding it (ADR 14). Each run's latency is reported beside
// the pass rate, as p50/p95 per tool and path.
//
// Each path runs three times on fresh stand-ins; a path passes only if all
// three runs pass (pass^3), and the grade is the share of paths that pass.
package grader
