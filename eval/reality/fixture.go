package reality

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"text/template"

	mt "github.com/maestro-run/maestro/maestrotype"
)

// argsData is what a fixture's argument templates see.
type argsData struct {
	// Receipts are the receipts of the tools that passed earlier in the
	// run, by tool name.
	Receipts map[string]*mt.Receipt
	Session  map[string]any
}

// readData is what a fixture's read path sees.
type readData struct {
	Receipt *mt.Receipt
	Args    map[string]any
}

// render executes one fixture template. A missing key is an error, never
// "<no value>", so a reference to a receipt the run does not hold fails
// the tool instead of calling the provider with garbage.
func render(name, src string, data any) (string, error) {
	t, err := template.New(name).Option("missingkey=error").
		Funcs(template.FuncMap{"pathescape": url.PathEscape}).Parse(src)
	if err != nil {
		return "", fmt.Errorf("error parsing %s: %w", name, err)
	}
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		return "", fmt.Errorf("error rendering %s: %w", name, err)
	}
	return b.String(), nil
}

// renderArgs renders every string in the fixture's arguments, at any
// depth, and encodes the result as the JSON an agent would send.
func renderArgs(args map[string]any, data argsData) (json.RawMessage, error) {
	out, err := renderValue("args", args, data)
	if err != nil {
		return nil, err
	}
	if out == nil {
		out = map[string]any{}
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("error encoding args: %w", err)
	}
	return raw, nil
}

func renderValue(path string, v any, data argsData) (any, error) {
	switch t := v.(type) {
	case string:
		return render(path, t, data)
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, item := range t {
			r, err := renderValue(path+"."+k, item, data)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	case []any:
		out := make([]any, len(t))
		for i, item := range t {
			r, err := renderValue(fmt.Sprintf("%s[%d]", path, i), item, data)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	default:
		return v, nil
	}
}
