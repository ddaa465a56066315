// Package workflows holds maestro's deterministic Temporal workflow code.
// It imports no database, HTTP or provider packages: every effect happens in
// an activity, referenced here by name, so determinism is structural.
package workflows
