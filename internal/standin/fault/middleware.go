package fault

import (
	"bytes"
	"io"
	"net"
	"net/http"
)

// Wrap applies both phases around next. Stand-ins whose effect is the whole
// of next use it; one that keeps state between the phases (an idempotency
// cache) places Before and After itself.
func (i *Injector) Wrap(next http.Handler) http.Handler {
	return i.After(i.Before(next))
}

// Before applies BeforeEffect rules, then hands the request to next unless
// the rule failed it.
func (i *Injector) Before(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rule, release, ok := i.take(r, BeforeEffect)
		if ok {
			if i.answer(w, r, rule) {
				return
			}
			i.hold(r.Context(), rule, release)
		}
		next.ServeHTTP(w, r)
	})
}

// After lets next do its work, then applies AfterEffect rules to the finished
// response before it reaches the client: a Fail replaces it, so the effect
// happened but the client is told otherwise.
func (i *Injector) After(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !i.pending(AfterEffect) {
			next.ServeHTTP(w, r)
			return
		}
		buf := &bufferedResponse{header: http.Header{}}
		next.ServeHTTP(buf, r)

		rule, release, ok := i.take(r, AfterEffect)
		if ok {
			if i.answer(w, r, rule) {
				return
			}
			i.hold(r.Context(), rule, release)
		}
		buf.sendTo(w)
	})
}

// answer carries out a rule that replaces the provider's answer (Fail,
// Respond, Reset) and reports whether it did; holds are left to the caller.
func (i *Injector) answer(w http.ResponseWriter, r *http.Request, rule Rule) bool {
	switch rule.Action {
	case Fail:
		i.fail(w, rule.Status)
	case Respond:
		w.Header().Set(Header, string(Respond))
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(rule.Status)
		_, _ = w.Write([]byte(rule.Body))
	case Reset:
		// The whole request is read first, so the client has written it and
		// is waiting for an answer when the connection goes.
		_, _ = io.Copy(io.Discard, r.Body)
		resetConnection(w)
	default:
		return false
	}
	return true
}

// resetConnection drops the client's connection with a TCP reset and no
// answer. A writer that cannot be hijacked (HTTP/2) falls back to aborting
// the handler, which net/http turns into a dropped stream.
func resetConnection(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = conn.Close()
}

// bufferedResponse keeps a whole response back so it can be delayed,
// withheld or replaced after the handler that produced it has returned.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header { return b.header }

func (b *bufferedResponse) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	b.WriteHeader(http.StatusOK)
	return b.body.Write(p)
}

func (b *bufferedResponse) sendTo(w http.ResponseWriter) {
	for k, v := range b.header {
		w.Header()[k] = v
	}
	b.WriteHeader(http.StatusOK)
	w.WriteHeader(b.status)
	// The client may have given up while the response was held; a failed
	// write is exactly the lost response being simulated.
	_, _ = w.Write(b.body.Bytes())
}
