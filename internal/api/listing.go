package api

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/admission"
	"github.com/maestro-run/maestro/internal/ledger"
	mt "github.com/maestro-run/maestro/maestrotype"
)

// maxFilterLen bounds a text filter: no tool, agent or code is longer.
const maxFilterLen = 200

// pageQuery reads a listing's query parameters: cursor, limit, tool,
// agent, newer_than, older_than and status, which must be one of statuses
// (any value when statuses is empty). A bad one is refused naming the
// parameter and the rule.
func pageQuery(r *http.Request, now time.Time, statuses ...string) (ledger.PageQuery, *apitype.Refusal) {
	v := r.URL.Query()
	bad := func(format string, args ...any) (ledger.PageQuery, *apitype.Refusal) {
		return ledger.PageQuery{}, admission.BadRequest(http.StatusBadRequest, mt.CodeInvalidRequest, fmt.Sprintf(format, args...))
	}
	q := ledger.PageQuery{Status: v.Get("status"), Tool: v.Get("tool"), AgentID: v.Get("agent")}
	if q.Status != "" && len(statuses) > 0 && !slices.Contains(statuses, q.Status) {
		return bad("status %q is not one of %s", q.Status, strings.Join(statuses, ", "))
	}
	for name, f := range map[string]string{"status": q.Status, "tool": q.Tool, "agent": q.AgentID} {
		if len(f) > maxFilterLen {
			return bad("%s must be at most %d characters", name, maxFilterLen)
		}
	}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > ledger.MaxPageLimit {
			return bad("limit must be a whole number from 1 to %d, got %q", ledger.MaxPageLimit, s)
		}
		q.Limit = n
	}
	if s := v.Get("cursor"); s != "" {
		c, err := ledger.ParseCursor(s)
		if err != nil {
			return ledger.PageQuery{}, badCursorRefusal()
		}
		q.After = &c
	}
	for _, p := range []struct {
		name string
		dst  **time.Time
	}{{"newer_than", &q.NewerThan}, {"older_than", &q.OlderThan}} {
		s := v.Get(p.name)
		if s == "" {
			continue
		}
		t, err := ageBound(s, now)
		if err != nil {
			return bad("%s %v", p.name, err)
		}
		*p.dst = &t
	}
	return q, nil
}

// ageBound reads an age filter: a duration back from now or a time.
func ageBound(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, fmt.Errorf("must not be negative, got %q", s)
		}
		return now.Add(-d).UTC(), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("must be a duration such as 15m or 2h, or an RFC 3339 time, got %q", s)
	}
	return t.UTC(), nil
}

// paging renders a page's total and next cursor.
func paging[T any](p ledger.Page[T]) apitype.Paging {
	out := apitype.Paging{Total: p.Total}
	if p.Next != nil {
		out.Next = p.Next.String()
	}
	return out
}

// badCursorRefusal answers a cursor no page of the listing returned.
func badCursorRefusal() *apitype.Refusal {
	return admission.BadRequest(http.StatusBadRequest, mt.CodeInvalidRequest,
		"cursor is not one this listing returned: send back the next value of the page before, unchanged")
}

// pageRefusal answers a page the ledger could not read.
func (s *Server) pageRefusal(what string, err error) *apitype.Refusal {
	if errors.Is(err, ledger.ErrBadCursor) {
		return badCursorRefusal()
	}
	s.cfg.Logger.Error("could not list "+what, "err", err)
	return unavailableRefusal()
}

func (s *Server) handleListSessions(w http.ResponseWriter, r *http.Request) {
	q, ref := pageQuery(r, time.Now(), string(mt.SessionActive), string(mt.SessionHalted), string(mt.SessionEnded))
	if ref != nil {
		writeRefusal(w, ref)
		return
	}
	p, err := s.cfg.Store.SessionPage(r.Context(), q)
	if err != nil {
		writeRefusal(w, s.pageRefusal("sessions", err))
		return
	}
	out := apitype.SessionList{Sessions: make([]apitype.SessionSummary, 0, len(p.Items)), Paging: paging(p)}
	for _, x := range p.Items {
		out.Sessions = append(out.Sessions, apitype.SessionSummary{SessionID: x.ID, AgentID: x.AgentID, State: x.State,
			HaltStep: x.HaltStep, HaltReason: x.HaltReason, CreatedAt: x.CreatedAt, EndedAt: x.EndedAt})
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleListRefusals(w http.ResponseWriter, r *http.Request) {
	q, ref := pageQuery(r, time.Now())
	if ref != nil {
		writeRefusal(w, ref)
		return
	}
	p, err := s.cfg.Store.RefusalPage(r.Context(), q)
	if err != nil {
		writeRefusal(w, s.pageRefusal("refusals", err))
		return
	}
	out := apitype.RefusalList{Refusals: make([]apitype.RefusalRecord, 0, len(p.Items)), Paging: paging(p)}
	for _, x := range p.Items {
		out.Refusals = append(out.Refusals, apitype.RefusalRecord{ID: x.ID, AgentID: x.AgentID, SessionID: x.SessionID, Tool: x.Tool,
			OperationKey: x.OperationKey, Code: x.Code, Detail: x.Detail, At: x.CreatedAt})
	}
	writeJSON(w, http.StatusOK, out)
}
