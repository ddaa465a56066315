package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/maestro-run/maestro/eval"
	"github.com/maestro-run/maestro/tools"
)

// newCatalogCmd checks a catalog file in this process. It lives here rather
// than in starter because it loads the catalog with maestro's own loader
// and fence, before any server is running: there is no API to ask.
func newCatalogCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "catalog", Short: "Check tool catalogs"}
	var asJSON bool
	check := &cobra.Command{
		Use:   "check PATH",
		Short: "Load a catalog and run the structural fence over it, without starting maestro",
		Long: "check loads a catalog as maestro would, listing every problem by row and field\n" +
			"(exit 1), then runs the structural fence (exit 3 on a violation).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := tools.LoadFile(args[0])
			if err != nil {
				return err
			}
			violations := eval.FenceCatalog(c)
			if asJSON {
				if violations == nil {
					violations = []eval.Violation{}
				}
				if err := printJSON(cmd.OutOrStdout(), map[string]any{"tools": len(c.Tools()), "violations": violations}); err != nil {
					return err
				}
			} else {
				for _, v := range violations {
					fmt.Fprintln(cmd.OutOrStdout(), v)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%d tools, %d fence violation(s)\n", len(c.Tools()), len(violations))
			}
			if len(violations) > 0 {
				return &exitError{code: 3}
			}
			return nil
		},
	}
	check.Flags().BoolVar(&asJSON, "json", false, "print stable JSON instead of text")
	cmd.AddCommand(check)
	return cmd
}
