package server

import (
	"net"
	"sync"
)

// handoff shares one listening socket between two HTTP servers in turn:
// the start-up server, which answers /readyz while dependencies come up,
// and then the API. The socket stays open across the hand-over, so a
// client never sees the port refuse connections in between.
type handoff struct {
	ln    net.Listener
	conns chan net.Conn
	stop  chan struct{} // closed when the socket closes
	once  sync.Once
	err   error // Accept's error once stop is closed
}

func newHandoff(ln net.Listener) *handoff {
	h := &handoff{ln: ln, conns: make(chan net.Conn), stop: make(chan struct{})}
	go h.accept()
	return h
}

func (h *handoff) accept() {
	for {
		c, err := h.ln.Accept()
		if err != nil {
			h.shut(err)
			return
		}
		select {
		case h.conns <- c:
		case <-h.stop:
			_ = c.Close()
			return
		}
	}
}

func (h *handoff) shut(err error) {
	h.once.Do(func() {
		h.err = err
		close(h.stop)
	})
}

// close closes the socket.
func (h *handoff) close() error {
	err := h.ln.Close()
	h.shut(net.ErrClosed)
	return err
}

// view is a listener over the shared socket. Closing a view stops it
// accepting; closing the final one closes the socket too.
func (h *handoff) view(final bool) net.Listener {
	return &handoffView{h: h, final: final, done: make(chan struct{})}
}

type handoffView struct {
	h     *handoff
	final bool
	done  chan struct{}
	once  sync.Once
}

func (v *handoffView) Accept() (net.Conn, error) {
	select {
	case c := <-v.h.conns:
		return c, nil
	case <-v.done:
		return nil, net.ErrClosed
	case <-v.h.stop:
		return nil, v.h.err
	}
}

func (v *handoffView) Close() error {
	var err error
	v.once.Do(func() {
		close(v.done)
		if v.final {
			err = v.h.close()
		}
	})
	return err
}

func (v *handoffView) Addr() net.Addr { return v.h.ln.Addr() }
