package apitype

import mt "github.com/maestro-run/maestro/maestrotype"

// StateReads are what the catalog's reads of a write's target saw: Before
// just ahead of the effect, After once it succeeded. Views show them side
// by side; either is absent when the tool declares no such read or the
// call did not reach it.
type StateReads struct {
	Before *mt.StateRead `json:"before,omitempty"`
	After  *mt.StateRead `json:"after,omitempty"`
}
