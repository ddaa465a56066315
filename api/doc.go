// Package api serves maestro's HTTP API: agents invoke tools and read
// invocations; ops tooling inspects and decides. Every refusal is an
// observation with a 4xx status, never a 500.
package api
