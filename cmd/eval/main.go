// Command eval runs maestro's own evals and checks in-process: the reality
// eval, the recovery-path grader, the stand-ins for scripted runs and the
// catalog fence. Unlike starter it links the server-side packages.
package main

import (
	"errors"
	"fmt"
	"os"
)

func main() {
	if err := newRootCmd().Execute(); err != nil {
		var ex *exitError
		if errors.As(err, &ex) {
			os.Exit(ex.code)
		}
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}
