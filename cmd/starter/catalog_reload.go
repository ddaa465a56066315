package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/maestro-run/maestro/apiclient"
)

func newCatalogReloadCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "reload",
		Short: "Have maestro re-read its catalog file and swap to it (operator key)",
		Long: "reload asks the maestro process at --url to re-read the catalog file it was\n" +
			"started with, as SIGHUP does. The file is checked in full first (the loader,\n" +
			"the checks a start runs, the structural fence): one that breaks any rule\n" +
			"changes nothing, and every violation is printed (exit 3). On success the new\n" +
			"version is recorded in the ledger and the other processes on it follow\n" +
			"within seconds, each from its own copy of the file. Calls admitted before\n" +
			"keep the catalog version they were admitted under.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out, err := g.client().ReloadCatalog(cmd.Context())
			var refused *apiclient.CatalogRefusedError
			if errors.As(err, &refused) {
				if g.json {
					_ = printJSON(cmd.OutOrStdout(), refused.Reload)
				} else {
					fmt.Fprintf(cmd.OutOrStdout(), "refused: catalog %s kept; the file breaks %d rule(s):\n", short(refused.Reload.Version), len(refused.Reload.Violations))
					for _, v := range refused.Reload.Violations {
						fmt.Fprintln(cmd.OutOrStdout(), "  "+v)
					}
				}
				return &exitError{code: 3}
			}
			if err != nil {
				return refusalOr(cmd, g, err)
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), out)
			}
			if !out.Changed {
				fmt.Fprintf(cmd.OutOrStdout(), "unchanged: catalog %s is the version served\n", short(out.Version))
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "reloaded: catalog %s (was %s)\n", short(out.Version), short(out.Previous))
			return nil
		},
	}
}
