package activities

import (
	"context"
	"encoding/json"
	"fmt"

	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
	"github.com/maestro-run/maestro/workflows"
)

// Fallback wordings, used when a tool's own success wording fails to
// render. Each claims no more than what the outcome itself proves: a
// receipt's ID, a recorded intent, or a lookup that answered.
const (
	fallbackReadWording     = "Here is what I found."
	fallbackDeferredWording = "I've made a note of that for the team to pick up after the call."
)

// fallbackReceiptWording says only what the receipt proves: the provider
// accepted the request under a reference. It never names delivery, which a
// receipt for an accepted request does not prove.
func fallbackReceiptWording(r *mt.Receipt) string {
	if r == nil || r.ID == "" {
		return fallbackReadWording
	}
	return fmt.Sprintf("The provider accepted the request; the reference is %s.", r.ID)
}

// successWording renders a tool's success wording, and never fails: by the
// time it runs the outcome is a fact (the provider acted, or the lookup
// answered), and a template that breaks at run time must not cost the
// ledger its record of that fact. A broken template is logged as an error
// for the catalog's owner and the agent gets a neutral wording derived from
// the receipt instead.
func (a *Activities) successWording(ctx context.Context, tool *tools.Tool, in workflows.ExecuteInput, r *mt.Receipt, payload json.RawMessage, fallback string) string {
	wording, err := tool.RenderWording(tools.OutcomeSuccess, templateData(in, r, payload))
	if err == nil {
		return wording
	}
	a.cfg.Logger.ErrorContext(ctx, "success wording failed to render; answering with a fallback derived from the outcome",
		"tool", tool.Name, "operation_key", in.OperationKey, "err", err)
	return fallback
}
