package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/maestro-run/maestro/eval/grader"
	"github.com/maestro-run/maestro/internal/ledger"
)

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
			st, err := ledger.OpenSQLite(cmd.Context(), filepath.Join(dir, "ledger.db"))
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
