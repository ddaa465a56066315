package main

import (
	"errors"
	"fmt"
	"time"

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

func newCatalogVersionsCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "versions",
		Short: "List the catalog versions maestro's processes followed (operator key)",
		Long: "versions prints the catalog version every process on the ledger follows\n" +
			"(the one activated last), the version the process at --url serves, and\n" +
			"the last 50 activations, newest first. A process serves another version\n" +
			"than the current one for a few seconds after a reload, or while its own\n" +
			"catalog file differs (its /readyz then reports catalog_drift).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out, err := g.client().CatalogVersions(cmd.Context())
			if err != nil {
				return refusalOr(cmd, g, err)
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), out)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "current %s; this process serves %s\n", short(out.Current), short(out.Served))
			tw := newTable(w)
			fmt.Fprintln(tw, "VERSION\tACTIVATED")
			for _, a := range out.Activations {
				fmt.Fprintf(tw, "%s\t%s\n", short(a.Version), a.ActivatedAt.Local().Format(time.DateTime))
			}
			return tw.Flush()
		},
	}
}
