package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apitype"
	mt "github.com/maestro-run/maestro/maestrotype"
)

func TestStateReadsPrintSideBySide(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 2, 6, 30, 0, 0, time.UTC)
	var out bytes.Buffer
	require.NoError(t, printStateReads(&out, &apitype.StateReads{
		Before: &mt.StateRead{Source: "tool lookup_tenant", Found: true, State: json.RawMessage(`{"id":"t_1","deleted":false}`), ReadAt: at},
		After:  &mt.StateRead{Source: "tool lookup_tenant", Error: "sandbox unknown (HTTP 500 ): down", ReadAt: at},
	}))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	// Each line is before, then " | " at one column, then after.
	head := "before: tool lookup_tenant at 2026-12-02 06:30:00Z"
	require.Equal(t, head+" | after: tool lookup_tenant at 2026-12-02 06:30:00Z", lines[0])
	left := []string{head, "{", `  "id": "t_1",`, `  "deleted": false`, "}"}
	right := []string{"", "read failed: sandbox unknown (HTTP 500 ): down", "", "", ""}
	require.Len(t, lines, len(left))
	for i := 1; i < len(lines); i++ {
		want := left[i] + strings.Repeat(" ", len(head)-len(left[i])) + " | " + right[i]
		require.Equal(t, strings.TrimRight(want, " "), lines[i])
	}

	out.Reset()
	require.NoError(t, printStateReads(&out, &apitype.StateReads{
		After: &mt.StateRead{Source: "GET sandbox /v1/x", Found: false, ReadAt: at},
	}))
	require.Contains(t, out.String(), "(not read)")
	require.Contains(t, out.String(), "| (not found)")

	out.Reset()
	require.NoError(t, printStateReads(&out, nil))
	require.Empty(t, out.String())
}
