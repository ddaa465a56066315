package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/maestro-run/maestro/eval/reality"
)

func newEvalRealityCmd() *cobra.Command {
	var configPath, jsonPath string
	cmd := &cobra.Command{
		Use:   "reality --config FILE [--json OUT]",
		Short: "Fire every real-sync tool at the configured providers and read each effect back from them",
		Long: "reality fires every real-sync tool of a catalog through maestro's real connectors at the\n" +
			"provider endpoints in --config, then proves each effect through the provider's own API\n" +
			"(Twilio's Messages API, an SES emulator's store, the HTTP resource). A read that fails\n" +
			"fails the tool; nothing is taken from maestro's ledger.\n\n" +
			"${NAME} in the config's endpoint and credential values reads the environment.\n" +
			"Exit status: 0 when every tool passed or was skipped with a reason, 3 when any\n" +
			"failed, 1 when the run could not start (nothing was sent).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := reality.LoadConfig(configPath, os.LookupEnv)
			if err != nil {
				return err
			}
			rep, err := reality.Run(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			// With the JSON on stdout, the table moves to stderr so the
			// JSON stays parseable.
			table := cmd.OutOrStdout()
			if jsonPath == "-" {
				table = cmd.ErrOrStderr()
			}
			if err := rep.WriteTable(table); err != nil {
				return err
			}
			if err := writeJSON(cmd, jsonPath, rep); err != nil {
				return err
			}
			if !rep.OK() {
				return &exitError{code: 3}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "reality config file, YAML or JSON (required)")
	// Shadows the global --json switch: this command always prints its
	// table, and the JSON goes where this flag says.
	cmd.Flags().StringVar(&jsonPath, "json", "", `also write the report as JSON to this file ("-" for stdout)`)
	_ = cmd.MarkFlagRequired("config")
	return cmd
}

// writeJSON writes a report to path: nowhere when empty, stdout for "-".
func writeJSON(cmd *cobra.Command, path string, report any) error {
	switch path {
	case "":
		return nil
	case "-":
		return printJSON(cmd.OutOrStdout(), report)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("error creating JSON report: %w", err)
	}
	if err := printJSON(f, report); err != nil {
		f.Close()
		return fmt.Errorf("error writing JSON report: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("error writing JSON report: %w", err)
	}
	return nil
}
