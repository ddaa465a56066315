// Package receipts checks that a provider's receipt proves what a tool
// claims, and reads receipts back from the providers' own APIs.
package receipts

import (
	"errors"
	"fmt"
	"strings"

	mt "github.com/maestro-run/maestro/maestrotype"
)

// ErrNoReceipt is what every error of Check wraps: no receipt proves the
// effect, so no success may be claimed.
var ErrNoReceipt = errors.New("no receipt proves the effect")

// Check reports whether r proves an effect whose receipt must carry the
// required fields: r must exist, carry the provider's ID, and fill in
// every required field. A success may only be claimed with a receipt that
// passes. An empty required list fails too: a tool that declares nothing
// to prove cannot be believed, whatever the receipt says. Whether a call
// needs a receipt at all (a real-sync one does; a read or a deferred
// record does not) is the caller's decision, made before calling Check.
func Check(r *mt.Receipt, required []string) error {
	if r == nil {
		return unproven("no receipt; required fields: %s", strings.Join(required, ", "))
	}
	if r.ID == "" {
		return unproven("receipt from %s has no provider ID", r.Provider)
	}
	if len(required) == 0 {
		return unproven("the tool declares no receipt fields")
	}
	var missing []string
	for _, f := range required {
		if r.Fields[f] == "" {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		return unproven("receipt from %s lacks required fields: %s", r.Provider, strings.Join(missing, ", "))
	}
	return nil
}

// checkError says why a receipt proves nothing in its own words, which
// callers record as the reason an effect is unknown, and matches
// ErrNoReceipt.
type checkError struct{ msg string }

func unproven(format string, args ...any) error {
	return &checkError{msg: fmt.Sprintf(format, args...)}
}

func (e *checkError) Error() string        { return e.msg }
func (e *checkError) Is(target error) bool { return target == ErrNoReceipt }
