// Package pgwire relays PostgreSQL connections and counts, off the wire,
// the work a client asks of the server: round trips, statements,
// transactions and connections.
package pgwire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
)

// The server config offers no seam to trace the ledger's queries, and
// PostgreSQL's own counters (pg_stat_database) reach readers up to seconds
// late. So a relay sits between maestro and PostgreSQL and reads the wire
// protocol as it passes: exact, immediate, and no product code changed.
// The price is one loopback hop per round trip.

// PostgreSQL's startup request codes (protocol 3.0, "Message Formats").
const (
	pgSSLRequest    = 80877103
	pgGSSENCRequest = 80877104
	pgCancelRequest = 80877102
	// pgMaxStartup bounds a startup packet: the server refuses larger ones.
	pgMaxStartup = 10000
)

// Counts are running totals of what the relayed clients asked of
// PostgreSQL.
type Counts struct {
	// RoundTrips are request cycles: each ReadyForQuery the server sends
	// after the one that ends a connection's start-up is the end of one
	// exchange the client waited on.
	RoundTrips int64
	// Statements are Execute and simple Query messages the client sent.
	Statements int64
	// Transactions are ReadyForQuery messages that return a connection to
	// idle after a statement ran or a transaction block was open: commits,
	// rollbacks and single-statement (autocommit) transactions.
	Transactions int64
	// Connections are connections opened to PostgreSQL.
	Connections int64
	// Prepares are the round trips among RoundTrips in which the client
	// ran no statement: a statement prepared (parsed and described) on a
	// connection before its first use there. Which of a pool's
	// connections serves a statement first is chance, so work meant to be
	// compared call by call leaves these out.
	Prepares int64
}

// Minus is the work done between two readings: c, the later, minus o.
func (c Counts) Minus(o Counts) Counts {
	return Counts{
		RoundTrips:   c.RoundTrips - o.RoundTrips,
		Statements:   c.Statements - o.Statements,
		Transactions: c.Transactions - o.Transactions,
		Connections:  c.Connections - o.Connections,
		Prepares:     c.Prepares - o.Prepares,
	}
}

// Proxy relays PostgreSQL connections and counts them.
type Proxy struct {
	ln                                                net.Listener
	upstream                                          string
	roundTrips, statements, transactions, connections atomic.Int64
	prepares                                          atomic.Int64

	mu    sync.Mutex
	conns map[net.Conn]bool
	wg    sync.WaitGroup
}

// ErrTLSRequired says the database URL requires TLS, which a relay that
// reads the protocol cannot offer.
var ErrTLSRequired = errors.New("counting PostgreSQL round trips relays it in plain TCP, which the URL's sslmode forbids")

// Start listens on loopback and returns the proxy with the URL clients
// should use: databaseURL with its host replaced by the proxy's. The local
// hop is plain TCP and so is the proxy's own connection, so the URL must
// not require TLS.
func Start(databaseURL string) (*Proxy, string, error) {
	u, err := url.Parse(databaseURL)
	if err != nil {
		return nil, "", fmt.Errorf("error parsing the database URL: %w", err)
	}
	q := u.Query()
	switch q.Get("sslmode") {
	case "", "disable", "allow", "prefer":
	default:
		return nil, "", fmt.Errorf("sslmode=%s: %w", q.Get("sslmode"), ErrTLSRequired)
	}
	if u.Hostname() == "" || u.Query().Has("host") {
		return nil, "", errors.New("counting PostgreSQL round trips needs a database URL naming one host over TCP")
	}
	port := u.Port()
	if port == "" {
		port = "5432"
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", fmt.Errorf("error listening for the PostgreSQL relay: %w", err)
	}
	p := &Proxy{ln: ln, upstream: net.JoinHostPort(u.Hostname(), port), conns: map[net.Conn]bool{}}
	u.Host = ln.Addr().String()
	q.Set("sslmode", "disable")
	u.RawQuery = q.Encode()
	p.wg.Go(p.accept)
	return p, u.String(), nil
}

// Counts reads the running totals.
func (p *Proxy) Counts() Counts {
	return Counts{
		RoundTrips:   p.roundTrips.Load(),
		Statements:   p.statements.Load(),
		Transactions: p.transactions.Load(),
		Connections:  p.connections.Load(),
		Prepares:     p.prepares.Load(),
	}
}

// Stop closes the listener and every relayed connection; call it once the
// clients have closed theirs.
func (p *Proxy) Stop() error {
	err := p.ln.Close()
	p.mu.Lock()
	for c := range p.conns {
		_ = c.Close()
	}
	// A connection accepted from now on is refused by track.
	p.conns = nil
	p.mu.Unlock()
	p.wg.Wait()
	return err
}

func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Go(func() { p.relay(c) })
	}
}

func (p *Proxy) track(c net.Conn, open bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !open {
		delete(p.conns, c)
		return true
	}
	if p.conns == nil {
		return false
	}
	p.conns[c] = true
	return true
}

// relay answers TLS requests itself, then passes the start-up packet and
// everything after it through, scanning both directions.
func (p *Proxy) relay(client net.Conn) {
	defer client.Close()
	if !p.track(client, true) {
		return
	}
	defer p.track(client, false)
	startup, err := readStartup(client)
	if err != nil {
		return
	}
	server, err := net.Dial("tcp", p.upstream)
	if err != nil {
		return
	}
	defer server.Close()
	if !p.track(server, true) {
		return
	}
	defer p.track(server, false)
	if _, err := server.Write(startup); err != nil {
		return
	}
	if binary.BigEndian.Uint32(startup[4:8]) == pgCancelRequest {
		_, _ = io.Copy(io.Discard, server)
		return
	}
	p.connections.Add(1)
	var busy atomic.Bool // a statement ran or a block is open since the last idle ReadyForQuery
	var ran atomic.Bool  // a statement ran since the last ReadyForQuery
	done := make(chan struct{})
	go func() {
		defer close(done)
		fromClient := &pgScanner{onMessage: func(typ byte, _ byte) {
			if typ == 'Q' || typ == 'E' {
				p.statements.Add(1)
				busy.Store(true)
				ran.Store(true)
			}
		}}
		_ = pipe(server, client, fromClient)
		_ = server.Close()
	}()
	first := true
	fromServer := &pgScanner{wantFirstByte: 'Z', onMessage: func(typ byte, status byte) {
		if typ != 'Z' {
			return
		}
		if first {
			first = false
			return
		}
		p.roundTrips.Add(1)
		if !ran.Swap(false) {
			p.prepares.Add(1)
		}
		if status != 'I' {
			busy.Store(true)
			return
		}
		if busy.Swap(false) {
			p.transactions.Add(1)
		}
	}}
	_ = pipe(client, server, fromServer)
	_ = client.Close()
	<-done
}

// readStartup reads the client's first packet, declining TLS and GSS
// encryption so that what follows can be read.
func readStartup(c net.Conn) ([]byte, error) {
	for {
		var hdr [8]byte
		if _, err := io.ReadFull(c, hdr[:]); err != nil {
			return nil, err
		}
		n := binary.BigEndian.Uint32(hdr[:4])
		if n < 8 || n > pgMaxStartup {
			return nil, fmt.Errorf("start-up packet of %d bytes", n)
		}
		code := binary.BigEndian.Uint32(hdr[4:])
		if code == pgSSLRequest || code == pgGSSENCRequest {
			if _, err := c.Write([]byte{'N'}); err != nil {
				return nil, err
			}
			continue
		}
		pkt := make([]byte, n)
		copy(pkt, hdr[:])
		if _, err := io.ReadFull(c, pkt[8:]); err != nil {
			return nil, err
		}
		return pkt, nil
	}
}

// pipe copies src to dst chunk by chunk, scanning each chunk as it goes:
// one read and one write per chunk keeps the relay's own cost to a hop.
func pipe(dst io.Writer, src io.Reader, s *pgScanner) error {
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			s.scan(buf[:n])
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return werr
			}
		}
		if err != nil {
			return err
		}
	}
}

// pgScanner splits a stream of protocol messages (a type byte, then a
// big-endian length that counts itself) across arbitrary chunk borders.
type pgScanner struct {
	// wantFirstByte is the message type whose first body byte onMessage
	// needs; for other types it gets 0.
	wantFirstByte byte
	onMessage     func(typ, first byte)

	hdr  [5]byte
	hdrN int
	// skip is what is left of the current message's body.
	skip int
	// pending is a message waiting for its first body byte.
	pending bool
}

func (s *pgScanner) scan(b []byte) {
	for len(b) > 0 {
		if s.pending {
			s.pending = false
			s.onMessage(s.hdr[0], b[0])
		}
		if s.skip > 0 {
			n := min(s.skip, len(b))
			s.skip -= n
			b = b[n:]
			continue
		}
		n := copy(s.hdr[s.hdrN:], b)
		s.hdrN += n
		b = b[n:]
		if s.hdrN < len(s.hdr) {
			return
		}
		s.hdrN = 0
		s.skip = int(binary.BigEndian.Uint32(s.hdr[1:])) - 4
		if s.hdr[0] == s.wantFirstByte && s.skip > 0 {
			s.pending = true
			continue
		}
		s.onMessage(s.hdr[0], 0)
	}
}
