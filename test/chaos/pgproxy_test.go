//go:build chaos

package chaos

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
	"syscall"
	"time"
)

// pgProxy relays TCP connections to PostgreSQL, so the run can restart
// PostgreSQL as its clients see it: every open connection dropped at once,
// new ones refused for a while, then the same address serving again.
type pgProxy struct {
	target string
	addr   string

	mu    sync.Mutex
	ln    net.Listener // nil while PostgreSQL is down
	conns map[net.Conn]struct{}
}

// startPGProxy listens on a free loopback port and relays to target.
func startPGProxy(target string) (*pgProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("error listening for PostgreSQL's proxy: %w", err)
	}
	p := &pgProxy{target: target, addr: ln.Addr().String(), conns: map[net.Conn]struct{}{}}
	p.serve(ln)
	return p, nil
}

// dsn is the connection string dsn with its server replaced by the proxy.
func (p *pgProxy) dsn(dsn string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", fmt.Errorf("PostgreSQL's connection string must be a postgres:// URL, got %q", dsn)
	}
	u.Host = p.addr
	return u.String(), nil
}

// restart drops every connection, refuses new ones for outage, then
// accepts again on the same address. It returns how many client
// connections it dropped.
func (p *pgProxy) restart(outage time.Duration) (int, error) {
	p.mu.Lock()
	dropped := p.down()
	p.mu.Unlock()
	time.Sleep(outage) // the outage itself, not a wait for a condition
	ln, err := listenAgain(p.addr)
	if err != nil {
		return dropped, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.serve(ln)
	return dropped, nil
}

// close stops the proxy for good.
func (p *pgProxy) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down()
}

// down closes the listener and every connection; p.mu is held. It
// returns how many client connections it closed.
func (p *pgProxy) down() int {
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	n := len(p.conns) / 2
	for conn := range p.conns {
		_ = conn.Close()
	}
	clear(p.conns)
	return n
}

// serve accepts on ln until it is closed; p.mu is held or p not shared yet.
func (p *pgProxy) serve(ln net.Listener) {
	p.ln = ln
	go func() {
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			go p.relay(ln, client)
		}
	}()
}

func (p *pgProxy) relay(ln net.Listener, client net.Conn) {
	server, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		_ = client.Close()
		return
	}
	p.mu.Lock()
	if p.ln != ln { // PostgreSQL went down while this one was connecting
		p.mu.Unlock()
		_ = client.Close()
		_ = server.Close()
		return
	}
	p.conns[client], p.conns[server] = struct{}{}, struct{}{}
	p.mu.Unlock()

	var wg sync.WaitGroup
	wg.Go(func() { pipe(server, client) })
	pipe(client, server)
	wg.Wait()
	p.mu.Lock()
	delete(p.conns, client)
	delete(p.conns, server)
	p.mu.Unlock()
}

// pipe copies from src to dst, then closes both, so that either side
// ending ends the other.
func pipe(dst, src net.Conn) {
	_, _ = io.Copy(dst, src)
	_ = dst.Close()
	_ = src.Close()
}

// listenAgain binds addr again; the port is ours, but a connection the
// kernel still tears down can hold it for a moment.
func listenAgain(addr string) (net.Listener, error) {
	var err error
	for range 50 {
		var ln net.Listener
		if ln, err = net.Listen("tcp", addr); err == nil {
			return ln, nil
		}
		if !errors.Is(err, syscall.EADDRINUSE) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil, fmt.Errorf("error listening on %s again: %w", addr, err)
}
