package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/maestro-run/maestro/apitype"
)

func newEvalCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "eval", Short: "Inspect maestro's evals of its own deployment"}
	canary := &cobra.Command{
		Use:   "canary",
		Short: "The reality canary: each canary tool fired at its provider's test facilities and read back",
	}
	show := &cobra.Command{
		Use:   "show",
		Short: "Show each canary tool's last result (operator key)",
		Long: "show lists every catalog tool with a canary: green when its last run was\n" +
			"confirmed at the provider, red when not, none before any run, and whether\n" +
			"agents are kept from it (requires_green_canary and red).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			res, err := g.client().Canary(cmd.Context())
			if err != nil {
				return err
			}
			return printCanary(cmd.OutOrStdout(), g.json, res)
		},
	}
	run := &cobra.Command{
		Use:   "run",
		Short: "Run the canary now and show the result (operator key)",
		Long:  "run fires every canary tool now, waits for the run to finish and prints the\nstate after it. It exits 3 when any tool is red.",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			res, err := g.client().CanaryRun(cmd.Context())
			if err != nil {
				return err
			}
			if err := printCanary(cmd.OutOrStdout(), g.json, res); err != nil {
				return err
			}
			for _, t := range res.Tools {
				if t.State == apitype.CanaryRed {
					return &exitError{code: 3}
				}
			}
			return nil
		},
	}
	canary.AddCommand(show, run)
	cmd.AddCommand(canary)
	return cmd
}

func printCanary(w io.Writer, asJSON bool, res apitype.CanaryStatus) error {
	if asJSON {
		return printJSON(w, res)
	}
	if res.RunID != "" {
		fmt.Fprintf(w, "run %s\n", res.RunID)
	}
	tw := newTable(w)
	row(tw, "TOOL", "STATE", "WITHHELD", "CHECKED", "LAST SUCCESS", "DETAIL")
	for _, t := range res.Tools {
		row(tw, t.Tool, t.State, yesNo(t.Withheld), when(t.CheckedAt), when(t.LastSuccessAt), t.Detail)
	}
	return tw.Flush()
}

func when(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
