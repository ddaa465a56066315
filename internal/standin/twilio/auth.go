package twilio

import (
	"crypto/subtle"
	"net/http"
)

// authenticate checks HTTP Basic credentials (account SID and auth token)
// before any API route runs, as Twilio does: even a 404 needs valid auth.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, ok := r.BasicAuth()
		if !ok || !equal(user, s.accountSID) || !equal(pass, s.authToken) {
			w.Header().Set("WWW-Authenticate", `Basic realm="Twilio API"`)
			writeError(w, newError(http.StatusUnauthorized, codeAuthenticate, "Authenticate"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ownAccount answers 404 for any account other than the authenticated one:
// Twilio does not reveal whether another account exists.
func (s *Server) ownAccount(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("AccountSid") != s.accountSID {
			writeError(w, notFound(r.URL.Path))
			return
		}
		next(w, r)
	}
}

func equal(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}
