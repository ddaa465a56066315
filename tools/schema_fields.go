package tools

import (
	"encoding/json"
	"fmt"
	"slices"
)

// A Field is one top-level argument as a schema describes it, for tools
// that build a form from a tool's schema (the console's modify form). The
// schema stays the judge of validity; a Field only says how to ask.
type Field struct {
	Name        string
	Description string
	// Type is the JSON type: string, integer, number, boolean, or "" for
	// anything else (objects, arrays, untyped), which a form takes as JSON.
	Type     string
	Required bool
	Enum     []string
	// Minimum and Maximum are the numeric bounds, as written; "" if none.
	Minimum, Maximum string
	Pattern          string
	// MinLength and MaxLength bound strings; 0 if not set.
	MinLength, MaxLength int
}

// Fields lists the schema's top-level arguments in name order.
func (s *Schema) Fields() []Field {
	if s == nil {
		return nil
	}
	required := s.required()
	var out []Field
	for _, name := range s.properties() {
		prop, _ := property(s.doc, name).(map[string]any)
		f := Field{Name: name, Required: slices.Contains(required, name)}
		f.Description, _ = prop["description"].(string)
		if typ, ok := prop["type"].(string); ok {
			switch typ {
			case "string", "integer", "number", "boolean":
				f.Type = typ
			}
		}
		if list, ok := prop["enum"].([]any); ok {
			for _, v := range list {
				f.Enum = append(f.Enum, scalarText(v))
			}
		}
		f.Minimum, f.Maximum = optionalText(prop["minimum"]), optionalText(prop["maximum"])
		f.Pattern, _ = prop["pattern"].(string)
		f.MinLength, f.MaxLength = intOf(prop["minLength"]), intOf(prop["maxLength"])
		out = append(out, f)
	}
	return out
}

func scalarText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func optionalText(v any) string {
	if v == nil {
		return ""
	}
	return scalarText(v)
}

func intOf(v any) int {
	var n int
	switch x := v.(type) {
	case json.Number:
		i, _ := x.Int64()
		n = int(i)
	case float64:
		n = int(x)
	case string:
		_, _ = fmt.Sscan(x, &n)
	}
	return n
}
