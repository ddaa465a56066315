package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// exitError ends the process with a specific status after the command has
// already reported what happened.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "eval",
		Short: "Run maestro's own evals: the reality eval and the recovery-path grader",
		Long: "eval runs maestro's evals and checks in this process, with no maestro server:\n" +
			"the reality eval, the recovery-path grader and the catalog fence. Data goes to\n" +
			"stdout, diagnostics to stderr; a failed eval or check exits 3.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newEvalRealityCmd(), newEvalRecoveryCmd(), newEvalStandinsCmd(), newCatalogCmd())
	return root
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
