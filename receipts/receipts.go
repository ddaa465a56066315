// Package receipts checks that a provider's receipt proves what a tool
// claims, and reads receipts back from the providers' own APIs.
package receipts

import (
	"fmt"
	"strings"

	mt "github.com/maestro-run/maestro/maestrotype"
)

// Check reports whether r carries every field the catalog requires. A
// success may only be claimed with a receipt that passes.
func Check(r *mt.Receipt, required []string) error {
	if len(required) == 0 {
		return nil
	}
	if r == nil {
		return fmt.Errorf("no receipt; required fields: %s", strings.Join(required, ", "))
	}
	if r.ID == "" {
		return fmt.Errorf("receipt from %s has no provider ID", r.Provider)
	}
	var missing []string
	for _, f := range required {
		if r.Fields[f] == "" {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("receipt from %s lacks required fields: %s", r.Provider, strings.Join(missing, ", "))
	}
	return nil
}
