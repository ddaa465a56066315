package api

import (
	"errors"
	"net/http"
	"time"
)

// waitMargin is how long past the end of its wait a waiting request of the
// core API may take to read its outcome back and write it. Reads are quick;
// the margin makes a slow ledger a late answer rather than a lost one, and
// keeps the whole inside a client's minute (apiclient's default).
const waitMargin = 30 * time.Second

// answerBy sets when the request's answer must be written by, later or
// earlier than the server's write timeout: a route that waits on a budget
// of its own must not have its answer dropped, after its effect happened,
// by a timeout made for routes that do not. A writer that cannot take a
// deadline (the in-process one MCP tool calls use) keeps its own.
func (s *Server) answerBy(w http.ResponseWriter, r *http.Request, deadline time.Time) {
	err := http.NewResponseController(w).SetWriteDeadline(deadline)
	if err != nil && !errors.Is(err, http.ErrNotSupported) {
		s.cfg.Logger.Warn("could not set the answer's write deadline", "path", r.URL.Path, "err", err)
	}
}

// AnswerTimeout is how long a request that waits on an invocation may take
// to be answered: the wait timeout plus the margin to write the outcome.
// The MCP endpoint holds its tool calls' connections that long.
func (s *Server) AnswerTimeout() time.Duration {
	return s.cfg.WaitTimeout + waitMargin
}
