package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/maestro-run/maestro/apitype"
)

func newApprovalsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "approvals",
		Aliases: []string{"approval"},
		Short:   "List, inspect and decide approval requests (operator key)",
	}
	q := apitype.ListQuery{}
	list := &cobra.Command{
		Use:   "list",
		Short: "List approval requests, a page at a time, oldest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out, err := g.client().ApprovalPage(cmd.Context(), q)
			if err != nil {
				return refusalOr(cmd, g, err)
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), out)
			}
			tw := newTable(cmd.OutOrStdout())
			fmt.Fprintln(tw, "ID\tSTATUS\tTOOL\tAGENT\tROLE\tTIMEOUT\tARGS")
			for _, a := range out.Approvals {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", a.ID, a.Status, a.Tool, a.AgentID, a.ApproverRole, a.TimeoutAt.Format("15:04:05Z"), a.Args)
			}
			return flushPaged(tw, cmd.OutOrStdout(), len(out.Approvals), out.Paging)
		},
	}
	listFlags(list, &q, "")
	list.Flags().StringVar(&q.Status, "status", "pending", "pending, approved, rejected, timed_out, auto_approved, or empty for all")

	show := &cobra.Command{
		Use:   "show ID",
		Short: "Show a request: frozen arguments, hash, context and its immutable event log",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, pos []string) error {
			a, err := g.client().Approval(cmd.Context(), pos[0])
			return printApproval(cmd, g, a, err)
		},
	}
	cmd.AddCommand(list, show, newDecideCmd(g, "approve"), newDecideCmd(g, "reject"), newDecideCmd(g, "modify"))
	return cmd
}

func newDecideCmd(g *globals, verb string) *cobra.Command {
	var reason, args string
	short := map[string]string{
		"approve": "Approve a request; the call then runs once with exactly its frozen arguments",
		"reject":  "Reject a request; the call is cancelled and the agent is told",
		"modify":  "Approve edited arguments (validated and re-hashed) in place of the frozen ones",
	}[verb]
	cmd := &cobra.Command{
		Use:   verb + " ID",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, pos []string) error {
			c := g.client()
			var (
				a   apitype.Approval
				err error
			)
			switch verb {
			case "approve":
				a, err = c.Approve(cmd.Context(), pos[0], reason)
			case "reject":
				a, err = c.Reject(cmd.Context(), pos[0], reason)
			case "modify":
				if !json.Valid([]byte(args)) {
					return fmt.Errorf("--args is not valid JSON: %s", args)
				}
				a, err = c.Modify(cmd.Context(), pos[0], json.RawMessage(args), reason)
			}
			return printApproval(cmd, g, a, err)
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why, recorded in the audit log")
	if verb == "modify" {
		cmd.Flags().StringVar(&args, "args", "", "the edited arguments as a JSON object")
		_ = cmd.MarkFlagRequired("args")
	}
	return cmd
}

func printApproval(cmd *cobra.Command, g *globals, a apitype.Approval, err error) error {
	if err != nil {
		return refusalOr(cmd, g, err)
	}
	w := cmd.OutOrStdout()
	if g.json {
		return printJSON(w, a)
	}
	tw := newTable(w)
	row(tw, "approval", a.ID)
	row(tw, "status", a.Status)
	row(tw, "tool", a.Tool)
	row(tw, "role", a.ApproverRole)
	row(tw, "args", string(a.Args))
	row(tw, "args hash", a.ArgsHash)
	row(tw, "effect", a.Effect)
	row(tw, "reversibility", a.Reversibility)
	row(tw, "reason", a.Reason)
	row(tw, "risk", strings.Join(a.RiskTags, ","))
	row(tw, "timeout", a.TimeoutAt)
	if a.DecidedBy != "" {
		row(tw, "decided by", a.DecidedBy)
	}
	if len(a.Context) > 0 {
		row(tw, "context", string(a.Context))
	}
	for i, f := range a.Facts {
		label := ""
		if i == 0 {
			label = "facts"
		}
		row(tw, label, fmt.Sprintf("%s = %s  (%s)", f.Name, f.Value, f.Provenance))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return printEvents(w, a.Events)
}

func printEvents(w io.Writer, events []apitype.ApprovalEvent) error {
	tw := newTable(w)
	for _, e := range events {
		hashes := ""
		if e.ArgsHashAfter != "" {
			hashes = short(e.ArgsHashBefore) + " → " + short(e.ArgsHashAfter)
		}
		row(tw, "  "+e.At.Format("15:04:05.000"), e.Kind, e.Actor, hashes+restedOn(e.Detail))
	}
	return tw.Flush()
}

// restedOn names the facts an auto-approval rested on and who vouched for
// each; empty for any other event.
func restedOn(detail json.RawMessage) string {
	var r apitype.RestedOn
	if len(detail) == 0 || json.Unmarshal(detail, &r) != nil || len(r.Facts) == 0 {
		return ""
	}
	parts := make([]string, len(r.Facts))
	for i, f := range r.Facts {
		parts[i] = fmt.Sprintf("%s = %s vouched for by %s", f.Fact, f.Value, f.Provenance)
	}
	return "rested on " + strings.Join(parts, "; ")
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
