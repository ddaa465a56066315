package console

import (
	"net/http"
	"slices"

	"github.com/maestro-run/maestro/apitype"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// sessionView is a session as ops sees it.
type sessionView struct {
	apitype.Session
	// Undo is the undo stack newest first, the order a rollback runs it.
	Undo []undoRow
	// Halted says whether the session waits for an operator to resolve it.
	Halted bool
	Reason string
	// FactNames are the session facts the catalog declares, which an
	// operator may vouch for.
	FactNames []string
	// Vouch says whether the operator may vouch for facts.
	Vouch permit
}

// sessionsView is one page of the session listing.
type sessionsView struct {
	Sessions []apitype.SessionSummary
	Page     pageView
}

// handleSessions opens the session an ID names, or lists sessions newest
// first, a page at a time.
func (c *Console) handleSessions(w http.ResponseWriter, r *http.Request, v *visit) {
	if id := r.URL.Query().Get("id"); id != "" {
		http.Redirect(w, r, sessionPath(id), http.StatusSeeOther)
		return
	}
	f, ok := c.readListFilter(w, r, v)
	if !ok {
		return
	}
	list, err := v.api.Sessions(r.Context(), f.query(""))
	if err != nil {
		c.apiProblem(w, r, err)
		return
	}
	c.renderPage(w, r, v, http.StatusOK, "sessions.html", "Sessions", sessionsView{
		Sessions: list.Sessions,
		Page:     newPageView("/console/sessions", f, len(list.Sessions), list.Paging),
	})
}

func (c *Console) handleSession(w http.ResponseWriter, r *http.Request, v *visit) {
	c.showSession(w, r, v, http.StatusOK, "")
}

func (c *Console) showSession(w http.ResponseWriter, r *http.Request, v *visit, status int, problem string) {
	s, err := v.api.Session(r.Context(), r.PathValue("id"))
	if err != nil {
		c.apiProblem(w, r, err)
		return
	}
	undo := slices.Clone(s.UndoStack)
	slices.SortStableFunc(undo, func(a, b apitype.UndoEntry) int { return int(b.Seq - a.Seq) })
	view := sessionView{Session: s, Undo: undoRows(s, undo), Halted: s.State == mt.SessionHalted, Reason: r.PostFormValue("reason"),
		Vouch: c.permit(v.op, tools.PermVouchFacts)}
	for _, f := range c.cfg.Catalog.Load().SessionFacts() {
		view.FactNames = append(view.FactNames, f.Name)
	}
	c.renderView(w, r, status, "session.html", viewOf(r, v, "Session "+s.SessionID, problem, view))
}

func (c *Console) handleRollback(w http.ResponseWriter, r *http.Request, v *visit) {
	id, reason := r.PathValue("id"), r.PostFormValue("reason")
	if reason == "" {
		c.showSession(w, r, v, http.StatusUnprocessableEntity, "A rollback needs a reason: it is recorded with every compensation. Nothing was rolled back.")
		return
	}
	res, err := v.api.Rollback(r.Context(), id, reason)
	if err != nil {
		status, msg := apiError(err)
		c.showSession(w, r, v, status, msg+" Nothing was rolled back.")
		return
	}
	done := "rolledback"
	if res.Halted {
		done = "rollbackhalted"
	}
	http.Redirect(w, r, sessionPath(id)+"?done="+done, http.StatusSeeOther)
}

func (c *Console) handleResolve(w http.ResponseWriter, r *http.Request, v *visit) {
	id, reason := r.PathValue("id"), r.PostFormValue("reason")
	if reason == "" {
		c.showSession(w, r, v, http.StatusUnprocessableEntity, "Resolving needs a reason: say what was undone by hand, or why the rollback may run again. Nothing was resolved.")
		return
	}
	var err error
	if r.PostFormValue("retry") != "" {
		_, err = v.api.ResolveRetry(r.Context(), id, reason)
	} else {
		_, err = v.api.Resolve(r.Context(), id, reason)
	}
	if err != nil {
		status, msg := apiError(err)
		c.showSession(w, r, v, status, msg+" Nothing was resolved.")
		return
	}
	http.Redirect(w, r, sessionPath(id)+"?done=resolved", http.StatusSeeOther)
}

// handleSetFact records a fact an operator checked with the caller.
func (c *Console) handleSetFact(w http.ResponseWriter, r *http.Request, v *visit) {
	id, name, value := r.PathValue("id"), r.PostFormValue("name"), r.PostFormValue("value")
	if name == "" || value == "" {
		c.showSession(w, r, v, http.StatusUnprocessableEntity, "Choose a fact and give the value you checked. Nothing was recorded.")
		return
	}
	if _, err := v.api.SetFact(r.Context(), id, name, value); err != nil {
		status, msg := apiError(err)
		c.showSession(w, r, v, status, msg+" Nothing was recorded.")
		return
	}
	http.Redirect(w, r, sessionPath(id)+"?done=fact", http.StatusSeeOther)
}

func viewOf(r *http.Request, v *visit, title, problem string, data any) view {
	return view{Title: title, Op: v.op, CSRF: v.csrf, Notice: notice(r), Problem: problem, Data: data}
}
