package grader_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/eval/grader"
	"github.com/maestro-run/maestro/internal/ledger/ledgertest"
	mt "github.com/maestro-run/maestro/maestrotype"
)

// Every error path of every connector, three times each, through the real
// admission, workflow, activity, ledger and connectors: all must pass.
func TestRecoveryPathsPassCubed(t *testing.T) {
	t.Parallel()
	rep, err := grader.Run(t.Context(), grader.Config{Store: ledgertest.Postgres(t)})
	require.NoError(t, err)

	var table bytes.Buffer
	require.NoError(t, rep.WriteTable(&table))
	t.Log("\n" + table.String())
	require.Len(t, rep.Paths, len(grader.Targets)*len(grader.Paths))
	for _, p := range rep.Paths {
		require.Len(t, p.Results, 3)
	}
	require.Equal(t, 1.0, rep.PassRate(), "pass^3 must be 1.0")

	// Latency is reported beside the pass rate, per tool and path and
	// pooled per path, in the table and the JSON alike.
	successes := 0
	for _, p := range rep.Paths {
		require.Positive(t, p.Latency.P50MS, "%s %s", p.Tool, p.Path)
		require.GreaterOrEqual(t, p.Latency.P95MS, p.Latency.P50MS)
		if p.Path == grader.Success {
			successes++
			require.Equal(t, mt.StatusSuccess, p.Results[0].Status, p.Tool)
		}
	}
	require.Equal(t, len(grader.Targets), successes, "every target's success path is graded")
	require.Len(t, rep.LatencyByPath, len(grader.Paths))
	require.Contains(t, table.String(), "P95")
	require.Contains(t, table.String(), "latency success: p50 ")
	raw, err := json.Marshal(rep)
	require.NoError(t, err)
	var decoded struct {
		Paths []struct {
			Latency struct {
				P50 *float64 `json:"p50_ms"`
				P95 *float64 `json:"p95_ms"`
			} `json:"latency"`
			Runs []struct {
				LatencyMS *float64 `json:"latency_ms"`
			} `json:"runs"`
		} `json:"paths"`
		ByPath []struct {
			Path string   `json:"path"`
			P95  *float64 `json:"p95_ms"`
		} `json:"latency_by_path"`
	}
	require.NoError(t, json.Unmarshal(raw, &decoded))
	require.NotNil(t, decoded.Paths[0].Latency.P95)
	require.NotNil(t, decoded.Paths[0].Runs[0].LatencyMS)
	require.Equal(t, "success", decoded.ByPath[0].Path)
	require.NotNil(t, decoded.ByPath[0].P95)
}
