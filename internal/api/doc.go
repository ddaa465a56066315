// Package api serves maestro's HTTP API to agents and ops tooling.
// Agents invoke tools and read invocations; ops tooling inspects and
// decides. Every refusal is an observation with a 4xx status; a failure
// of maestro itself (the ledger or Temporal unreachable, an internal
// error) is an observation with a 5xx status.
package api
