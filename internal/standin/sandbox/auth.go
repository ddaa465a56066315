package sandbox

import (
	"crypto/subtle"
	"net/http"
	"strings"
)

// authenticate requires "Authorization: Bearer <token>" on every API call.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		header := r.Header.Get("Authorization")
		token, isBearer := strings.CutPrefix(header, "Bearer ")
		switch {
		case header == "":
			unauthorized(w, "You did not provide an API key. You need to provide your API key in the Authorization header, "+
				"using Bearer auth (e.g. 'Authorization: Bearer YOUR_SECRET_KEY').")
		case !isBearer || subtle.ConstantTimeCompare([]byte(token), []byte(s.token)) != 1:
			unauthorized(w, "Invalid API Key provided.")
		default:
			next.ServeHTTP(w, r)
		}
	})
}

func unauthorized(w http.ResponseWriter, message string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="sandbox"`)
	(&apiError{status: http.StatusUnauthorized, Type: typeInvalidRequest, Message: message}).write(w)
}
