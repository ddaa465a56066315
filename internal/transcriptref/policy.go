package transcriptref

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Defaults and bounds of a Policy.
const (
	// DefaultMaxBytes caps a fetched transcript.
	DefaultMaxBytes = 1 << 20
	// MaxMaxBytes keeps the cap below Temporal's 2 MiB payload limit, with
	// room for the rest of a payload.
	MaxMaxBytes = 2<<20 - 256<<10
	// DefaultTimeout bounds one fetch.
	DefaultTimeout = 30 * time.Second
	// maxRedirects bounds a chain of redirects, each on the allowlist.
	maxRedirects = 5
)

// Policy says which transcript_ref URLs may be fetched.
type Policy struct {
	// Hosts are the host or host:port entries transcripts may be fetched
	// from. A bare host allows the scheme's default port only. Optional:
	// empty refuses every transcript_ref.
	Hosts []string
	// AllowHTTP permits plain http, for dev mode. Optional: default https
	// only.
	AllowHTTP bool
	// MaxBytes caps a transcript's size. Optional: default DefaultMaxBytes.
	MaxBytes int64
	// Timeout bounds one fetch, redirects included. Optional: default
	// DefaultTimeout.
	Timeout time.Duration
}

// WithDefaults returns p with optional fields filled in.
func (p Policy) WithDefaults() Policy {
	if p.MaxBytes == 0 {
		p.MaxBytes = DefaultMaxBytes
	}
	if p.Timeout == 0 {
		p.Timeout = DefaultTimeout
	}
	return p
}

// Validate reports entries that are not a host or host:port, and a size
// cap out of range.
func (p Policy) Validate() error {
	var errs []error
	for _, h := range p.Hosts {
		if _, _, err := splitEntry(h); err != nil {
			errs = append(errs, fmt.Errorf("transcript host %q: %w", h, err))
		}
	}
	if p.MaxBytes < 0 || p.MaxBytes > MaxMaxBytes {
		errs = append(errs, fmt.Errorf("transcript size cap %d must be between 1 and %d bytes (below Temporal's payload limit)", p.MaxBytes, MaxMaxBytes))
	}
	return errors.Join(errs...)
}

// ParseHosts splits a comma-separated list of host[:port] entries.
func ParseHosts(s string) []string {
	var out []string
	for _, h := range strings.Split(s, ",") {
		if h = strings.TrimSpace(h); h != "" {
			out = append(out, h)
		}
	}
	return out
}

// Rule names the policy rule a transcript_ref broke.
type Rule string

const (
	RuleDisabled   Rule = "transcript_ref_disabled"
	RuleMalformed  Rule = "malformed_url"
	RuleHTTPSOnly  Rule = "https_only"
	RuleNoUserinfo Rule = "no_credentials_in_url"
	RuleHost       Rule = "host_not_allowlisted"
	RuleRedirect   Rule = "redirect_off_allowlist"
	RuleSize       Rule = "size_cap"
	RuleFormat     Rule = "transcript_format"
)

// RefusedError is a transcript_ref the policy refuses. Retrying cannot
// help; the rule says what to change.
type RefusedError struct {
	Rule   Rule
	Detail string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("transcript_ref refused by rule %s: %s", e.Rule, e.Detail)
}

// Check refuses a URL the policy does not allow, with the rule it broke.
func (p Policy) Check(raw string) error {
	if len(p.Hosts) == 0 {
		return &RefusedError{Rule: RuleDisabled, Detail: "no transcript hosts are configured (MAESTRO_TRANSCRIPT_HOSTS), so maestro fetches no transcript by reference; send the transcript inline"}
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return &RefusedError{Rule: RuleMalformed, Detail: "transcript_ref must be an absolute http(s) URL"}
	}
	return p.checkURL(u)
}

func (p Policy) checkURL(u *url.URL) error {
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && p.AllowHTTP:
	default:
		return &RefusedError{Rule: RuleHTTPSOnly, Detail: fmt.Sprintf("scheme %q is not allowed: transcripts are fetched over https only", u.Scheme)}
	}
	if u.User != nil {
		return &RefusedError{Rule: RuleNoUserinfo, Detail: "transcript_ref must not carry credentials"}
	}
	port := u.Port()
	if port == "" {
		port = defaultPort(u.Scheme)
	}
	if !p.allows(u.Hostname(), port, u.Scheme) {
		return &RefusedError{Rule: RuleHost, Detail: fmt.Sprintf("host %s is not on the transcript host allowlist", net.JoinHostPort(u.Hostname(), port))}
	}
	return nil
}

func (p Policy) allows(host, port, scheme string) bool {
	for _, entry := range p.Hosts {
		h, ep, err := splitEntry(entry)
		if err != nil {
			continue
		}
		if ep == "" {
			ep = defaultPort(scheme)
		}
		if strings.EqualFold(h, host) && ep == port {
			return true
		}
	}
	return false
}

// splitEntry splits host[:port]; an IPv6 address needs brackets.
func splitEntry(entry string) (host, port string, err error) {
	if strings.ContainsAny(entry, "/?#@ ") || entry == "" {
		return "", "", errors.New("must be a host or host:port, without scheme or path")
	}
	if h, p, err := net.SplitHostPort(entry); err == nil {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return "", "", errors.New("port must be 1-65535")
		}
		return strings.Trim(h, "[]"), p, nil
	}
	if strings.Contains(entry, ":") && !strings.HasPrefix(entry, "[") {
		return "", "", errors.New("must be a host or host:port (bracket IPv6 addresses)")
	}
	return strings.Trim(entry, "[]"), "", nil
}

func defaultPort(scheme string) string {
	if scheme == "http" {
		return "80"
	}
	return "443"
}
