package console

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/throttle"
	"github.com/maestro-run/maestro/tools"
)

const (
	// sessionCookie carries the signed-in session's token.
	sessionCookie = "maestro_console"
	// signinCookie carries the token the sign-in form echoes, so a form on
	// another site cannot sign a browser in as someone else.
	signinCookie = "maestro_console_signin"
)

// visit is one request of a signed-in operator.
type visit struct {
	op   *tools.Operator
	csrf string
	api  *apiclient.Client
}

// signedIn admits requests of a live console session; a form post must
// also carry the session's CSRF token.
func (c *Console) signedIn(next func(http.ResponseWriter, *http.Request, *visit)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sess, op, state := c.session(r)
		switch state {
		case sessionEnded:
			c.setCookie(w, sessionCookie, "", -1)
			if r.Method == http.MethodGet {
				http.Redirect(w, r, "/console/signin?ended=1&next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			c.renderProblem(w, r, nil, http.StatusUnauthorized, keyChangedProblem+" Nothing was done.")
			return
		case sessionNone:
			if r.Method == http.MethodGet {
				http.Redirect(w, r, "/console/signin?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			c.renderProblem(w, r, nil, http.StatusUnauthorized, "You are not signed in, or your sign-in has expired. Sign in and try again; nothing was done.")
			return
		}
		v := &visit{op: op, csrf: sess.CSRFToken}
		if r.Method == http.MethodPost && !sameToken(r.PostFormValue("csrf"), sess.CSRFToken) {
			c.cfg.Logger.Warn("console form refused: CSRF token missing or wrong", "op", op.ID, "path", r.URL.Path)
			c.renderProblem(w, r, v, http.StatusForbidden, "This form did not come from your console session (its security token is missing or stale). Reload the page and try again; nothing was done.")
			return
		}
		v.api = c.apiFor(op)
		next(w, r, v)
	}
}

// keyChangedProblem tells an operator why a session they did not sign out
// of has ended.
const keyChangedProblem = "Your sign-in ended because your operator key was changed or removed in the catalog. Sign in with your current key."

// sessionState is what a request's console cookie amounts to.
type sessionState int

const (
	// sessionNone: no cookie, or one naming no live session.
	sessionNone sessionState = iota
	// sessionLive: a live session of an operator who still has the key it
	// was signed in with.
	sessionLive
	// sessionEnded: the session's operator was removed from the catalog,
	// or given another key; the session has just been deleted.
	sessionEnded
)

// session reads the request's live session and its operator, who must
// still be in the served catalog with the key the session was signed in
// with: a reload that changes or removes the key ends the session at once.
func (c *Console) session(r *http.Request) (ledger.ConsoleSession, *tools.Operator, sessionState) {
	ck, err := r.Cookie(sessionCookie)
	if err != nil || ck.Value == "" {
		return ledger.ConsoleSession{}, nil, sessionNone
	}
	sess, err := c.cfg.Store.ConsoleSessionGet(r.Context(), hashToken(ck.Value))
	if err != nil {
		if !errors.Is(err, ledger.ErrNotFound) {
			c.cfg.Logger.Error("console session unreadable", "err", err)
		}
		return ledger.ConsoleSession{}, nil, sessionNone
	}
	op, ok := c.cfg.Catalog.Load().Operator(sess.OperatorID)
	if ok && sameToken(op.KeyBinding(), sess.KeyBinding) {
		return sess, op, sessionLive
	}
	// Deleting is for every other process and the next request; this one
	// is refused whether or not the ledger answers.
	if err := c.cfg.Store.ConsoleSessionDelete(r.Context(), sess.IDHash); err != nil {
		c.cfg.Logger.Error("console session not deleted after its key changed", "op", sess.OperatorID, "err", err)
	}
	c.cfg.Logger.Warn("console session ended: the operator's key changed or the operator was removed", "op", sess.OperatorID, "operator_in_catalog", ok)
	return ledger.ConsoleSession{}, nil, sessionEnded
}

func (c *Console) handleSignInForm(w http.ResponseWriter, r *http.Request) {
	if _, _, state := c.session(r); state == sessionLive {
		http.Redirect(w, r, safeNext(r.URL.Query().Get("next")), http.StatusSeeOther)
		return
	}
	problem := ""
	if r.URL.Query().Has("ended") {
		problem = keyChangedProblem
	}
	c.renderSignIn(w, r, http.StatusOK, problem)
}

func (c *Console) renderSignIn(w http.ResponseWriter, r *http.Request, status int, problem string) {
	token := newToken()
	c.setCookie(w, signinCookie, token, 15*time.Minute)
	c.render(w, r, status, "signin.html", map[string]any{
		"CSRF": token, "Next": safeNext(r.FormValue("next")), "Problem": problem,
		"SignedOut": r.URL.Query().Has("signedout"),
	})
}

func (c *Console) handleSignIn(w http.ResponseWriter, r *http.Request) {
	ck, err := r.Cookie(signinCookie)
	if err != nil || !sameToken(r.PostFormValue("csrf"), ck.Value) {
		c.renderSignIn(w, r, http.StatusForbidden, "The sign-in form expired or did not come from this console. Enter your key again.")
		return
	}
	client := c.cfg.Throttle.Client(r)
	if wait := c.cfg.Throttle.Wait(client); wait > 0 {
		throttle.RetryAfter(w, wait)
		c.renderSignIn(w, r, http.StatusTooManyRequests, fmt.Sprintf(
			"Too many sign-ins with a wrong key came from your address, so this one was not checked. Wait %d seconds and try again.", throttle.Seconds(wait)))
		return
	}
	key := strings.TrimSpace(r.PostFormValue("key"))
	op, ok := c.cfg.Catalog.Load().OperatorByKey(key)
	if !ok {
		if key != "" {
			c.cfg.Throttle.Failed(client, "console sign-in key")
		}
		c.cfg.Logger.Warn("console sign-in refused: not an operator key", "remote", r.RemoteAddr)
		c.renderSignIn(w, r, http.StatusUnauthorized, "That is not an operator key. Check it and try again.")
		return
	}
	c.cfg.Throttle.Succeeded(client)
	token := newToken()
	sess := ledger.ConsoleSession{
		IDHash: hashToken(token), OperatorID: op.ID, CSRFToken: newToken(), KeyBinding: op.KeyBinding(),
		ExpiresAt: time.Now().Add(c.cfg.SessionTTL),
	}
	if err := c.cfg.Store.ConsoleSessionCreate(r.Context(), sess); err != nil {
		c.cfg.Logger.Error("console sign-in failed", "op", op.ID, "err", err)
		c.renderSignIn(w, r, http.StatusServiceUnavailable, "The ledger did not answer, so you are not signed in. Try again in a moment.")
		return
	}
	c.cfg.Logger.Info("console sign-in", "op", op.ID)
	c.setCookie(w, signinCookie, "", -1)
	c.setCookie(w, sessionCookie, token, c.cfg.SessionTTL)
	http.Redirect(w, r, safeNext(r.PostFormValue("next")), http.StatusSeeOther)
}

func (c *Console) handleSignOut(w http.ResponseWriter, r *http.Request, v *visit) {
	if ck, err := r.Cookie(sessionCookie); err == nil {
		if err := c.cfg.Store.ConsoleSessionDelete(r.Context(), hashToken(ck.Value)); err != nil {
			c.renderError(w, r, http.StatusServiceUnavailable, "The ledger did not answer, so you are still signed in. Try again in a moment.")
			return
		}
	}
	c.cfg.Logger.Info("console sign-out", "op", v.op.ID)
	c.setCookie(w, sessionCookie, "", -1)
	http.Redirect(w, r, "/console/signin?signedout=1", http.StatusSeeOther)
}

// setCookie sets a console cookie; a negative maxAge deletes it.
func (c *Console) setCookie(w http.ResponseWriter, name, value string, maxAge time.Duration) {
	ck := &http.Cookie{
		Name: name, Value: value, Path: "/console",
		HttpOnly: true, Secure: !c.cfg.InsecureCookies, SameSite: http.SameSiteStrictMode,
		MaxAge: int(maxAge / time.Second),
	}
	if maxAge < 0 {
		ck.MaxAge = -1
	}
	http.SetCookie(w, ck)
}

// safeNext keeps a post-sign-in redirect inside the console.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/console/") || strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n") {
		return "/console/approvals"
	}
	return next
}

func newToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// hashToken names a session in the ledger without storing its token.
func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

func sameToken(got, want string) bool {
	return got != "" && want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}
