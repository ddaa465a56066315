package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/maestro-run/maestro/apiclient"
)

// globals are the flags every command shares.
type globals struct {
	server string
	key    string
	json   bool
}

// exitError ends the process with a specific status after the command has
// already reported what happened.
type exitError struct{ code int }

func (e *exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func newRootCmd() *cobra.Command {
	g := &globals{}
	root := &cobra.Command{
		Use:   "starter",
		Short: "Invoke maestro tools and inspect invocations",
		Long: "starter talks to a maestro server over its HTTP API.\n\n" +
			"The server and key come from --server/--key or MAESTRO_URL/MAESTRO_KEY.\n\n" +
			"Output: text is aligned for people and may change between releases. --json\n" +
			"output is stable: for commands that call the API it is the API's own JSON\n" +
			"(api/openapi.yaml), and fields are only ever added, never renamed or removed. Data goes\n" +
			"to stdout, diagnostics to stderr; a refused or failed call exits 3.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&g.server, "server", envOr("MAESTRO_URL", "http://127.0.0.1:8080"), "maestro API base URL (env MAESTRO_URL)")
	root.PersistentFlags().StringVar(&g.key, "key", os.Getenv("MAESTRO_KEY"), "agent or operator key (env MAESTRO_KEY)")
	root.PersistentFlags().BoolVar(&g.json, "json", false, "print stable JSON (the API's response shapes) instead of text")
	root.AddCommand(newToolsCmd(g), newInvocationsCmd(g), newApprovalsCmd(g), newAuditCmd(g), newSessionsCmd(g), newRefusalsCmd(g), newReconcileCmd(g), newCatalogCmd(g), newKeysCmd(g), newPlatformsCmd(g), newEvalCmd(g))
	return root
}

func (g *globals) client() *apiclient.Client {
	return apiclient.New(g.server, g.key, apiclient.Options{})
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
