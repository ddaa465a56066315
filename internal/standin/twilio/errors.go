package twilio

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// Twilio error codes this stand-in answers with. Generic HTTP failures use
// 20000 plus the status (20003, 20404, 20429, 20500, 20503), as Twilio does.
const (
	codeAuthenticate     = 20003
	codeInvalidParameter = 20001
	codeNotFound         = 20404
	codeBodyRequired     = 21602
	codeFromRequired     = 21603
	codeToRequired       = 21604
	codeInvalidTo        = 21211
	codeBodyTooLong      = 21617
	codeInvalidMediaURL  = 21620
)

// apiError is the body of every Twilio 2010-04-01 error response.
type apiError struct {
	Code     int    `json:"code"`
	Message  string `json:"message"`
	MoreInfo string `json:"more_info"`
	Status   int    `json:"status"`
}

func newError(status, code int, format string, args ...any) *apiError {
	return &apiError{
		Code:     code,
		Message:  fmt.Sprintf(format, args...),
		MoreInfo: fmt.Sprintf("https://www.twilio.com/docs/errors/%d", code),
		Status:   status,
	}
}

func badRequest(code int, format string, args ...any) *apiError {
	return newError(http.StatusBadRequest, code, format, args...)
}

func notFound(path string) *apiError {
	return newError(http.StatusNotFound, codeNotFound, "The requested resource %s was not found", path)
}

// writeStatusError answers with Twilio's generic error for status; injected
// faults use it.
func writeStatusError(w http.ResponseWriter, status int) {
	writeError(w, newError(status, 20000+status, "%s", http.StatusText(status)))
}

func writeError(w http.ResponseWriter, e *apiError) {
	writeJSON(w, e.Status, e)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	// The values written here are plain structs that always encode; an error
	// can only come from a client that hung up.
	_ = json.NewEncoder(w).Encode(v)
}
