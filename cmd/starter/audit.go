package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newAuditCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "audit",
		Short: "Reconcile money-class effects against approval records; exit 3 on any divergence",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rep, err := g.client().Audit(cmd.Context())
			if err != nil {
				return refusalOr(cmd, g, err)
			}
			w := cmd.OutOrStdout()
			if g.json {
				if err := printJSON(w, rep); err != nil {
					return err
				}
			} else {
				tw := newTable(w)
				for _, f := range rep.Findings {
					row(tw, f.Kind, f.OperationKey, f.Tool, f.Detail)
				}
				if err := tw.Flush(); err != nil {
					return err
				}
				fmt.Fprintf(w, "%d divergence(s)\n", len(rep.Findings))
			}
			if !rep.Clean {
				return &exitError{code: 3}
			}
			return nil
		},
	}
}
