package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/maestro-run/maestro/eval/reality"
	"github.com/maestro-run/maestro/internal/standin"
)

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
