package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/maestro-run/maestro/apitype"
	mt "github.com/maestro-run/maestro/maestrotype"
)

// printStateReads prints a write's before and after reads side by side,
// before on the left, so a reader sees what the write changed at a glance.
func printStateReads(w io.Writer, r *apitype.StateReads) error {
	if r == nil {
		return nil
	}
	left := stateReadLines("before", r.Before)
	right := stateReadLines("after", r.After)
	width := 0
	for _, l := range left {
		width = max(width, utf8.RuneCountInString(l))
	}
	var b strings.Builder
	b.WriteString("\n")
	for i := range max(len(left), len(right)) {
		var l, rt string
		if i < len(left) {
			l = left[i]
		}
		if i < len(right) {
			rt = right[i]
		}
		pad := strings.Repeat(" ", width-utf8.RuneCountInString(l))
		b.WriteString(strings.TrimRight(l+pad+" | "+rt, " ") + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// stateReadLines renders one read as a column: a heading naming it, then
// the state it saw, indented JSON, or why it saw none.
func stateReadLines(name string, r *mt.StateRead) []string {
	if r == nil {
		return []string{name, "(not read)"}
	}
	head := fmt.Sprintf("%s: %s at %s", name, r.Source, r.ReadAt.UTC().Format("2006-01-02 15:04:05Z"))
	switch {
	case r.Failed():
		return []string{head, "read failed: " + r.Error}
	case !r.Found:
		return append([]string{head, "(not found)"}, jsonLines(r.State)...)
	}
	return append([]string{head}, jsonLines(r.State)...)
}

func jsonLines(raw json.RawMessage) []string {
	if len(raw) == 0 {
		return nil
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return []string{string(raw)}
	}
	return strings.Split(b.String(), "\n")
}
