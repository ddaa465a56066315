package grader

import (
	"encoding/json"
	"fmt"
	"strings"

	mt "github.com/maestro-run/maestro/maestrotype"
)

// SuccessRules are the contract a successful observation must keep: what
// the agent repeats to a person is backed by a receipt, traceable to its
// invocation, and small enough for the agent's context.
var SuccessRules = []Rule{
	codeRule,
	{"source", func(g Graded) string {
		src := g.Observation.Source
		switch {
		case src == nil:
			return "no source"
		case g.Tool != nil && src.Tool != g.Tool.Name:
			return fmt.Sprintf("source names tool %q, want %q", src.Tool, g.Tool.Name)
		case src.InvocationID == "" || src.OperationKey == "":
			return "source lacks the invocation ID or operation key"
		}
		return ""
	}},
	{"receipt", func(g Graded) string {
		r := g.Observation.Receipt
		if !performsEffect(g) {
			if r != nil {
				return fmt.Sprintf("a read carries a receipt from %s", r.Provider)
			}
			return ""
		}
		if r == nil || r.Provider == "" || r.ID == "" {
			return "a real-sync success without a receipt naming its provider and ID"
		}
		for _, name := range g.Tool.ReceiptFields {
			if _, ok := r.Fields[name]; !ok {
				return fmt.Sprintf("receipt lacks field %q the catalog declares", name)
			}
		}
		return ""
	}},
	{"payload-cap", func(g Graded) string {
		p := g.Observation.Payload
		if len(p) > mt.MaxPayloadBytes {
			return fmt.Sprintf("payload of %d bytes exceeds the %d-byte cap", len(p), mt.MaxPayloadBytes)
		}
		if len(p) > 0 && !json.Valid(p) {
			return "payload is not valid JSON"
		}
		return ""
	}},
	{"wording-from-receipt", func(g Graded) string {
		// Wording is rendered from the receipt: every receipt value the
		// catalog's success wording reads must appear in what was said.
		if !performsEffect(g) || g.Tool.Wording.Success == nil || g.Observation.Receipt == nil {
			return ""
		}
		for _, path := range g.Tool.Wording.Success.ReceiptPaths() {
			want := receiptValue(g.Observation.Receipt, path)
			if want != "" && !strings.Contains(g.Observation.Wording, want) {
				return fmt.Sprintf("wording %q omits .Receipt.%s (%q)", g.Observation.Wording, strings.Join(path, "."), want)
			}
		}
		return ""
	}},
	{"effect-held", func(g Graded) string {
		// A success says it was done; the receivers must agree.
		if performsEffect(g) && g.Effects == 0 {
			return "the observation claims success, but the providers hold no effect"
		}
		return ""
	}},
}

func performsEffect(g Graded) bool {
	return g.Tool != nil && g.Tool.Connector.PerformsEffect()
}

// receiptValue reads the receipt field a wording template path names.
func receiptValue(r *mt.Receipt, path []string) string {
	switch {
	case len(path) == 1 && path[0] == "ID":
		return r.ID
	case len(path) == 1 && path[0] == "Status":
		return r.Status
	case len(path) == 1 && path[0] == "Provider":
		return r.Provider
	case len(path) == 2 && path[0] == "Fields":
		return r.Fields[path[1]]
	}
	return ""
}
