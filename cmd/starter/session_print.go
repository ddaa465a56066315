package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"

	"github.com/maestro-run/maestro/apitype"
)

// printSession writes a session as text: its header, then one section
// each for calls, the undo stack, deferred work and post-call deliveries.
func printSession(w io.Writer, s apitype.Session) error {
	if err := printSessionHeader(w, s); err != nil {
		return err
	}
	return errors.Join(
		printSection(w, "calls:", func(tw io.Writer) { callRows(tw, s.Calls) }),
		printSection(w, "undo stack (runs top first):", func(tw io.Writer) { undoRows(tw, s.UndoStack) }),
		printSection(w, "deferred:", func(tw io.Writer) { deferredRows(tw, s.Deferred) }),
		printSection(w, "post-call:", func(tw io.Writer) { postCallRows(tw, s.PostCall) }),
	)
}

func printSessionHeader(w io.Writer, s apitype.Session) error {
	tw := newTable(w)
	row(tw, "session", s.SessionID)
	row(tw, "agent", s.AgentID)
	row(tw, "state", s.State)
	if s.HaltStep != "" {
		row(tw, "halted at", s.HaltStep+": "+s.HaltReason)
	}
	if s.ResolvedBy != "" {
		how := ""
		switch s.Resolution {
		case "by_hand":
			how = " (compensated by hand)"
		case "retry":
			how = " (rollback retried)"
		}
		row(tw, "resolved by", s.ResolvedBy+how+": "+s.ResolveReason)
	}
	names := slices.Sorted(maps.Keys(s.Facts))
	for i, name := range names {
		label := ""
		if i == 0 {
			label = "facts"
		}
		row(tw, label, fmt.Sprintf("%s = %s  (%s)", name, s.Facts[name], s.FactProvenance[name]))
	}
	return tw.Flush()
}

// printSection writes a titled section as its own table, so a long cell
// in one section does not widen the others.
func printSection(w io.Writer, title string, rows func(tw io.Writer)) error {
	fmt.Fprintln(w, title)
	tw := newTable(w)
	rows(tw)
	return tw.Flush()
}

func callRows(tw io.Writer, calls []apitype.SessionCall) {
	for _, c := range calls {
		row(tw, "  "+c.Tool, c.State, c.OperationKey, c.Summary)
		if c.Receipt != nil {
			row(tw, "", "receipt", c.Receipt.ID)
		}
		if c.Delivery != nil {
			row(tw, "", "delivery", describeDelivery(c.Delivery))
		}
		if c.FollowUp != "" {
			row(tw, "", "FOLLOW UP", c.FollowUp)
		}
	}
}

func undoRows(tw io.Writer, undo []apitype.UndoEntry) {
	for _, u := range undo {
		row(tw, fmt.Sprintf("  #%d", u.Seq), u.Tool, u.Status, "for "+u.OperationKey, u.Detail)
		if u.Receipt != nil {
			row(tw, "", "receipt", u.Receipt.ID)
		}
	}
}

func deferredRows(tw io.Writer, deferred []apitype.DeferredItem) {
	for _, d := range deferred {
		rid := ""
		if d.Receipt != nil {
			rid = d.Receipt.ID
		}
		row(tw, "  "+d.Tool, d.Status, rid, d.Reason)
	}
}

func postCallRows(tw io.Writer, items []apitype.PostCallItem) {
	for _, p := range items {
		rid := ""
		if p.Receipt != nil {
			rid = p.Receipt.ID
		}
		row(tw, "  "+p.Key, p.Tool, p.Status, rid, p.Reason)
		// The delivery chain: each attempt, channel by channel.
		for _, a := range p.Attempts {
			row(tw, "    #"+strconv.Itoa(a.N), a.Tool, a.Outcome, a.OperationKey, a.Summary)
			if a.ResolvedBy != "" {
				row(tw, "", "", "settled by "+a.ResolvedBy, "", a.Resolution)
			}
		}
	}
}
