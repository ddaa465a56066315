package server_test

import (
	"encoding/json"

	"github.com/maestro-run/maestro/apitype"
)

func invokeRequest(session, tool, key, args string) apitype.InvokeRequest {
	return apitype.InvokeRequest{SessionID: session, Tool: tool, OperationKey: key, Args: json.RawMessage(args)}
}
