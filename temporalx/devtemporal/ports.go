package devtemporal

import (
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
