package main

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/maestro-run/maestro/eval/grader"
	"github.com/maestro-run/maestro/eval/reality"
	"github.com/maestro-run/maestro/standin"
	"github.com/maestro-run/maestro/store"
)

func newEvalCmd(_ *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Run maestro's own evals: the reality eval and the recovery-path grader",
	}
	cmd.AddCommand(newEvalRealityCmd(), newEvalRecoveryCmd(), newEvalStandinsCmd())
	return cmd
}

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

func newEvalRecoveryCmd() *cobra.Command {
	var jsonPath string
	cmd := &cobra.Command{
		Use:   "recovery [--json OUT]",
		Short: "Grade the success path and every error path of every connector; exit 3 unless pass^3 is 1.0",
		Long: "recovery drives a call down the success path and every error path (unreachable, timeout,\n" +
			"4xx, 5xx, auth failure, invalid args) of every connector kind, through admission, the\n" +
			"invocation workflow, the ledger and the real connectors against local stand-ins with\n" +
			"injected faults, three times each, and grades the observation the agent gets: a success\n" +
			"must carry its source and, for a real-sync tool, its receipt, stay within the payload cap\n" +
			"and word what the receipt says. Latency (p50/p95) is reported beside the pass rate, per\n" +
			"tool and path. It needs no services: the ledger is a throwaway SQLite file.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := os.MkdirTemp("", "maestro-grader-")
			if err != nil {
				return fmt.Errorf("error creating the grader's ledger directory: %w", err)
			}
			defer os.RemoveAll(dir)
			st, err := store.OpenSQLite(cmd.Context(), filepath.Join(dir, "ledger.db"))
			if err != nil {
				return err
			}
			defer st.Close()
			if err := st.Migrate(cmd.Context()); err != nil {
				return err
			}
			rep, err := grader.Run(cmd.Context(), grader.Config{Store: st})
			if err != nil {
				return err
			}
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
			if rep.PassRate() < 1 {
				return &exitError{code: 3}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&jsonPath, "json", "", `also write the report as JSON to this file ("-" for stdout)`)
	return cmd
}

// newEvalStandinsCmd serves the provider stand-ins for an eval run by a
// script, which reads their endpoints from stdout. Hidden: it is plumbing
// for CI, not something an operator runs.
func newEvalStandinsCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "standins",
		Short:  "Serve the provider stand-ins on loopback until interrupted, printing their endpoints as NAME=value lines",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			set, err := standin.Start()
			if err != nil {
				return fmt.Errorf("error starting stand-ins: %w", err)
			}
			defer set.Close()
			for _, v := range reality.StandinVars(set) {
				fmt.Fprintf(cmd.OutOrStdout(), "%s=%s\n", v.Name, v.Value)
			}
			<-ctx.Done()
			return nil
		},
	}
}
