package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"text/tabwriter"

	mt "github.com/maestro-run/maestro/maestrotype"
)

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// newTable aligns text output: each column is as wide as its widest cell,
// so a long key or value never runs into its neighbour.
func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
}

// row writes one row of cells to a table.
func row(w io.Writer, cells ...any) {
	for i, c := range cells {
		if i > 0 {
			fmt.Fprint(w, "\t")
		}
		fmt.Fprint(w, c)
	}
	fmt.Fprintln(w)
}

func printObservation(w io.Writer, o mt.Observation) error {
	tw := newTable(w)
	observationRows(tw, o)
	return tw.Flush()
}

// observationRows adds an observation's rows to a key/value table.
func observationRows(tw io.Writer, o mt.Observation) {
	status := string(o.Status)
	if o.Code != "" {
		status += " (" + string(o.Code) + ")"
	}
	row(tw, "status", status)
	row(tw, "summary", o.Summary)
	if o.Wording != "" {
		row(tw, "say", fmt.Sprintf("%q", o.Wording))
	}
	if r := o.Receipt; r != nil {
		row(tw, "receipt", fmt.Sprintf("%s %s (%s)", r.Provider, r.ID, r.Status))
		keys := make([]string, 0, len(r.Fields))
		for k := range r.Fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			row(tw, "  "+k, r.Fields[k])
		}
	}
	if n := o.NextActions; n != nil {
		row(tw, "root cause", n.RootCause)
		row(tw, "remedy", n.Remediation)
		row(tw, "stop when", n.StopCondition)
	}
	if len(o.Payload) > 0 {
		row(tw, "payload", string(o.Payload))
	}
}
