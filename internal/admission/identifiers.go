package admission

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/observation"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// maxMaestroKeyLen bounds the operation keys maestro builds itself for
// post-call work: postcall:{session}:{item}, an attempt's /{n} and a held
// item's /held. With a session ID at its limit they pass
// mt.MaxIdentifierLen, and "invocation/" before them still leaves the
// workflow ID far inside Temporal's 1000 bytes.
const maxMaestroKeyLen = 2*mt.MaxIdentifierLen + 112

// CheckIdentifier refuses value as field unless it keeps maestro's one
// rule for agent-chosen identifiers (mt.CheckIdentifier). Every entry point
// answers the same 400 with it, before anything is written to the ledger
// or started in Temporal; nil means the value may be used.
func CheckIdentifier(field, value string) *apitype.Refusal {
	if err := mt.CheckIdentifier(field, value); err != nil {
		return refuseIdentifier(field, err)
	}
	return nil
}

func refuseIdentifier(field string, err error) *apitype.Refusal {
	return refuse(http.StatusBadRequest, observation.Failure{
		Code:          mt.CodeInvalidRequest,
		Summary:       fmt.Sprintf("%s is not a valid identifier; nothing was run", field),
		RootCause:     err.Error(),
		Remediation:   fmt.Sprintf("Send a %s of %s.", field, mt.IdentifierRule),
		StopCondition: "Do not retry with the same " + field + ".",
		Payload:       map[string]any{"field": field, "rule": mt.IdentifierRule},
	})
}

// checkIdentifiers holds the call's identifiers to the rule. The post-call
// agent's operation keys are maestro's own (see maxMaestroKeyLen) and are
// checked with the key they make.
func checkIdentifiers(req Request, postCall bool) *apitype.Refusal {
	if ref := CheckIdentifier("session_id", req.SessionID); ref != nil {
		return ref
	}
	if req.ToolCallID != "" {
		if ref := CheckIdentifier("tool_call_id", req.ToolCallID); ref != nil {
			return ref
		}
	}
	if req.OperationKey != "" && !postCall {
		return CheckIdentifier("operation_key", req.OperationKey)
	}
	return nil
}

// checkMaestroKey refuses a post-call key no session could have made:
// nothing but an over-long or unprintable key would get here, and it must
// not reach Temporal as a workflow ID.
func checkMaestroKey(key string) *apitype.Refusal {
	if key == "" || len(key) > maxMaestroKeyLen {
		return refuseBadRequest(fmt.Sprintf("operation_key of post-call work must be 1 to %d characters", maxMaestroKeyLen))
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c <= ' ' || c >= 0x7f {
			return refuseBadRequest(fmt.Sprintf("operation_key of post-call work has a space, control character or non-ASCII byte at position %d", i+1))
		}
	}
	return nil
}

// derivedKey names the effect from session, tool and canonical arguments
// (and, for a tool that repeats, the tool-call ID). Both IDs keep the
// rule, so the key is printable and has no '/'; where together they would
// pass the length limit, the key keeps its readable start and ends with a
// digest of the whole, so it stays unique to the effect and within the
// rule like a key an agent chose.
func derivedKey(req Request, tool *tools.Tool, argsHash string) string {
	key := req.SessionID + ":" + tool.Name + ":" + argsHash[:min(derivedKeyHashLen, len(argsHash))]
	if repeatsByCallID(tool) {
		key += ":" + req.ToolCallID
	}
	if len(key) <= mt.MaxIdentifierLen {
		return key
	}
	sum := sha256.Sum256([]byte(key))
	digest := hex.EncodeToString(sum[:derivedKeyHashLen/2])
	return key[:mt.MaxIdentifierLen-1-len(digest)] + "~" + digest
}

// loggable is v if it may be shown as it is, else empty.
func loggable(ok bool, v string) string {
	if !ok {
		return ""
	}
	return v
}
