package main

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/spf13/cobra"
)

func newPlatformsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "platforms", Short: "Connect voice platforms (ElevenLabs, Vapi, Retell) to an agent"}
	var agent string
	export := &cobra.Command{
		Use:   "export elevenlabs|vapi|retell --agent ID",
		Short: "Print the platform's tool JSON for the agent's tools, to paste into its dashboard",
		Long: "Prints the tools the agent's catalog platform block exposes, in the platform's own JSON\n" +
			"(names, descriptions and parameter schemas from the catalog, server URL, headers and\n" +
			"timeouts) on stdout as one JSON array, and the rest of the dashboard settings and\n" +
			"where each part goes on stderr. Secrets are named by their environment variable,\n" +
			"never printed. --json prints the whole export as one document on stdout.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slices.Contains([]string{"elevenlabs", "vapi", "retell"}, args[0]) {
				return fmt.Errorf("unknown platform %q: want elevenlabs, vapi or retell", args[0])
			}
			if agent == "" {
				return fmt.Errorf("--agent is required")
			}
			out, err := g.client().PlatformExport(cmd.Context(), args[0], agent)
			if err != nil {
				return err
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), out)
			}
			// The tools go to stdout as one JSON array, ready to paste or
			// pipe; where the rest goes is said on stderr.
			w := cmd.ErrOrStderr()
			fmt.Fprintf(w, "# %s tools for agent %s (answer budget %gs; secret in $%s)\n", out.Platform, out.AgentID, out.AnswerBudgetSeconds, out.SecretEnv)
			fmt.Fprintf(w, "# tool calls: %s\n# end of call: %s\n", out.ToolsURL, out.EventsURL)
			for i, s := range out.Steps {
				fmt.Fprintf(w, "# %d. %s\n", i+1, s)
			}
			fmt.Fprintln(w, "# settings:")
			var settings any
			if err := json.Unmarshal(out.Settings, &settings); err != nil {
				return fmt.Errorf("error reading the settings: %w", err)
			}
			if err := printJSON(w, settings); err != nil {
				return err
			}
			return printJSON(cmd.OutOrStdout(), out.Tools)
		},
	}
	export.Flags().StringVar(&agent, "agent", "", "the agent whose tools to export (its catalog entry needs a platform block)")
	cmd.AddCommand(export)
	return cmd
}
