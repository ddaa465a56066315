// Command starter is maestro's CLI: it invokes tools and inspects
// invocations through the HTTP API. Data goes to stdout, diagnostics to
// stderr; --json gives stable machine-readable output.
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
