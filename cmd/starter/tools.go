package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

func newToolsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "tools", Short: "Tools the caller may use"}
	cmd.AddCommand(&cobra.Command{
		Use:   "list",
		Short: "List the tools this agent key may call, with their classes",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			list, err := g.client().Tools(cmd.Context())
			if err != nil {
				return err
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), list)
			}
			tw := newTable(cmd.OutOrStdout())
			fmt.Fprintln(tw, "NAME\tEFFECT\tDELIVERY\tREVERSIBILITY\tROUTE\tRECEIPT")
			for _, t := range list.Tools {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", t.Name, t.Effect, t.Delivery, t.Reversibility, t.Route, strings.Join(t.ReceiptFields, ","))
			}
			return tw.Flush()
		},
	})
	return cmd
}
