// Package compensation describes how a compensable effect is undone: the
// undo entry pushed onto a session's stack before the effect runs.
package compensation

import (
	"encoding/json"
	"fmt"

	"github.com/maestro-run/maestro/internal/ledger"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// Snapshot is what an undo entry knows before its effect runs: the call it
// undoes. The compensation's own arguments usually need the receipt (the
// ID of what was created), so they are rendered when the undo runs.
type Snapshot struct {
	Tool         string          `json:"tool"`
	OperationKey string          `json:"operation_key"`
	Args         json.RawMessage `json:"args"`
}

// Entry builds the undo entry for a compensable call, or nil for a tool
// that has no compensation.
func Entry(tool *tools.Tool, sessionID, operationKey string, args json.RawMessage) (*ledger.UndoEntry, error) {
	if tool.Compensation == nil || tool.Reversibility != mt.ReversibilityCompensable {
		return nil, nil
	}
	snap, err := json.Marshal(Snapshot{Tool: tool.Name, OperationKey: operationKey, Args: args})
	if err != nil {
		return nil, fmt.Errorf("error encoding undo snapshot: %w", err)
	}
	return &ledger.UndoEntry{
		SessionID:           sessionID,
		OperationKey:        operationKey,
		CompensationTool:    tool.Compensation.Tool,
		CompensationVersion: tool.Compensation.VersionString(),
		ArgsSnapshot:        snap,
	}, nil
}
