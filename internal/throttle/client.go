package throttle

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// Client is the address r's failures count against: the connection's
// peer, or, when the peer is one of Config.TrustedProxies, the nearest
// address in X-Forwarded-For that is not. An IPv6 address counts by its
// /64, which one host is commonly given whole. A request with no peer
// address was handed over in process by maestro itself, which checked its
// caller already, and is empty: nothing counts against it.
func (t *Throttle) Client(r *http.Request) string {
	peer, ok := parseHost(r.RemoteAddr)
	if !ok {
		return r.RemoteAddr
	}
	if t.trusted(peer) {
		hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
		for i := len(hops) - 1; i >= 0; i-- {
			hop, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
			if err != nil {
				// A hop the proxies did not write; trust nothing before it.
				break
			}
			peer = hop.Unmap()
			if !t.trusted(peer) {
				break
			}
		}
	}
	return bucket(peer)
}

func (t *Throttle) trusted(a netip.Addr) bool {
	for _, p := range t.cfg.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// parseHost reads the address of a RemoteAddr ("host:port").
func parseHost(remote string) (netip.Addr, bool) {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap().WithZone(""), true
}

func bucket(a netip.Addr) string {
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}

// RetryAfter sets the Retry-After header for a wait: whole seconds,
// rounded up, at least one.
func RetryAfter(w http.ResponseWriter, wait time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(Seconds(wait)))
}

// Seconds is a wait in whole seconds, rounded up, at least one.
func Seconds(wait time.Duration) int {
	return max(int((wait+time.Second-1)/time.Second), 1)
}

// ParseTrustedProxies reads a comma-separated list of addresses and CIDR
// prefixes, such as "10.0.0.0/8, 192.0.2.10".
func ParseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if a, err := netip.ParseAddr(f); err == nil {
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			return nil, fmt.Errorf("%q is neither an IP address nor a CIDR prefix such as 10.0.0.0/8", f)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}
