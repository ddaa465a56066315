package approval_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/approval"
)

func canonical(t *testing.T, raw string) (string, string) {
	t.Helper()
	c, h, err := approval.Canonicalize(json.RawMessage(raw))
	require.NoError(t, err, raw)
	return string(c), h
}

func TestCanonicalizeIgnoresOrderAndWhitespace(t *testing.T) {
	t.Parallel()
	a, ha := canonical(t, `{"to":"+15551234567","body":"hi","meta":{"b":[1,2],"a":true}}`)
	b, hb := canonical(t, "{\n  \"meta\" : { \"a\" : true , \"b\" : [ 1 , 2 ] },\n  \"body\": \"hi\",\t\"to\": \"+15551234567\"\n}")
	require.Equal(t, `{"body":"hi","meta":{"a":true,"b":[1,2]},"to":"+15551234567"}`, a)
	require.Equal(t, a, b)
	require.Equal(t, ha, hb)

	sum := sha256.Sum256([]byte(a))
	require.Equal(t, hex.EncodeToString(sum[:]), ha)
}

func TestCanonicalizeDistinguishesValues(t *testing.T) {
	t.Parallel()
	_, base := canonical(t, `{"amount_cents":12500,"tenant_id":"t_1"}`)
	for _, other := range []string{
		`{"amount_cents":12501,"tenant_id":"t_1"}`,
		`{"amount_cents":"12500","tenant_id":"t_1"}`,
		`{"amount_cents":12500,"tenant_id":"t_2"}`,
		`{"amount_cents":12500,"tenant_id":"t_1","note":null}`,
		`{"amount_cents":[12500],"tenant_id":"t_1"}`,
	} {
		_, h := canonical(t, other)
		require.NotEqual(t, base, h, other)
	}
}

func TestCanonicalizeNumbers(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		`0`:                     `0`,
		`-0`:                    `0`,
		`-0.0`:                  `0`,
		`100`:                   `100`,
		`1e2`:                   `100`,
		`1.0`:                   `1`,
		`4.50`:                  `4.5`,
		`0.1`:                   `0.1`,
		`2e-3`:                  `0.002`,
		`1e-7`:                  `1e-7`,
		`1E30`:                  `1e+30`,
		`1e21`:                  `1e+21`,
		`123456789012345678901`: `123456789012345678901`,
		`333333333.33333329`:    `333333333.3333333`,
	}
	for in, want := range cases {
		got, _ := canonical(t, `{"n":`+in+`}`)
		require.Equal(t, `{"n":`+want+`}`, got, in)
	}
	_, _, err := approval.Canonicalize(json.RawMessage(`{"n":1e400}`))
	require.ErrorContains(t, err, "out of range")
}

func TestCanonicalizeStrings(t *testing.T) {
	t.Parallel()
	got, _ := canonical(t, `{"s":"<b>&amp;</b> caf\u00e9 \u2028 \u001f \t \/ \" \\"}`)
	require.Equal(t, "{\"s\":\"<b>&amp;</b> café \u2028 \\u001f \\t / \\\" \\\\\"}", got)

	got, _ = canonical(t, `{"s":"\ud83d\ude00"}`)
	require.Equal(t, `{"s":"😀"}`, got)
}

// TestCanonicalizeRFC8785 checks the worked example of RFC 8785 section
// 3.2.3 and its key-ordering example.
func TestCanonicalizeRFC8785(t *testing.T) {
	t.Parallel()
	got, _ := canonical(t, `{
	  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
	  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
	  "literals": [null, true, false]
	}`)
	require.Equal(t, `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`, got)

	got, _ = canonical(t, `{"\u20ac":"Euro","\r":"Carriage Return","\ufb33":"Hebrew","1":"One","\ud83d\ude00":"Emoji","\u0080":"Control","\u00f6":"Latin"}`)
	require.Equal(t, "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"ö\":\"Latin\",\"€\":\"Euro\",\"😀\":\"Emoji\",\"\ufb33\":\"Hebrew\"}", got)
}

func TestCanonicalizeRefuses(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		`[1,2]`:                          "must be a JSON object, not an array",
		`"hi"`:                           "must be a JSON object, not a string",
		`42`:                             "must be a JSON object, not a number",
		`null`:                           "must be a JSON object, not null",
		``:                               "malformed JSON",
		`{"a":`:                          "malformed JSON",
		`{"a":1,}`:                       "malformed JSON",
		`{"a":1} {"b":2}`:                "data after the arguments object",
		`{"a":1,"a":2}`:                  `duplicate key "a"`,
		`{"x":{"a":1,"a":1}}`:            `duplicate key "a"`,
		"{\"a\":\"\xff\"}":               "not valid UTF-8",
		`{"a":"\ud800"}`:                 "unpaired surrogate",
		`{"a":"\udc00"}`:                 "unpaired surrogate",
		`{"a":"\ud800\u0041"}`:           "unpaired surrogate",
		`{"a":` + deep(maxNesting) + `}`: "nested deeper",
	}
	for in, want := range cases {
		_, _, err := approval.Canonicalize(json.RawMessage(in))
		require.ErrorContains(t, err, want, in)
		require.ErrorContains(t, err, "error canonicalizing arguments")
	}
}

const maxNesting = 64

func deep(n int) string {
	return strings.Repeat("[", n) + strings.Repeat("]", n)
}

func TestCanonicalizeAllowsReasonableNesting(t *testing.T) {
	t.Parallel()
	got, _ := canonical(t, `{"a":`+deep(maxNesting-2)+`}`)
	require.Equal(t, `{"a":`+deep(maxNesting-2)+`}`, got)
	got, _ = canonical(t, `{}`)
	require.Equal(t, `{}`, got)
}

func FuzzCanonicalize(f *testing.F) {
	for _, seed := range []string{
		`{}`,
		`{"to":"+15551234567","body":"hi"}`,
		`{"b":1,"a":[1.5,-0,1e21,{"y":null,"x":false}]}`,
		`{"s":"\u2028<&>\ud83d\ude00\u0000"}`,
		`{"n":123456789012345678901234567890}`,
		`{"a":1,"a":2}`,
		`[1]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, h, err := approval.Canonicalize(raw)
		if err != nil {
			return
		}
		require.True(t, json.Valid(raw), "accepted invalid JSON %q", raw)
		require.True(t, json.Valid(c), "produced invalid JSON %q", c)
		again, h2, err := approval.Canonicalize(c)
		require.NoError(t, err, "canonical form %q refused", c)
		require.Equal(t, string(c), string(again), "not idempotent")
		require.Equal(t, h, h2)

		// Equal values hash equally however they are written.
		variant, err := restate(c)
		require.NoError(t, err)
		vc, vh, err := approval.Canonicalize(variant)
		require.NoError(t, err, "restated form %q refused", variant)
		require.Equal(t, string(c), string(vc), "restated %q", variant)
		require.Equal(t, h, vh)
	})
}
