package ses

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// apiError is an SES v2 (REST-JSON) error: the type travels in the
// X-Amzn-ErrorType header, which is what the SDK keys its typed errors on,
// and the body carries the message.
type apiError struct {
	status  int
	errType string
	message string
}

func (e *apiError) Error() string { return e.errType + ": " + e.message }

func badRequest(format string, args ...any) *apiError {
	return &apiError{http.StatusBadRequest, "BadRequestException", fmt.Sprintf(format, args...)}
}

// missingMember reproduces the validation message AWS front ends give for a
// required member that is absent.
func missingMember(path string) *apiError {
	return badRequest("1 validation error detected: Value null at '%s' failed to satisfy constraint: Member must not be null", path)
}

var (
	errMissingToken = &apiError{http.StatusForbidden, "MissingAuthenticationTokenException",
		"Missing Authentication Token"}
	errUnrecognizedClient = &apiError{http.StatusForbidden, "UnrecognizedClientException",
		"The security token included in the request is invalid."}
	errSignatureMismatch = &apiError{http.StatusForbidden, "SignatureDoesNotMatch",
		"The request signature we calculated does not match the signature you provided. " +
			"Check your AWS Secret Access Key and signing method. Consult the service documentation for details."}
)

func incompleteSignature(format string, args ...any) *apiError {
	return &apiError{http.StatusForbidden, "IncompleteSignatureException", fmt.Sprintf(format, args...)}
}

// statusErrorTypes names the SES error an injected status stands for; the
// SDK retries the throttling and 5xx ones on its own.
var statusErrorTypes = map[int]string{
	http.StatusBadRequest:          "BadRequestException",
	http.StatusForbidden:           "AccessDeniedException",
	http.StatusNotFound:            "NotFoundException",
	http.StatusTooManyRequests:     "TooManyRequestsException",
	http.StatusInternalServerError: "InternalFailure",
	http.StatusServiceUnavailable:  "ServiceUnavailable",
}

func writeStatusError(w http.ResponseWriter, status int) {
	errType, ok := statusErrorTypes[status]
	if !ok {
		errType = "InternalFailure"
		if status < http.StatusInternalServerError {
			errType = "BadRequestException"
		}
	}
	writeError(w, &apiError{status, errType, http.StatusText(status)})
}

func writeError(w http.ResponseWriter, e *apiError) {
	w.Header().Set("X-Amzn-ErrorType", e.errType)
	writeJSON(w, e.status, map[string]string{"message": e.message})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-RequestId", newUUID())
	w.WriteHeader(status)
	// The values written here always encode; an error can only come from a
	// client that hung up.
	_ = json.NewEncoder(w).Encode(v)
}
