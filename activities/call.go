package activities

import (
	"encoding/json"
	"fmt"

	"github.com/maestro-run/maestro/internal/connectors"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/receipts"
	"github.com/maestro-run/maestro/tools"
	"github.com/maestro-run/maestro/workflows"
)

func templateData(in workflows.ExecuteInput, r *mt.Receipt, payload json.RawMessage) tools.TemplateData {
	args, _ := tools.DecodeArgs(in.Args) // validated at admission
	var p any
	if len(payload) > 0 {
		_ = json.Unmarshal(payload, &p)
	}
	return tools.TemplateData{
		Args:         args,
		Receipt:      r,
		Payload:      p,
		OperationKey: in.OperationKey,
		Session:      map[string]any{"id": in.SessionID},
	}
}

// renderCall turns the catalog row's connector templates into a concrete
// provider call carrying the operation key as its idempotency key.
func renderCall(tool *tools.Tool, in workflows.ExecuteInput) (connectors.Call, error) {
	rc, err := tool.RenderCall(templateData(in, nil, nil))
	if err != nil {
		return connectors.Call{}, fmt.Errorf("error rendering connector call: %w", err)
	}
	return connectors.Call{
		Kind:           rc.Kind,
		IdempotencyKey: in.OperationKey,
		Settings:       rc.Settings,
		Body:           rc.Body,
	}, nil
}

// beforeState records what was about to be sent, so a disputed write can be
// traced to the exact request.
func beforeState(call connectors.Call) json.RawMessage {
	b, err := json.Marshal(map[string]any{"kind": call.Kind, "settings": call.Settings, "body": call.Body})
	if err != nil {
		return nil
	}
	return b
}

func checkReceipt(tool *tools.Tool, r *mt.Receipt) error {
	if tool.Delivery != mt.DeliveryRealSync {
		return nil
	}
	return receipts.Check(r, tool.ReceiptFields)
}
