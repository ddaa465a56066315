package devtemporal

import (
	"context"
	"errors"
	"net"
	"strconv"
)

// FindFreePort returns a port on loopback that is free together with the
// ports the server derives from it, for tests and side-by-side instances.
// Another process may still take it before Start does.
func FindFreePort() (int, error) {
	for range 20 {
		l, err := net.Listen("tcp", net.JoinHostPort(loopback, "0"))
		if err != nil {
			return 0, err
		}
		base := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		if base+portsUsed-1 <= 65535 && portsFree(base+1, base+portsUsed-1) {
			return base, nil
		}
	}
	return 0, errors.New("no run of free ports found")
}

func portsFree(from, to int) bool {
	for port := from; port <= to; port++ {
		l, err := net.Listen("tcp", net.JoinHostPort(loopback, strconv.Itoa(port)))
		if err != nil {
			return false
		}
		_ = l.Close()
	}
	return true
}

// ErrPortTaken is wrapped by Start's error when a port the server needs is
// already bound.
var ErrPortTaken = errors.New("a port the Temporal server needs is taken")

// StartOnFreePort starts a server on ports found free, trying a new run of
// ports when another process takes one between the search and the bind,
// as tests running side by side do. cfg.Port is ignored.
func StartOnFreePort(ctx context.Context, cfg Config) (*Server, error) {
	var lastErr error
	for range 5 {
		port, err := FindFreePort()
		if err != nil {
			return nil, err
		}
		cfg.Port = port
		srv, err := Start(ctx, cfg)
		if !errors.Is(err, ErrPortTaken) {
			return srv, err
		}
		lastErr = err
	}
	return nil, lastErr
}
