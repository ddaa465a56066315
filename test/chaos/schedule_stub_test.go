//go:build chaos

package chaos

// faultEvent is one fault the run injected, at its offset from the start
// of the load.
type faultEvent struct {
	At     float64 `json:"at_s"`
	Kind   string  `json:"kind"`
	Target string  `json:"target"`
	Detail string  `json:"detail"`
}
