package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/maestro-run/maestro/apitype"
)

// listFlags adds the flags every listing takes: its page and its filters.
// statusHelp documents --status; empty leaves the flag to the caller.
func listFlags(cmd *cobra.Command, q *apitype.ListQuery, statusHelp string) {
	f := cmd.Flags()
	if statusHelp != "" {
		f.StringVar(&q.Status, "status", "", statusHelp)
	}
	f.StringVar(&q.Tool, "tool", "", "only rows of this tool")
	f.StringVar(&q.Agent, "agent", "", "only rows of this agent")
	f.StringVar(&q.NewerThan, "newer-than", "", "only rows at most this old: a duration (15m, 2h) or an RFC 3339 time")
	f.StringVar(&q.OlderThan, "older-than", "", "only rows older than this: a duration (15m, 2h) or an RFC 3339 time")
	f.StringVar(&q.Cursor, "cursor", "", "start after the page that printed this next cursor")
	f.IntVar(&q.Limit, "limit", 0, "rows per page, 1 to 500 (default 50)")
}

// flushPaged flushes a listing's table to w and ends it: how many rows
// match in all, and the cursor of the next page when there is one.
func flushPaged(tw *tabwriter.Writer, w io.Writer, shown int, p apitype.Paging) error {
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "%d of %d\n", shown, p.Total)
	if p.Next != "" {
		fmt.Fprintf(w, "next: --cursor %s\n", p.Next)
	}
	return nil
}
