package approval_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// restate writes canonical JSON again as another text of the same value:
// object keys in reverse order, whitespace between tokens, strings escaped
// the way encoding/json escapes them (\u003c for <, and so on), and numbers
// in exponent form (100 as 1e+02) wherever that names the same number. An
// approval's hash must not notice any of it.
func restate(canonical []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(canonical))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	restateValue(&b, v)
	return b.Bytes(), nil
}

func restateValue(b *bytes.Buffer, v any) {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		slices.Reverse(keys)
		b.WriteString("{ ")
		for i, k := range keys {
			if i > 0 {
				b.WriteString(" , ")
			}
			restateString(b, k)
			b.WriteString(" : ")
			restateValue(b, v[k])
		}
		b.WriteString(" }")
	case []any:
		b.WriteString("[ ")
		for i, e := range v {
			if i > 0 {
				b.WriteString(" ,\n")
			}
			restateValue(b, e)
		}
		b.WriteString(" ]")
	case string:
		restateString(b, v)
	case json.Number:
		b.WriteString(restateNumber(string(v)))
	default: // bool, nil
		out, _ := json.Marshal(v)
		b.Write(out)
	}
}

func restateString(b *bytes.Buffer, s string) {
	out, _ := json.Marshal(s) // escapes <, >, & and U+2028 unlike the canonical form
	b.Write(out)
}

// restateNumber rewrites a canonical number in exponent form when the two
// denote the same value under the canonical rules: integer literals are
// kept exactly, so only those a double holds exactly (at most 15 digits)
// may change form; any other number was already printed from a double.
func restateNumber(lit string) string {
	digits := strings.TrimPrefix(lit, "-")
	if !strings.ContainsAny(lit, ".eE") && len(digits) > 15 {
		return lit
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil {
		return lit
	}
	return strconv.FormatFloat(f, 'e', -1, 64)
}
