//go:build chaos

package chaos

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"time"
)

// rrProxy spreads requests round-robin over the API processes, as a load
// balancer without health checks does: a request that lands on a process
// that is down, or that dies under it, is answered 502 Bad Gateway, and
// the client tries again.
type rrProxy struct {
	addr     string
	backends []*httputil.ReverseProxy
	inFlight []atomic.Int64
	next     atomic.Uint64
	srv      *http.Server
}

// startRRProxy serves on a free loopback address in front of backends.
func startRRProxy(backends []string) (*rrProxy, error) {
	transport := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 128,
		IdleConnTimeout:     30 * time.Second,
	}
	p := &rrProxy{inFlight: make([]atomic.Int64, len(backends))}
	for _, addr := range backends {
		target := &url.URL{Scheme: "http", Host: addr}
		p.backends = append(p.backends, &httputil.ReverseProxy{
			Rewrite: func(r *httputil.ProxyRequest) {
				r.SetURL(target)
				r.Out.Host = r.In.Host
			},
			Transport: transport,
			ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
				http.Error(w, fmt.Sprintf("the API process at %s failed: %v", addr, err), http.StatusBadGateway)
			},
		})
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("error listening for the API's proxy: %w", err)
	}
	p.addr = ln.Addr().String()
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	// Serve ends only when the proxy is closed, or its listener fails,
	// which the clients see for themselves.
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

func (p *rrProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	i := int(p.next.Add(1) % uint64(len(p.backends)))
	p.inFlight[i].Add(1)
	defer p.inFlight[i].Add(-1)
	p.backends[i].ServeHTTP(w, r)
}

// busy is how many requests backend i holds open.
func (p *rrProxy) busy(i int) int64 { return p.inFlight[i].Load() }

func (p *rrProxy) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = p.srv.Shutdown(ctx)
}
