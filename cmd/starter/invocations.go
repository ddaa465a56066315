package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/apitype"
	mt "github.com/maestro-run/maestro/maestrotype"
)

func newInvocationsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{Use: "invocations", Aliases: []string{"invocation"}, Short: "Invoke tools and show invocations"}
	cmd.AddCommand(newInvokeCmd(g), newShowCmd(g))
	return cmd
}

func newInvokeCmd(g *globals) *cobra.Command {
	var req apitype.InvokeRequest
	var args string
	var wait bool
	cmd := &cobra.Command{
		Use:   "invoke TOOL",
		Short: "Invoke a tool and print its observation",
		Long: "Invoke a tool. The operation key names the business effect: reusing it\n" +
			"with the same arguments returns the original result and never repeats the effect.",
		Example: `  starter invocations invoke lookup_tenant --args '{"tenant_id":"t_100"}' --session call-1 --operation-key call-1:lookup`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, pos []string) error {
			req.Tool = pos[0]
			if err := checkInvokeIDs(req); err != nil {
				return err
			}
			if !json.Valid([]byte(args)) {
				return fmt.Errorf("--args is not valid JSON: %s", args)
			}
			req.Args = json.RawMessage(args)
			c := g.client()
			resp, err := c.Invoke(cmd.Context(), req)
			if err == nil && resp.Pending && wait {
				fmt.Fprintf(cmd.ErrOrStderr(), "invocation %s is %s; waiting…\n", resp.InvocationID, resp.State)
				resp, err = c.Wait(cmd.Context(), resp.InvocationID)
			}
			return report(cmd.OutOrStdout(), g, resp, err)
		},
	}
	f := cmd.Flags()
	f.StringVar(&args, "args", "{}", "tool arguments as a JSON object")
	f.StringVar(&req.SessionID, "session", "", "session (call) ID, required"+identifierHelp)
	f.StringVar(&req.OperationKey, "operation-key", "", "operation key naming this business effect (default derived from session, tool and arguments)"+identifierHelp)
	f.StringVar(&req.ToolCallID, "tool-call-id", "", "agent's tool-call ID, kept for correlation; joins the derived key only for reads and repeatable tools"+identifierHelp)
	f.BoolVar(&wait, "wait", false, "poll until the invocation is final")
	return cmd
}

func newShowCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "show ID",
		Short: "Show one invocation and its observation",
		Long: "Show one invocation and its observation. For a write whose catalog row declares\n" +
			"before and after reads, the state of its target before the effect and after it\n" +
			"is printed side by side (before | after); --json carries them as state_reads.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, pos []string) error {
			resp, err := g.client().Invocation(cmd.Context(), pos[0])
			return report(cmd.OutOrStdout(), g, resp, err)
		},
	}
}

// refusalOr prints a refusal and exits 3, or returns any other error.
func refusalOr(cmd *cobra.Command, g *globals, err error) error {
	var ref *apiclient.Error
	if !errors.As(err, &ref) {
		return err
	}
	if g.json {
		_ = printJSON(cmd.OutOrStdout(), map[string]any{"observation": ref.Observation})
	} else {
		_ = printObservation(cmd.OutOrStdout(), ref.Observation)
	}
	return &exitError{code: 3}
}

// report prints an invocation or a refusal. A refused or failed call exits
// 3 so scripts can tell "maestro said no" from "could not reach maestro".
func report(w io.Writer, g *globals, resp apiclient.Response, err error) error {
	var ref *apiclient.Error
	if errors.As(err, &ref) {
		if g.json {
			_ = printJSON(w, map[string]any{"observation": ref.Observation})
		} else {
			_ = printObservation(w, ref.Observation)
		}
		return &exitError{code: 3}
	}
	if err != nil {
		return err
	}
	if g.json {
		if err := printJSON(w, resp.Invocation); err != nil {
			return err
		}
	} else {
		tw := newTable(w)
		row(tw, "invocation", resp.InvocationID)
		row(tw, "key", resp.OperationKey)
		row(tw, "tool", resp.Tool)
		row(tw, "state", resp.State)
		if resp.ApprovalID != "" {
			row(tw, "approval", resp.ApprovalID)
		}
		observationRows(tw, resp.Observation)
		if cb := resp.Callback; cb != nil {
			row(tw, "callback", describeCallback(cb))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if err := printStateReads(w, resp.StateReads); err != nil {
			return err
		}
	}
	if resp.Observation.Status == mt.StatusError {
		return &exitError{code: 3}
	}
	return nil
}

// describeCallback says how the delivery to the agent's callback URL stands.
func describeCallback(cb *apitype.Callback) string {
	s := fmt.Sprintf("%s after %d attempt(s)", cb.Status, cb.Attempts)
	if cb.DeliveredAt != nil {
		s += " at " + cb.DeliveredAt.Format("2006-01-02 15:04:05Z")
	}
	if cb.LastError != "" {
		s += "; last error: " + cb.LastError
	}
	return s
}
