package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"text/template"
	"text/template/parse"

	"github.com/maestro-run/maestro/maestrotype"
)

// TemplateData is what every catalog template sees: connector settings,
// compensation arguments and wording.
type TemplateData struct {
	// Args are the call's arguments. Decode them with DecodeArgs so numbers
	// keep their exact JSON form.
	Args map[string]any
	// Receipt is the proof of the effect. It is nil until a real-sync call
	// has been performed, so templates rendered before the effect (connector
	// settings, pending and failure wording) cannot read it.
	Receipt *maestrotype.Receipt
	// Payload is the provider's decoded response. Like the receipt, it
	// exists only once the call has run, so only success wording reads it.
	Payload any
	// Session holds facts about the conversation, keyed in snake_case like
	// the approval conditions that read them ("caller_number", "tenant_id").
	// Tool templates get only "id"; post-call arguments get the session's
	// declared facts (see SessionFact).
	Session map[string]any
	// OperationKey identifies the business effect.
	OperationKey string
	// Parts holds the receipt of each part of a composite tool that went
	// out, by part name ("sms", "email"); parts without a receipt are
	// absent. Only success and partial wording read it.
	Parts map[string]*maestrotype.Receipt
}

// Template roots: the fields of TemplateData a template may start from.
const (
	rootArgs         = "Args"
	rootReceipt      = "Receipt"
	rootPayload      = "Payload"
	rootSession      = "Session"
	rootOperationKey = "OperationKey"
	rootParts        = "Parts"
)

// templateFuncs is deliberately tiny: templates place values, they do not
// compute them.
var templateFuncs = template.FuncMap{
	// pathescape keeps an argument inside one URL path segment.
	"pathescape": url.PathEscape,
}

// A Template is one catalog template, parsed when the catalog loads so a
// broken template never waits for its first call to fail. Execution treats
// a missing map key as an error rather than printing "<no value>".
type Template struct {
	src  string
	tmpl *template.Template
}

// ParseTemplate parses src as a Go text/template.
func ParseTemplate(name, src string) (*Template, error) {
	t, err := template.New(name).Option("missingkey=error").Funcs(templateFuncs).Parse(src)
	if err != nil {
		return nil, fmt.Errorf("error parsing template %s: %w", name, err)
	}
	return &Template{src: src, tmpl: t}, nil
}

// MustParseTemplate is ParseTemplate for templates known to be valid, such
// as those written in tests.
func MustParseTemplate(name, src string) *Template {
	t, err := ParseTemplate(name, src)
	if err != nil {
		panic(err)
	}
	return t
}

// String returns the template's source.
func (t *Template) String() string {
	return t.src
}

// Execute renders the template.
func (t *Template) Execute(data TemplateData) (string, error) {
	var b strings.Builder
	if err := t.tmpl.Execute(&b, data); err != nil {
		return "", fmt.Errorf("error rendering template %s: %w", t.tmpl.Name(), err)
	}
	return b.String(), nil
}

// References reports whether the template reads the given root of
// TemplateData, e.g. References("Receipt").
func (t *Template) References(root string) bool {
	for _, path := range t.paths() {
		if path[0] == root {
			return true
		}
	}
	return false
}

// ReceiptPaths lists the receipt fields the template reads, each as its
// path below .Receipt: [ID], [Status], [Fields message_sid].
func (t *Template) ReceiptPaths() [][]string {
	var out [][]string
	for _, path := range t.paths() {
		if path[0] == "Receipt" && len(path) > 1 {
			out = append(out, slices.Clone(path[1:]))
		}
	}
	return out
}

// literal reports whether the template has no actions, so its source is
// its value and can be checked when the catalog loads.
func (t *Template) literal() bool {
	for _, n := range t.tmpl.Tree.Root.Nodes {
		if n.Type() != parse.NodeText {
			return false
		}
	}
	return true
}

// paths lists every field path the template reads from the root of
// TemplateData, e.g. [Receipt Fields message_sid]. Fields read relative to
// a dot rebound by with or range are not rooted and are left out.
func (t *Template) paths() [][]string {
	var out [][]string
	var walk func(n parse.Node, rooted bool)
	walkList := func(l *parse.ListNode, rooted bool) {
		if l == nil {
			return
		}
		for _, n := range l.Nodes {
			walk(n, rooted)
		}
	}
	walkPipe := func(p *parse.PipeNode, rooted bool) {
		if p == nil {
			return
		}
		for _, c := range p.Cmds {
			walk(c, rooted)
		}
	}
	walk = func(n parse.Node, rooted bool) {
		switch n := n.(type) {
		case *parse.ListNode:
			walkList(n, rooted)
		case *parse.ActionNode:
			walkPipe(n.Pipe, rooted)
		case *parse.PipeNode:
			walkPipe(n, rooted)
		case *parse.CommandNode:
			for _, a := range n.Args {
				walk(a, rooted)
			}
		case *parse.ChainNode:
			walk(n.Node, rooted)
		case *parse.FieldNode:
			if rooted {
				out = append(out, n.Ident)
			}
		case *parse.VariableNode:
			// $ is the root whatever the dot currently is.
			if len(n.Ident) > 1 && n.Ident[0] == "$" {
				out = append(out, n.Ident[1:])
			}
		case *parse.IfNode:
			walkPipe(n.Pipe, rooted)
			walkList(n.List, rooted)
			walkList(n.ElseList, rooted)
		case *parse.WithNode:
			walkPipe(n.Pipe, rooted)
			walkList(n.List, false)
			walkList(n.ElseList, rooted)
		case *parse.RangeNode:
			walkPipe(n.Pipe, rooted)
			walkList(n.List, false)
			walkList(n.ElseList, rooted)
		case *parse.TemplateNode:
			walkPipe(n.Pipe, rooted)
		}
	}
	walkList(t.tmpl.Tree.Root, true)
	return out
}

// DecodeArgs decodes a call's arguments for TemplateData, keeping numbers
// as json.Number so an amount renders exactly as the agent sent it.
func DecodeArgs(raw json.RawMessage) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var args map[string]any
	if err := dec.Decode(&args); err != nil {
		return nil, fmt.Errorf("error decoding arguments: %w", err)
	}
	if args == nil {
		return nil, errors.New("error decoding arguments: want a JSON object, got null")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("error decoding arguments: trailing data after the JSON object")
	}
	return args, nil
}
