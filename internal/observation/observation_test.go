package observation

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	mt "github.com/maestro-run/maestro/maestrotype"
)

func TestCapKeepsSmallPayloads(t *testing.T) {
	t.Parallel()
	require.JSONEq(t, `{"a":1}`, string(Cap(map[string]int{"a": 1})))
	require.Nil(t, Cap(nil))
}

func TestCapTruncatesLargePayloadsToValidJSON(t *testing.T) {
	t.Parallel()
	big := map[string]string{"blob": strings.Repeat("é", mt.MaxPayloadBytes)}
	got := Cap(big)
	require.LessOrEqual(t, len(got), mt.MaxPayloadBytes)
	require.True(t, json.Valid(got))
	var m map[string]any
	require.NoError(t, json.Unmarshal(got, &m))
	require.Equal(t, true, m["truncated"])
}

func TestErrorCarriesRecoveryContract(t *testing.T) {
	t.Parallel()
	o := Error(Failure{Code: mt.CodeInvalidArgs, Summary: "bad", RootCause: "r", Remediation: "fix", StopCondition: "stop"}, nil)
	require.Equal(t, mt.StatusError, o.Status)
	require.Equal(t, "r", o.NextActions.RootCause)
	require.Equal(t, "fix", o.NextActions.Remediation)
	require.Equal(t, "stop", o.NextActions.StopCondition)
}
