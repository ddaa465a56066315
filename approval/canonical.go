// Package approval is the approval gate for money and irreversible calls.
// It opens approval requests, holds a session while one is pending,
// decides who may decide and whether a modify's arguments pass, sets the
// token lifetime, and freezes arguments by canonical JSON hashing; the
// CEL auto-approval conditions are in approval/rule.
package approval

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth bounds nesting; real arguments are shallow, and a hostile
// document should not cost a deep recursion.
const maxDepth = 64

// Canonicalize returns the canonical JSON form of a call's arguments and the
// hex sha256 of that form. Two documents with the same logical content,
// whatever their key order or whitespace, canonicalize to the same bytes, so
// the hash identifies what an approver saw.
//
// The form follows RFC 8785 (JCS): object keys sorted by UTF-16 code units,
// no insignificant whitespace, strings escaped only where JSON requires it
// (no HTML escaping), and numbers written as ECMAScript would print the
// IEEE-754 double they denote ("4.50" → "4.5", "1E30" → "1e+30").
// One deliberate difference: a number written without fraction or exponent
// is kept exactly as written (bar "-0" → "0"), so an integer amount beyond
// 2^53 is never rounded. "100" and "1e2" still agree.
//
// Arguments are always an object; anything else is refused. So are inputs
// whose meaning a different parser could read differently: duplicate keys,
// invalid UTF-8 and unpaired surrogate escapes.
func Canonicalize(raw json.RawMessage) (canonical []byte, hashHex string, err error) {
	v, err := parse(raw)
	if err != nil {
		return nil, "", fmt.Errorf("error canonicalizing arguments: %w", err)
	}
	var b bytes.Buffer
	write(&b, v)
	sum := sha256.Sum256(b.Bytes())
	return b.Bytes(), hex.EncodeToString(sum[:]), nil
}

// The parsed document: object, []any, string, number, bool or nil.
type (
	object []member
	member struct {
		key   string
		value any
	}
	// number is a number already in canonical form.
	number string
)

func parse(raw []byte) (any, error) {
	if !utf8.Valid(raw) {
		return nil, errors.New("not valid UTF-8")
	}
	if err := checkSurrogates(raw); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	first, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("malformed JSON: %w", err)
	}
	if first != json.Delim('{') {
		return nil, fmt.Errorf("arguments must be a JSON object, not %s", describe(first))
	}
	v, err := parseObject(dec, 1)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("malformed JSON: data after the arguments object")
	}
	return v, nil
}

func parseValue(dec *json.Decoder, depth int) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("malformed JSON: %w", err)
	}
	switch t := tok.(type) {
	case json.Delim:
		if depth >= maxDepth {
			return nil, fmt.Errorf("nested deeper than %d levels", maxDepth)
		}
		switch t {
		case '{':
			return parseObject(dec, depth+1)
		case '[':
			return parseArray(dec, depth+1)
		}
		return nil, fmt.Errorf("malformed JSON: unexpected %q", t)
	case json.Number:
		return canonicalNumber(string(t))
	case string, bool, nil:
		return t, nil
	}
	return nil, fmt.Errorf("malformed JSON: unexpected token %v", tok)
}

// parseObject reads members up to the closing brace. Duplicate keys are
// refused: parsers disagree on which one wins, so an approver and an
// executor could read different arguments under one hash.
func parseObject(dec *json.Decoder, depth int) (object, error) {
	obj := object{}
	seen := make(map[string]bool)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("malformed JSON: %w", err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("malformed JSON: object key %v is not a string", tok)
		}
		if seen[key] {
			return nil, fmt.Errorf("duplicate key %q", key)
		}
		seen[key] = true
		v, err := parseValue(dec, depth)
		if err != nil {
			return nil, err
		}
		obj = append(obj, member{key: key, value: v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("malformed JSON: %w", err)
	}
	slices.SortFunc(obj, func(a, b member) int { return compareUTF16(a.key, b.key) })
	return obj, nil
}

func parseArray(dec *json.Decoder, depth int) ([]any, error) {
	arr := []any{}
	for dec.More() {
		v, err := parseValue(dec, depth)
		if err != nil {
			return nil, err
		}
		arr = append(arr, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("malformed JSON: %w", err)
	}
	return arr, nil
}

// compareUTF16 orders keys by UTF-16 code units, as RFC 8785 requires; it
// differs from byte order only for characters beyond U+FFFF.
func compareUTF16(a, b string) int {
	return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
}

// canonicalNumber writes an integer literal exactly and any other number as
// ECMAScript prints the double it denotes.
func canonicalNumber(lit string) (number, error) {
	if !strings.ContainsAny(lit, ".eE") {
		if lit == "-0" {
			return "0", nil
		}
		return number(lit), nil
	}
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil || math.IsInf(f, 0) {
		return "", fmt.Errorf("number %s is out of range", lit)
	}
	return number(formatES(f)), nil
}

// formatES is ECMAScript's Number.prototype.toString for finite doubles:
// the shortest digits that round-trip, positional between 1e-6 and 1e21,
// exponential outside it with no exponent padding.
func formatES(f float64) string {
	if f == 0 {
		return "0" // also -0
	}
	if abs := math.Abs(f); abs >= 1e-6 && abs < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	s := strconv.FormatFloat(f, 'e', -1, 64)
	mantissa, exp, _ := strings.Cut(s, "e")
	return mantissa + "e" + exp[:1] + strings.TrimLeft(exp[1:], "0")
}

func write(b *bytes.Buffer, v any) {
	switch v := v.(type) {
	case object:
		b.WriteByte('{')
		for i, m := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, m.key)
			b.WriteByte(':')
			write(b, m.value)
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			write(b, e)
		}
		b.WriteByte(']')
	case string:
		writeString(b, v)
	case number:
		b.WriteString(string(v))
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case nil:
		b.WriteString("null")
	}
}

// writeString escapes only what JSON requires: the quote, the backslash and
// control characters. Everything else, "<" and U+2028 included, is written
// as UTF-8.
func writeString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(b, `\u%04x`, r)
				continue
			}
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

// checkSurrogates refuses \u escapes that do not form a valid UTF-16 pair.
// The standard decoder turns each into U+FFFD, which would give distinct
// inputs one hash.
func checkSurrogates(raw []byte) error {
	inString := false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case c == '"':
			inString = !inString
		case c == '\\' && inString:
			if i+1 < len(raw) && raw[i+1] == 'u' {
				r, ok := hex4(raw, i+2)
				switch {
				case !ok:
				case utf16.IsSurrogate(r) && r < 0xDC00:
					low, ok := hex4(raw, i+8)
					if !ok || raw[i+6] != '\\' || raw[i+7] != 'u' || low < 0xDC00 || low > 0xDFFF {
						return fmt.Errorf("unpaired surrogate \\u%04x", r)
					}
					i += 6
				case utf16.IsSurrogate(r):
					return fmt.Errorf("unpaired surrogate \\u%04x", r)
				}
			}
			i++ // skip the escaped character
		}
	}
	return nil
}

// hex4 reads four hex digits at raw[at:].
func hex4(raw []byte, at int) (rune, bool) {
	if at+4 > len(raw) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(raw[at:at+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	return rune(n), true
}

func describe(tok json.Token) string {
	switch tok.(type) {
	case json.Delim:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	}
	return "null"
}
