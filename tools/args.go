package tools

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// RenderArgs renders the arguments of a call maestro makes on its own
// behalf, such as a post-call delivery, as a JSON object of strings.
//
// Every argument is optional by construction: a top-level .Args or
// .Session value a template reads that the call did not supply (or
// supplied as null) reads as empty, and an argument that renders empty is
// left out. An optional callback number therefore needs no template logic,
// and the target tool's input schema alone decides whether a missing value
// is acceptable. Typed values are out of reach: a template places strings.
func RenderArgs(args map[string]*Template, data TemplateData) (json.RawMessage, error) {
	out := make(map[string]string, len(args))
	// Sorted, so the same inputs fail on the same argument every time.
	for _, name := range slices.Sorted(maps.Keys(args)) {
		t := args[name]
		v, err := t.Execute(absentAsEmpty(t, data))
		if err != nil {
			return nil, fmt.Errorf("error rendering argument %s: %w", name, err)
		}
		if v != "" {
			out[name] = v
		}
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("error encoding arguments: %w", err)
	}
	return raw, nil
}

// absentAsEmpty returns data with every top-level .Args and .Session key
// the template reads present, absent ones as "". The caller's maps are
// never written to.
func absentAsEmpty(t *Template, data TemplateData) TemplateData {
	var argsCopied, sessionCopied bool
	for _, path := range t.paths() {
		if len(path) < 2 {
			continue
		}
		switch path[0] {
		case rootArgs:
			data.Args = withEmpty(data.Args, path[1], &argsCopied)
		case rootSession:
			data.Session = withEmpty(data.Session, path[1], &sessionCopied)
		}
	}
	return data
}

func withEmpty(m map[string]any, key string, copied *bool) map[string]any {
	if m[key] != nil {
		return m
	}
	if !*copied {
		m = maps.Clone(m)
		if m == nil {
			m = make(map[string]any)
		}
		*copied = true
	}
	m[key] = ""
	return m
}
