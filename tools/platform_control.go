package tools

import (
	"regexp"
	"strings"
)

// DefaultControlHosts are the hosts a Vapi call's control URL may name
// when the platform block does not say: Vapi's live call control URLs are
// on its own domain, under per-region host names that it has renamed
// before (aws-us-west-2-production1-phone-call-websocket.vapi.ai,
// phone-call-websocket.aws-us-west-2-backend-production2.vapi.ai), so the
// rule is the domain rather than today's names.
var DefaultControlHosts = []string{"*.vapi.ai"}

// controlHost is a host name, or "*." and a domain of two labels or more.
var controlHost = regexp.MustCompile(`^(\*\.)?([a-z0-9]([a-z0-9-]*[a-z0-9])?\.)+[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)

// buildControlHosts reads the hosts a pushed result may be posted to. A
// control URL arrives in the signed body of a call, so this list, not the
// body, says where maestro posts.
func buildControlHosts(p *problems, row string, pf *platformFile, pl *Platform) {
	if pf.ControlHosts == nil {
		if pl.PushResults {
			pl.ControlHosts = DefaultControlHosts
		}
		return
	}
	if !pf.PushResults {
		p.add(row, "platform.control_hosts", "applies only with push_results: true")
		return
	}
	if len(pf.ControlHosts) == 0 {
		p.add(row, "platform.control_hosts", "is empty: leave it out for Vapi's own hosts (%s)", strings.Join(DefaultControlHosts, ", "))
	}
	for _, h := range pf.ControlHosts {
		h = strings.ToLower(h)
		if !controlHost.MatchString(h) {
			p.add(row, "platform.control_hosts", "%q is not a host name or *.domain with two labels or more (e.g. *.vapi.ai): no scheme, port, path or bare *", h)
			continue
		}
		pl.ControlHosts = append(pl.ControlHosts, h)
	}
}

// AllowsControlHost reports whether a pushed result may be posted to a
// control URL on host: an exact entry, or a "*.domain" entry that host
// is a subdomain of (the domain itself is not).
func (p *Platform) AllowsControlHost(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, h := range p.ControlHosts {
		if suffix, ok := strings.CutPrefix(h, "*"); ok {
			if strings.HasSuffix(host, suffix) && len(host) > len(suffix) {
				return true
			}
			continue
		}
		if host == h {
			return true
		}
	}
	return false
}
