package console

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/maestro-run/maestro/apitype"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

//go:embed templates/*.html templates/partials/*.html
var templateFS embed.FS

//go:embed static
var staticEmbed embed.FS

// staticFS serves static/ under the console's /console/static/ path.
var staticFS fs.FS = staticEmbed

// pages holds each page's template, parsed with the layout.
type pages struct{ byName map[string]*template.Template }

// parsePages parses every page with the shared funcs and the console's
// own, which read the catalog in use.
func parsePages(own template.FuncMap) (*pages, error) {
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, fmt.Errorf("error listing console templates: %w", err)
	}
	p := &pages{byName: map[string]*template.Template{}}
	for _, name := range names {
		base := strings.TrimPrefix(name, "templates/")
		if base == "layout.html" {
			continue
		}
		t, err := template.New(base).Funcs(funcs).Funcs(own).ParseFS(templateFS, "templates/layout.html", "templates/partials/*.html", name)
		if err != nil {
			return nil, fmt.Errorf("error parsing console template %s: %w", base, err)
		}
		p.byName[base] = t
	}
	return p, nil
}

// view is what every page's template sees.
type view struct {
	Title string
	// Op is the signed-in operator; nil on the sign-in and error pages of
	// a visitor who is not signed in.
	Op   *tools.Operator
	CSRF string
	// Notice confirms what the last action did.
	Notice string
	// Problem says why the last action was refused.
	Problem string
	Data    any
}

func (c *Console) render(w http.ResponseWriter, r *http.Request, status int, name string, data any) {
	c.renderView(w, r, status, name, view{Data: data})
}

func (c *Console) renderPage(w http.ResponseWriter, r *http.Request, v *visit, status int, name, title string, data any) {
	c.renderView(w, r, status, name, view{Title: title, Op: v.op, CSRF: v.csrf, Notice: notice(r), Data: data})
}

func (c *Console) renderView(w http.ResponseWriter, r *http.Request, status int, name string, data view) {
	t, ok := c.pages.byName[name]
	if !ok {
		c.cfg.Logger.Error("console template missing", "name", name)
		http.Error(w, "console page missing", http.StatusInternalServerError)
		return
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", data); err != nil {
		c.cfg.Logger.Error("console template failed", "name", name, "err", err, "path", r.URL.Path)
		http.Error(w, "console page failed to render", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = buf.WriteTo(w)
}

// renderError answers with a page saying what went wrong; the operator
// stays signed in if they were.
func (c *Console) renderError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	var v *visit
	if sess, op, state := c.session(r); state == sessionLive {
		v = &visit{op: op, csrf: sess.CSRFToken}
	}
	c.renderProblem(w, r, v, status, msg)
}

// renderProblem is renderError where the visitor is already known: v, or
// nil for one not signed in. It reads no session again.
func (c *Console) renderProblem(w http.ResponseWriter, r *http.Request, v *visit, status int, msg string) {
	pv := view{Title: http.StatusText(status), Problem: msg}
	if v != nil {
		pv.Op, pv.CSRF = v.op, v.csrf
	}
	c.renderView(w, r, status, "error.html", pv)
}

// notices are the confirmations a redirect after an action may name; only
// these fixed texts are shown, so a link cannot put words in the page.
var notices = map[string]string{
	"approved":       "Approved. The call runs once with the approved arguments.",
	"rejected":       "Rejected. The call is cancelled and the agent is told.",
	"modified":       "Approved with your changes. The call runs once with the modified arguments.",
	"rolledback":     "Rollback finished.",
	"rollbackhalted": "Rollback halted: a compensation could not run. Resolve the session below.",
	"resolved":       "Resolved.",
	"checked":        "Checked the provider again.",
	"settled":        "Settled with your decision.",
	"retried":        "Retried along its chain: each channel is tried again, in order.",
	"canary":         "Canary run finished.",
	"fact":           "Recorded: you vouch for this fact, and approval rules may rest on it.",
	"reloaded":       "Catalog reloaded.",
}

func notice(r *http.Request) string { return notices[r.URL.Query().Get("done")] }

var funcs = template.FuncMap{
	"when": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
	"iso": func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"left": func(t time.Time) string {
		d := time.Until(t).Round(time.Second)
		if d <= 0 {
			return "timed out"
		}
		return d.String() + " left"
	},
	"finished":           finished,
	"approvalURL":        approvalPath,
	"sessionURL":         sessionPath,
	"reconciliationURL":  reconciliationPath,
	"heldURL":            heldPath,
	"approvalForm":       approvalForm,
	"sessionForm":        sessionForm,
	"reconciliationForm": reconciliationForm,
	"pretty":             prettyJSON,
	"restedOn":           restedOn,
	"states":             stateRows,
	"join":               strings.Join,
	"has":                func(op *tools.Operator, role string) bool { return op != nil && op.HasRole(role) },
	"roles":              func(op *tools.Operator) string { return strings.Join(op.Roles, ", ") },
	"short": func(s string) string {
		if len(s) > 12 {
			return s[:12]
		}
		return s
	},
}

// finished reports whether an outcome's state is final: a call that
// ended, or a compensation's effect that settled. Only then does a missing
// receipt mean nothing took effect.
func finished(state string) bool {
	switch state {
	case string(mt.InvocationRunning), string(mt.InvocationAwaitingApproval), string(mt.EffectInProgress):
		return false
	}
	return true
}

// restedOn is what an auto-approval event says it rested on: each fact
// with who vouched for it; nil for any other detail.
func restedOn(detail json.RawMessage) []apitype.RestedFact {
	var r apitype.RestedOn
	if len(detail) == 0 || json.Unmarshal(detail, &r) != nil {
		return nil
	}
	return r.Facts
}

// scalar shows a JSON string without its quotes and anything else as
// compact JSON.
func scalar(raw json.RawMessage) string {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return string(raw)
	}
	return buf.String()
}

func prettyJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return string(raw)
	}
	return buf.String()
}

// renderFragment executes one named template of a page on its own, for a
// part of the page the browser refreshes.
func (c *Console) renderFragment(w http.ResponseWriter, r *http.Request, page, name string, data view) {
	t, ok := c.pages.byName[page]
	if !ok {
		http.Error(w, "console page missing", http.StatusInternalServerError)
		return
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, name, data); err != nil {
		c.cfg.Logger.Error("console fragment failed", "name", name, "err", err, "path", r.URL.Path)
		http.Error(w, "console fragment failed to render", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = buf.WriteTo(w)
}
