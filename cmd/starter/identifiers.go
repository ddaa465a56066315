package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/maestro-run/maestro/apitype"
	mt "github.com/maestro-run/maestro/maestrotype"
)

// identifierHelp ends the help of every flag naming a session, an
// operation or a call: maestro refuses any other value, and so does the
// CLI, before sending anything.
const identifierHelp = " (" + mt.IdentifierRule + ")"

// checkIdentifier holds a flag's or argument's value to maestro's rule for
// identifiers, naming it as the command line does.
func checkIdentifier(name, value string) error {
	if err := mt.CheckIdentifier(name, value); err != nil {
		return fmt.Errorf("error in the command line: %w", err)
	}
	return nil
}

// sessionArg checks a command's first argument, a session ID, as the
// server would, so a value maestro refuses is never sent.
func sessionArg(n int) cobra.PositionalArgs {
	return cobra.MatchAll(cobra.ExactArgs(n), func(_ *cobra.Command, args []string) error {
		return checkIdentifier("session ID", args[0])
	})
}

// checkInvokeIDs holds an invocation's identifiers to the rule; the key
// and the tool-call ID are optional.
func checkInvokeIDs(req apitype.InvokeRequest) error {
	if err := checkIdentifier("--session", req.SessionID); err != nil {
		return err
	}
	if req.OperationKey != "" {
		if err := checkIdentifier("--operation-key", req.OperationKey); err != nil {
			return err
		}
	}
	if req.ToolCallID != "" {
		return checkIdentifier("--tool-call-id", req.ToolCallID)
	}
	return nil
}
