package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/ledger"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// seenPage is a console page as the browser holds it: what it says, and
// where its links and forms go once the browser resolved them.
type seenPage struct {
	Main  string     `json:"main"`
	Links []string   `json:"links"`
	Forms []seenForm `json:"forms"`
}

type seenForm struct {
	URL    string `json:"url"`
	Target string `json:"target"`
	Action string `json:"action"`
}

// readPage reads the page's main content. A form's address is resolved
// against the document as the browser does when it submits it.
const readPage = `(() => {
  const main = document.querySelector("main");
  const field = (f, n) => { const el = f.querySelector('input[name="' + n + '"]'); return el ? el.value : ""; };
  return {
    main: main.innerText,
    links: Array.from(main.querySelectorAll("a[href]")).map(a => a.href),
    forms: Array.from(main.querySelectorAll("form"))
      .filter(f => (f.getAttribute("method") || "").toLowerCase() === "post")
      .map(f => ({url: new URL(f.getAttribute("action"), document.baseURI).href, target: field(f, "target_id"), action: field(f, "target_action")})),
  };
})()`

// object is a console object: its collection and its ID.
type object struct{ coll, id string }

// objectAt reads which object a resolved console URL addresses, and what
// follows its ID; ok is false for a URL that is not one object's, or that
// carries a query or a fragment.
func objectAt(base, raw string) (obj object, rest string, ok bool) {
	u, err := url.Parse(raw)
	if err != nil || "http://"+u.Host != base || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return object{}, "", false
	}
	parts := strings.SplitN(strings.TrimPrefix(u.EscapedPath(), "/console/"), "/", 3)
	if len(parts) < 2 {
		return object{}, "", false
	}
	id, err := url.PathUnescape(parts[1])
	if err != nil {
		return object{}, "", false
	}
	if len(parts) == 3 {
		rest = parts[2]
	}
	return object{parts[0], id}, rest, true
}

// requireRefusedID opens the session page of id, which the identifier
// rule refuses, and shows that the console answers the rule's refusal
// instead of a session page: it names the field and the rule, and offers
// no form, and no link to any object, that a click could carry elsewhere.
func requireRefusedID(t *testing.T, ctx context.Context, base, id string) {
	t.Helper()
	p := visit(t, ctx, base+"/console/sessions/"+url.PathEscape(id))
	requireRuleRefusalPage(t, base, id, p)
}

func requireRuleRefusalPage(t *testing.T, base, id string, p seenPage) {
	t.Helper()
	require.Contains(t, p.Main, "session_id is not a valid identifier", "the page of %q", id)
	require.Contains(t, p.Main, mt.IdentifierRule, "the page of %q names the rule", id)
	require.NotContains(t, p.Main, "Session "+id, "no session page for %q", id)
	require.Empty(t, p.Forms, "the refusal for %q offers no action", id)
	for _, href := range p.Links {
		obj, _, ok := objectAt(base, href)
		require.False(t, ok, "the refusal for %q links to %v at %s", id, obj, href)
	}
}

func readSeen(t *testing.T, ctx context.Context) seenPage {
	t.Helper()
	p, err := chromedp.Run(ctx, chromedp.Evaluate[seenPage](readPage))
	require.NoError(t, err)
	return p
}

// names says whether a page names obj: in what it shows, or as the target
// of its forms.
func (p seenPage) names(id string) bool {
	if strings.Contains(p.Main, id) {
		return true
	}
	for _, f := range p.Forms {
		if f.Target == id {
			return true
		}
	}
	return false
}

// visit opens a console page and waits for it.
func visit(t *testing.T, ctx context.Context, rawURL string) seenPage {
	t.Helper()
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(rawURL), chromedp.WaitReady(chromedp.CSS("main h1"))))
	return readSeen(t, ctx)
}

// requireLandsOnWhatItNames opens obj's page and shows that it names obj,
// that every form on it posts to obj's own address with its action and
// repeats both in its body, and that every link opens a page naming the
// object the link's address names; it answers the objects linked to.
func requireLandsOnWhatItNames(t *testing.T, ctx context.Context, base string, page object) []object {
	t.Helper()
	p := visit(t, ctx, base+"/console/"+page.coll+"/"+url.PathEscape(page.id))
	require.True(t, p.names(page.id), "the %s page of %q names it: %s", page.coll, page.id, p.Main)
	for _, f := range p.Forms {
		obj, rest, ok := objectAt(base, f.URL)
		require.True(t, ok, "form on %q posts to %s", page.id, f.URL)
		require.Equal(t, page, obj, "form %s on %q posts to %s", f.Action, page.id, f.URL)
		require.Equal(t, f.Action, rest, "form on %q", page.id)
		require.Equal(t, page.id, f.Target, "form %s on %q", f.Action, page.id)
	}
	var linked []object
	for _, href := range p.Links {
		obj, _, ok := objectAt(base, href)
		require.True(t, ok, "link on %q goes to %s", page.id, href)
		landed := visit(t, ctx, href)
		require.True(t, landed.names(obj.id), "link %s on %q opens a page naming %q: %s", href, page.id, obj.id, landed.Main)
		linked = append(linked, obj)
	}
	return linked
}

// Agents choose session IDs, and so operation keys and held keys: IDs that
// would change a URL ('?', '#', percent-encoded twins, IDs at the length
// limit) never change where an operator's click goes. Every link and form
// on the approval, session and reconciliation pages lands on the object
// it names, and the reproduction (open the session of an ordinary
// request in the percent-encoded twin of a session whose ID walks to a
// pending refund's approve action, and vouch for a fact there) approves
// nothing. Sessions recorded before the identifier rule, whose IDs it
// refuses (the traversal itself, an over-long one), open as the rule's
// refusal, with nothing on it to click.
func TestConsoleBrowserHostileIDsCannotSteerAClick(t *testing.T) {
	t.Parallel()
	e := setup(t)
	browserCtx := browser(t)
	ctx, cancel := context.WithTimeout(browserCtx, 4*time.Minute)
	defer cancel()
	refund := e.requestRefund("refund")

	// The traversal and the over-long ID are refused at admission now; they
	// are seeded in the ledger, as sessions recorded before that rule.
	traversal := "x/../../approvals/" + refund.ApprovalID + "/approve?"
	overLong := "long/" + strings.Repeat("y", 1200)
	for _, id := range []string{traversal, overLong} {
		_, err := e.store.SessionUpsert(e.ctx, ledger.Session{ID: id, AgentID: "voice-agent", State: mt.SessionActive, Facts: sessionFacts})
		require.NoError(t, err)
	}
	_, err := e.store.SessionHalt(e.ctx, overLong, "undo_1: cancel_refund", "the back office did not answer")
	require.NoError(t, err)

	// These are admitted: each holds an ordinary refund pending for a
	// manager, under a plain operation key.
	twin := url.PathEscape(traversal)
	admitted := []string{twin, "q?approve=1", "h#approve", "a..b", "%2e%2e%2fapprovals%2f" + refund.ApprovalID, "z" + strings.Repeat("9", mt.MaxIdentifierLen-1)}
	approvals := map[string]string{}
	for i, id := range admitted {
		req := invokeRequest(id, "issue_refund", fmt.Sprintf("%s-h%d", e.session, i), refundArgs)
		req.SessionContext = sessionFacts
		resp, err := e.agent.Invoke(e.ctx, req)
		require.NoError(t, err, id)
		require.True(t, resp.Pending, id)
		approvals[id] = resp.ApprovalID
	}
	// Held post-call work under a hostile session: its key holds the ID
	// and "/held".
	e.standins.SES.Faults().FailNext(50, http.StatusBadRequest)
	e.standins.Twilio.Faults().FailNext(50, http.StatusBadRequest)
	heldSession := "p?q#r%2e%2e..%2F"
	heldKey := e.holdMessage(heldSession, e.key("held"), "Please call me back about the lift.")

	browserSignIn(t, ctx, e.url, tools.DemoOpsKey, "")

	// The reproduction. The manager opens the ordinary request in
	// the twin session, then its session, and vouches for a fact there.
	p := visit(t, ctx, e.url+"/console/approvals/"+approvals[twin])
	require.True(t, p.names(approvals[twin]))
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(`//a[starts-with(normalize-space(), "Open session")]`),
		chromedp.WaitReady(chromedp.CSS("#fact-value")),
	))
	require.Equal(t, "Session "+twin, text(t, ctx, "main h1"), "the twin session opens, not the one its ID decodes to")
	require.NoError(t, chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS("#fact-value"), "+15550001111")))
	shoot(t, ctx, "hostile-session")
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Click(`//button[normalize-space()="Record as checked by me"]`),
		chromedp.WaitReady(chromedp.CSS("p.notice")),
	))
	require.Contains(t, text(t, ctx, "p.notice"), "you vouch for this fact")
	require.Equal(t, "Session "+twin, text(t, ctx, "main h1"), "the vouch lands on the session it names")
	vouched, err := e.store.SessionGet(e.ctx, twin)
	require.NoError(t, err)
	require.Equal(t, "+15550001111", vouched.Facts["caller_number"])
	// The traversal session, found by its ID as an operator would, opens
	// as the rule's refusal: no vouch form, nothing that lands elsewhere.
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(e.url+"/console/sessions"),
		chromedp.WaitReady(chromedp.CSS("#session-id")),
		chromedp.SendKeys(chromedp.CSS("#session-id"), traversal),
		chromedp.Submit(chromedp.CSS("#session-id")),
		chromedp.WaitReady(chromedp.CSS("main p.problem")),
	))
	requireRuleRefusalPage(t, e.url, traversal, readSeen(t, ctx))
	shoot(t, ctx, "hostile-refused")
	untouched, err := e.store.SessionGet(e.ctx, traversal)
	require.NoError(t, err)
	require.Equal(t, sessionFacts["caller_number"], untouched.Facts["caller_number"])
	require.Equal(t, "pending", e.approvalStatus(refund.ApprovalID), "the clicks decided nothing")
	require.Zero(t, e.standins.Sandbox.CountRefunds(), "nothing ran at the back office")

	// Every link and form on every page of a hostile object lands on what
	// it names.
	for _, id := range admitted {
		linked := requireLandsOnWhatItNames(t, ctx, e.url, object{"approvals", approvals[id]})
		require.ElementsMatch(t, []object{{"sessions", id}, {"approvals", approvals[id]}}, linked, "the request's session and its modify page")
		require.Empty(t, requireLandsOnWhatItNames(t, ctx, e.url, object{"sessions", id}))
	}
	// A halted session would offer its resolve form; refused, it offers
	// nothing.
	requireRefusedID(t, ctx, e.url, traversal)
	requireRefusedID(t, ctx, e.url, overLong)
	shoot(t, ctx, "hostile-halted")
	require.Equal(t, []object{{"reconciliations", heldKey}}, requireLandsOnWhatItNames(t, ctx, e.url, object{"sessions", heldSession}))
	require.Equal(t, []object{{"sessions", heldSession}}, requireLandsOnWhatItNames(t, ctx, e.url, object{"reconciliations", heldKey}))
	shoot(t, ctx, "hostile-held")

	for _, id := range append(admitted, "") {
		want := refund.ApprovalID
		if id != "" {
			want = approvals[id]
		}
		require.Equal(t, "pending", e.approvalStatus(want), "no request was decided by following its links")
	}
	require.Zero(t, e.standins.Sandbox.CountRefunds())
}
