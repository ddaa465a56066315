package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/maestro-run/maestro/eval"
)

// catalogCheck is the --json answer of catalog check.
type catalogCheck struct {
	Path       string         `json:"path"`
	OK         bool           `json:"ok"`
	Tools      int            `json:"tools"`
	Violations []eval.Finding `json:"violations"`
}

func newCatalogCheckCmd(g *globals) *cobra.Command {
	var dev bool
	cmd := &cobra.Command{
		Use:   "check FILE",
		Short: "Check a catalog file as a server checks it at start, without one",
		Long: "check runs on FILE what maestro runs on its catalog at start: the loader's\n" +
			"rules, the refusal of the published development keys (unless --dev), and\n" +
			"the structural fence. It reads only the file and needs no server. Every\n" +
			"violation is printed on its own line, led by the rule it breaks (e.g.\n" +
			"unclassified, deferred-past-tense, receipt, template-field-may-be-absent).\n" +
			"It exits 0 when a server would start on the file, 3 when there is any\n" +
			"violation, and 1 when the file cannot be read. --json prints\n" +
			"{path, ok, tools, violations: [{stage, rule, row, field, tool, detail}]}.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := os.ReadFile(args[0])
			if err != nil {
				return fmt.Errorf("error reading the catalog: %w", err)
			}
			cat, findings := eval.CheckCatalog(data, eval.CheckOptions{Dev: dev})
			res := catalogCheck{Path: args[0], OK: len(findings) == 0, Violations: findings}
			if res.Violations == nil {
				res.Violations = []eval.Finding{}
			}
			if cat != nil {
				res.Tools = len(cat.Tools())
			}
			if g.json {
				if err := printJSON(cmd.OutOrStdout(), res); err != nil {
					return err
				}
			} else {
				for _, f := range findings {
					fmt.Fprintln(cmd.OutOrStdout(), f)
				}
				if res.OK {
					fmt.Fprintf(cmd.ErrOrStderr(), "%s: %d tools, no violations\n", args[0], res.Tools)
				} else {
					fmt.Fprintf(cmd.ErrOrStderr(), "%s: %d violation(s)\n", args[0], len(findings))
				}
			}
			if !res.OK {
				return &exitError{code: 3}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&dev, "dev", false, "accept the development keys, as a server in dev mode does")
	return cmd
}
