package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// schemaURL names the one resource each compiler holds; errors report
// schema locations relative to it.
const schemaURL = "urn:maestro:input-schema"

// A Schema is a tool's compiled JSON Schema (draft 2020-12 unless the
// schema says otherwise). Formats such as "email" are asserted, not merely
// annotated, so the agent hears about a malformed address before a
// provider does.
type Schema struct {
	raw      json.RawMessage
	doc      any
	compiled *jsonschema.Schema
}

// noLoader refuses every external reference: a catalog must not make the
// service read files or the network.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external reference %q is not allowed; inline it with $defs", url)
}

// CompileSchema compiles a JSON Schema for tool arguments. The schema must
// describe an object, because arguments always are one.
func CompileSchema(raw json.RawMessage) (*Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("error decoding schema: %w", err)
	}
	obj, ok := doc.(map[string]any)
	if !ok || obj["type"] != "object" {
		return nil, errors.New(`error compiling schema: arguments are a JSON object, so the schema needs type: object`)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(noLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, fmt.Errorf("error adding schema: %w", err)
	}
	compiled, err := c.Compile(schemaURL)
	if err != nil {
		return nil, fmt.Errorf("error compiling schema: %w", err)
	}
	return &Schema{raw: slices.Clone(raw), doc: doc, compiled: compiled}, nil
}

// JSON returns the schema as written, for advertising the tool to agents;
// nil for a nil schema.
func (s *Schema) JSON() json.RawMessage {
	if s == nil {
		return nil
	}
	return slices.Clone(s.raw)
}

// properties returns the top-level argument names the schema declares, or
// nil when it declares none.
func (s *Schema) properties() []string {
	return propertyNames(s.doc)
}

// required returns the top-level arguments the schema requires.
func (s *Schema) required() []string {
	obj, _ := s.doc.(map[string]any)
	list, _ := obj["required"].([]any)
	var out []string
	for _, v := range list {
		if name, ok := v.(string); ok {
			out = append(out, name)
		}
	}
	return out
}

// optionalAlong walks a path of argument names down the schema and returns
// the first one (dotted, from the top) that the schema does not require,
// or "" when every step is required and so present in any valid call.
func (s *Schema) optionalAlong(path []string) string {
	node := s.doc
	for i, name := range path {
		obj, _ := node.(map[string]any)
		list, _ := obj["required"].([]any)
		if !slices.Contains(list, any(name)) {
			return strings.Join(path[:i+1], ".")
		}
		node = property(node, name)
	}
	return ""
}

// acceptsString reports whether the named argument may be a string, so a
// template can fill it. An argument the schema does not type may be
// anything.
func (s *Schema) acceptsString(name string) bool {
	prop, _ := property(s.doc, name).(map[string]any)
	switch typ := prop["type"].(type) {
	case nil:
		return true
	case string:
		return typ == "string"
	case []any:
		return slices.Contains(typ, any("string"))
	}
	return false
}

func propertyNames(schema any) []string {
	obj, _ := schema.(map[string]any)
	props, _ := obj["properties"].(map[string]any)
	if props == nil {
		return nil
	}
	names := make([]string, 0, len(props))
	for name := range props {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// ArgsError reports arguments that do not fit a tool's input schema, with
// one violation per problem so the agent can fix them all in one retry.
type ArgsError struct {
	Tool       string
	Violations []ArgViolation
}

// ArgViolation is one problem with the arguments.
type ArgViolation struct {
	// Field is the JSON pointer of the offending value ("/to"); empty
	// means the arguments as a whole.
	Field string
	// Hint says what is wrong and how to fix it, in terms the agent can
	// act on.
	Hint string
}

func (e *ArgsError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "invalid arguments for %s:", e.Tool)
	for i, v := range e.Violations {
		if i > 0 {
			b.WriteString(";")
		}
		b.WriteString(" ")
		b.WriteString(v.Hint)
	}
	return b.String()
}

func (s *Schema) validate(tool string, raw json.RawMessage) error {
	args, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return &ArgsError{Tool: tool, Violations: []ArgViolation{{
			Hint: fmt.Sprintf("arguments must be one JSON object (%v); send {} when there are none", err),
		}}}
	}
	if _, ok := args.(map[string]any); !ok {
		return &ArgsError{Tool: tool, Violations: []ArgViolation{{
			Hint: fmt.Sprintf("arguments must be a JSON object, not %s", jsonType(args)),
		}}}
	}
	err = s.compiled.Validate(args)
	if err == nil {
		return nil
	}
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return fmt.Errorf("error validating arguments for %s: %w", tool, err)
	}
	ae := &ArgsError{Tool: tool}
	for _, leaf := range leaves(verr) {
		ae.Violations = append(ae.Violations, s.explain(leaf)...)
	}
	slices.SortStableFunc(ae.Violations, func(a, b ArgViolation) int { return strings.Compare(a.Field, b.Field) })
	ae.Violations = slices.Compact(ae.Violations)
	return ae
}

// leaves returns the errors that name a concrete problem; the inner nodes
// of the tree only say "a subschema failed".
func leaves(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

// explain turns one schema error into violations with fix hints. The
// schema's own description and examples make the best hints, so they are
// quoted whenever the failing property has them.
func (s *Schema) explain(e *jsonschema.ValidationError) []ArgViolation {
	at := e.InstanceLocation
	sub := s.subschema(e.SchemaURL)
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		var out []ArgViolation
		for _, name := range k.Missing {
			loc := append(slices.Clone(at), name)
			out = append(out, ArgViolation{
				Field: pointer(loc),
				Hint:  fmt.Sprintf("%s is required%s", quoteField(loc), describe(property(sub, name))),
			})
		}
		return out
	case *kind.AdditionalProperties:
		var out []ArgViolation
		for _, name := range k.Properties {
			loc := append(slices.Clone(at), name)
			hint := fmt.Sprintf("%s is not an accepted argument", quoteField(loc))
			if names := propertyNames(sub); len(names) > 0 {
				hint += "; accepted: " + strings.Join(names, ", ")
			}
			out = append(out, ArgViolation{Field: pointer(loc), Hint: hint})
		}
		return out
	case *kind.Pattern:
		return one(at, "must match %s%s", k.Want, describe(sub))
	case *kind.Type:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = article(w)
		}
		return one(at, "must be %s, not %s%s", strings.Join(want, " or "), article(k.Got), describe(sub))
	case *kind.Enum:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = fmt.Sprint(w)
		}
		return one(at, "must be one of %s", strings.Join(want, ", "))
	case *kind.Const:
		return one(at, "must be %v", k.Want)
	case *kind.MinLength:
		return one(at, "must be at least %d characters long, not %d%s", k.Want, k.Got, describe(sub))
	case *kind.MaxLength:
		return one(at, "must be at most %d characters long, not %d%s", k.Want, k.Got, describe(sub))
	case *kind.Minimum:
		return one(at, "must be at least %s, not %s%s", ratString(k.Want), ratString(k.Got), describe(sub))
	case *kind.Maximum:
		return one(at, "must be at most %s, not %s%s", ratString(k.Want), ratString(k.Got), describe(sub))
	case *kind.ExclusiveMinimum:
		return one(at, "must be greater than %s, not %s%s", ratString(k.Want), ratString(k.Got), describe(sub))
	case *kind.ExclusiveMaximum:
		return one(at, "must be less than %s, not %s%s", ratString(k.Want), ratString(k.Got), describe(sub))
	case *kind.Format:
		return one(at, "must be a valid %s%s", k.Want, describe(sub))
	}
	return []ArgViolation{{Field: pointer(at), Hint: fmt.Sprintf("%s: %s%s", quoteField(at), e.ErrorKind.LocalizedString(message.NewPrinter(language.English)), describe(sub))}}
}

// one is a single violation at loc whose hint starts with the field name.
func one(loc []string, format string, args ...any) []ArgViolation {
	return []ArgViolation{{Field: pointer(loc), Hint: quoteField(loc) + " " + fmt.Sprintf(format, args...)}}
}

// article names a JSON type for a sentence: "a string", "an integer".
func article(typ string) string {
	switch typ {
	case "integer", "array", "object":
		return "an " + typ
	case "null":
		return typ
	}
	return "a " + typ
}

func ratString(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// subschema resolves the schema location of an error within our document.
func (s *Schema) subschema(loc string) any {
	_, frag, ok := strings.Cut(loc, "#")
	if !ok {
		return nil
	}
	node := s.doc
	for _, tok := range strings.Split(strings.TrimPrefix(frag, "/"), "/") {
		if tok == "" {
			continue
		}
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch n := node.(type) {
		case map[string]any:
			node = n[tok]
		default:
			return nil
		}
	}
	return node
}

func property(schema any, name string) any {
	obj, _ := schema.(map[string]any)
	props, _ := obj["properties"].(map[string]any)
	return props[name]
}

// describe renders a schema's description and first example as a hint
// suffix: " (E.164 phone number, e.g. +15551234567)".
func describe(schema any) string {
	obj, _ := schema.(map[string]any)
	var parts []string
	if d, ok := obj["description"].(string); ok && d != "" {
		parts = append(parts, d)
	}
	if ex, ok := obj["examples"].([]any); ok && len(ex) > 0 {
		parts = append(parts, fmt.Sprintf("e.g. %v", ex[0]))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// pointer renders an instance location as a JSON pointer.
func pointer(loc []string) string {
	var b strings.Builder
	for _, tok := range loc {
		b.WriteString("/")
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(tok))
	}
	return b.String()
}

// quoteField names a location for a human: `address.unit`, or
// "the arguments" for the whole object.
func quoteField(loc []string) string {
	if len(loc) == 0 {
		return "the arguments"
	}
	return "`" + strings.Join(loc, ".") + "`"
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	}
	return "an object"
}
