package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/maestro-run/maestro/apitype"
)

func newSessionListCmd(g *globals) *cobra.Command {
	q := apitype.ListQuery{}
	list := &cobra.Command{
		Use:   "list",
		Short: "List sessions, a page at a time, newest first (operator key)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out, err := g.client().Sessions(cmd.Context(), q)
			if err != nil {
				return refusalOr(cmd, g, err)
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), out)
			}
			tw := newTable(cmd.OutOrStdout())
			fmt.Fprintln(tw, "SESSION\tAGENT\tSTATE\tSTARTED\tHALTED AT")
			for _, s := range out.Sessions {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.SessionID, s.AgentID, s.State, s.CreatedAt.Format("2006-01-02 15:04:05Z"), s.HaltStep)
			}
			return flushPaged(tw, cmd.OutOrStdout(), len(out.Sessions), out.Paging)
		},
	}
	listFlags(list, &q, "active, halted or ended; empty for all")
	return list
}

func newRefusalsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "refusals",
		Aliases: []string{"refusal"},
		Short:   "Read the refusal log: calls and requests refused before anything ran (operator key)",
	}
	q := apitype.ListQuery{}
	list := &cobra.Command{
		Use:   "list",
		Short: "List refusals, a page at a time, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out, err := g.client().Refusals(cmd.Context(), q)
			if err != nil {
				return refusalOr(cmd, g, err)
			}
			if g.json {
				return printJSON(cmd.OutOrStdout(), out)
			}
			tw := newTable(cmd.OutOrStdout())
			fmt.Fprintln(tw, "AT\tCODE\tAGENT\tSESSION\tTOOL\tDETAIL")
			for _, r := range out.Refusals {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.At.Format("2006-01-02 15:04:05Z"), r.Code, orNone(r.AgentID), orNone(r.SessionID), orNone(r.Tool), r.Detail)
			}
			return flushPaged(tw, cmd.OutOrStdout(), len(out.Refusals), out.Paging)
		},
	}
	listFlags(list, &q, "only refusals with this code, e.g. agent_cap_reached")
	cmd.AddCommand(list)
	return cmd
}
