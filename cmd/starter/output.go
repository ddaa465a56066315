package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"

	mt "github.com/maestro-run/maestro/maestrotype"
)

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func printObservation(w io.Writer, o mt.Observation) {
	fmt.Fprintf(w, "status      %s", o.Status)
	if o.Code != "" {
		fmt.Fprintf(w, " (%s)", o.Code)
	}
	fmt.Fprintf(w, "\nsummary     %s\n", o.Summary)
	if o.Wording != "" {
		fmt.Fprintf(w, "say         %q\n", o.Wording)
	}
	if r := o.Receipt; r != nil {
		fmt.Fprintf(w, "receipt     %s %s (%s)\n", r.Provider, r.ID, r.Status)
		keys := make([]string, 0, len(r.Fields))
		for k := range r.Fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(w, "  %-10s%s\n", k, r.Fields[k])
		}
	}
	if n := o.NextActions; n != nil {
		fmt.Fprintf(w, "root cause  %s\nremedy      %s\nstop when   %s\n", n.RootCause, n.Remediation, n.StopCondition)
	}
	if len(o.Payload) > 0 {
		fmt.Fprintf(w, "payload     %s\n", o.Payload)
	}
}
