package sandbox

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// Stripe's error types, as far as this API uses them.
const (
	typeInvalidRequest = "invalid_request_error"
	typeIdempotency    = "idempotency_error"
	typeAPI            = "api_error"
)

// apiError is written as {"error": {...}}, Stripe's error envelope; param
// names the request field at fault when there is one.
type apiError struct {
	status  int
	Type    string `json:"type"`
	Message string `json:"message"`
	Param   string `json:"param,omitempty"`
}

func (e *apiError) write(w http.ResponseWriter) {
	writeJSON(w, e.status, map[string]*apiError{"error": e})
}

func invalidParam(param, format string, args ...any) *apiError {
	return &apiError{http.StatusBadRequest, typeInvalidRequest, fmt.Sprintf(format, args...), param}
}

func missingParam(param string) *apiError {
	return invalidParam(param, "Missing required param: %s.", param)
}

func noSuchObject(object, id string) *apiError {
	return &apiError{http.StatusNotFound, typeInvalidRequest, fmt.Sprintf("No such %s: '%s'", object, id), "id"}
}

// writeStatusError answers for an injected fault with the error Stripe gives
// for that class of status.
func writeStatusError(w http.ResponseWriter, status int) {
	errType := typeInvalidRequest
	if status >= http.StatusInternalServerError {
		errType = typeAPI
	}
	(&apiError{status: status, Type: errType, Message: http.StatusText(status)}).write(w)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	// The values written here always encode; an error can only come from a
	// client that hung up.
	_ = json.NewEncoder(w).Encode(v)
}
