package devtemporal

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// FindFreePort returns a port on loopback that is free together with the
// ports the server derives from it, for tests and side-by-side instances.
// Another process may still take it before Start does.
//
// It picks below the kernel's ephemeral range: every outgoing connection
// takes a local port from that range, so on a busy machine a run of four
// ports found free there is often half taken by the time the server binds.
func FindFreePort() (int, error) {
	lo, hi := quietPorts()
	for range 100 {
		base := lo + rand.IntN(hi-lo-portsUsed)
		if portsFree(base, base+portsUsed-1) {
			return base, nil
		}
	}
	return 0, errors.New("no run of free ports found")
}

// Default bounds of the ports FindFreePort picks from, below Linux's
// default ephemeral range (32768–60999) and BSD's and macOS's (49152 up).
const (
	quietPortsLow  = 10000
	quietPortsHigh = 32768
	// minQuietPorts is the fewest ports worth picking from; with fewer the
	// kernel's own choice is no worse.
	minQuietPorts = 1000
)

// quietPorts is the range FindFreePort picks from: up to where the
// kernel's ephemeral range starts, where it says so.
func quietPorts() (lo, hi int) {
	lo, hi = quietPortsLow, quietPortsHigh
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return lo, hi
	}
	fields := strings.Fields(string(b))
	if len(fields) != 2 {
		return lo, hi
	}
	first, err := strconv.Atoi(fields[0])
	if err != nil {
		return lo, hi
	}
	if first-lo >= minQuietPorts {
		return lo, min(first, 65536)
	}
	// The ephemeral range starts too low to stay under; pick above it.
	last, err := strconv.Atoi(fields[1])
	if err == nil && 65536-(last+1) >= minQuietPorts {
		return last + 1, 65536
	}
	return 1024, 65536
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
