package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	mt "github.com/maestro-run/maestro/maestrotype"
)

// The CLI refuses, before sending anything, every identifier maestro
// would refuse, naming the flag or argument and the rule. The server it
// is pointed at listens nowhere: a request that went out would fail with
// a connection error instead.
func TestCLIRefusesIdentifiersBeforeSending(t *testing.T) {
	t.Parallel()
	hostile := map[string]string{
		"path traversal":   "x/../../approvals/a/approve?",
		"backslash":        `x\y`,
		"space":            "call 1",
		"control":          "call\n1",
		"non-ASCII":        "caf\u00e9",
		"dot-dot":          "..",
		"1,200 characters": strings.Repeat("k", 1200),
		"5,000 characters": strings.Repeat("k", 5000),
	}
	const nowhere = "http://127.0.0.1:1"
	for name, id := range hostile {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for _, tc := range []struct {
				field string
				args  []string
			}{
				{"--session", []string{"invocations", "invoke", "lookup_tenant", "--session", id}},
				{"--operation-key", []string{"invocations", "invoke", "lookup_tenant", "--session", "call-1", "--operation-key", id}},
				{"--tool-call-id", []string{"invocations", "invoke", "lookup_tenant", "--session", "call-1", "--tool-call-id", id}},
				{"session ID", []string{"sessions", "show", id}},
				{"session ID", []string{"sessions", "end", id}},
				{"session ID", []string{"sessions", "rollback", id}},
				{"session ID", []string{"sessions", "resolve", id, "--reason", "fixed by hand"}},
				{"session ID", []string{"sessions", "set-fact", id, "caller_number", "+14155550100"}},
			} {
				_, stderr, code := run(t, append(tc.args, "--server", nowhere, "--key", "k")...)
				require.Equal(t, 1, code, "%s: %s", tc.args[:2], stderr)
				require.Contains(t, stderr, tc.field+" ", tc.args[:2])
				require.Contains(t, stderr, mt.IdentifierRule, tc.args[:2])
				require.NotContains(t, stderr, "connect", "nothing was sent")
			}
		})
	}
	_, stderr, code := run(t, "invocations", "invoke", "lookup_tenant", "--server", nowhere, "--key", "k")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "--session is required")
}
