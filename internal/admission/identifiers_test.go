package admission

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apitype"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// A derived key keeps the rule whatever the lengths of the IDs it is made
// of, stays the same for the same call and differs between calls.
func TestDerivedKeyKeepsTheRule(t *testing.T) {
	t.Parallel()
	hash := strings.Repeat("ab", 32)
	read := &tools.Tool{Name: strings.Repeat("t", 64), Effect: mt.EffectRead}
	write := &tools.Tool{Name: "send_sms", Effect: mt.EffectWrite}
	long := strings.Repeat("s", mt.MaxIdentifierLen)

	short := derivedKey(Request{SessionID: "call-1"}, write, hash)
	require.Equal(t, "call-1:send_sms:"+hash[:derivedKeyHashLen], short, "short keys are derived as they always were")

	for _, req := range []Request{
		{SessionID: long},
		{SessionID: long, ToolCallID: long},
		{SessionID: "call-1", ToolCallID: long},
	} {
		for _, tool := range []*tools.Tool{read, write} {
			key := derivedKey(req, tool, hash)
			require.NoError(t, mt.CheckIdentifier("operation_key", key))
			require.Equal(t, key, derivedKey(req, tool, hash), "the same call names the same effect")
			other := req
			other.ToolCallID += "x"
			if tool == read {
				require.NotEqual(t, key, derivedKey(other, tool, hash), "a read's key carries its call")
			}
			require.NotEqual(t, key, derivedKey(req, tool, strings.Repeat("cd", 32)), "other arguments, another effect")
		}
	}
}

// The post-call agent's keys are maestro's own, longer than an agent's
// may be, and still held to a bound and to printable ASCII.
func TestPostCallKeys(t *testing.T) {
	t.Parallel()
	write := &tools.Tool{Name: "send_sms", Effect: mt.EffectWrite}
	long := strings.Repeat("s", mt.MaxIdentifierLen)
	held := "postcall:" + long + ":item_1/3"
	key, err := operationKey(Request{SessionID: long, OperationKey: held}, write, strings.Repeat("ab", 32), true)
	require.NoError(t, err)
	require.Equal(t, held, key)

	for _, bad := range []string{strings.Repeat("k", maxMaestroKeyLen+1), "postcall:a b:c", "postcall:a\n:c"} {
		_, err := operationKey(Request{SessionID: "s", OperationKey: bad}, write, strings.Repeat("ab", 32), true)
		require.Error(t, err, "%.40q", bad)
	}
	require.NotNil(t, checkIdentifiers(Request{SessionID: "s", OperationKey: held}, false), "an agent may not use a '/' in its key")
	require.Nil(t, checkIdentifiers(Request{SessionID: "s", OperationKey: held}, true))
}

// A read or a repeatable tool called with neither an operation key nor a
// tool-call ID is refused with a 400 that names both fields, not as a
// malformed request.
func TestKeylessRepeatingCallNamesWhatIsMissing(t *testing.T) {
	t.Parallel()
	hash := strings.Repeat("ab", 32)
	for _, tool := range []*tools.Tool{
		{Name: "lookup_tenant", Effect: mt.EffectRead},
		{Name: "send_sms", Effect: mt.EffectWrite, Repeatable: true},
	} {
		_, err := operationKey(Request{SessionID: "call-1"}, tool, hash, false)
		var ref *apitype.Refusal
		require.ErrorAs(t, err, &ref, tool.Name)
		require.Equal(t, 400, ref.HTTPStatus)
		require.Equal(t, mt.CodeInvalidRequest, ref.Observation.Code)
		require.Equal(t, "operation_key or tool_call_id is required to call "+tool.Name+"; nothing was run", ref.Observation.Summary)
		require.Contains(t, ref.Observation.NextActions.Remediation, "tool_call_id")

		key, err := operationKey(Request{SessionID: "call-1", ToolCallID: "call_7"}, tool, hash, false)
		require.NoError(t, err, "a tool-call ID is enough")
		require.True(t, strings.HasSuffix(key, ":call_7"))
	}
	_, err := operationKey(Request{SessionID: "call-1"}, &tools.Tool{Name: "send_sms", Effect: mt.EffectWrite}, hash, false)
	require.NoError(t, err, "a write that does not repeat derives its key from the arguments")
}
