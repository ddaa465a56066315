package tools

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
)

// envName is what an environment variable's name may be: the secret lives
// in the environment, never in the catalog.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Callback is where an agent hears how a call it was told is pending ended:
// maestro posts the final observation there, signed with the secret in the
// environment variable SecretEnv.
type Callback struct {
	URL       *url.URL
	SecretEnv string
}

// Loopback reports whether the URL's host is this machine: the only place
// a plain-http callback may go, and only in dev mode.
func (c *Callback) Loopback() bool {
	return isLoopback(c.URL.Hostname())
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// buildCallback checks an agent's callback fields. A plain-http URL is
// accepted only for a loopback host here; whether it may be used at all
// (dev mode only) is the service's decision at start.
func buildCallback(p *problems, row string, af agentFile) *Callback {
	if af.CallbackURL == "" {
		if af.CallbackSecretEnv != "" {
			p.add(row, "callback_secret_env", "set without callback_url: there is nothing to sign")
		}
		return nil
	}
	u, err := url.Parse(af.CallbackURL)
	switch {
	case err != nil:
		p.add(row, "callback_url", "%v", err)
		return nil
	case u.Scheme != "https" && u.Scheme != "http", u.Host == "":
		p.add(row, "callback_url", "want an absolute https URL, got %q", af.CallbackURL)
		return nil
	case u.Scheme == "http" && !isLoopback(u.Hostname()):
		p.add(row, "callback_url", "plain http is allowed only to a loopback host (in dev mode); use https for %q", u.Host)
		return nil
	case u.User != nil:
		p.add(row, "callback_url", "must not carry credentials: the signature authenticates maestro")
		return nil
	}
	if af.CallbackSecretEnv == "" {
		p.add(row, "callback_secret_env", "required with callback_url: name the environment variable holding the signing secret")
		return nil
	}
	if !envName.MatchString(af.CallbackSecretEnv) {
		p.add(row, "callback_secret_env", "want an environment variable name, got %q", af.CallbackSecretEnv)
		return nil
	}
	return &Callback{URL: u, SecretEnv: af.CallbackSecretEnv}
}

// String is for messages: the URL, never the secret.
func (c *Callback) String() string {
	return fmt.Sprintf("%s (secret in $%s)", c.URL, c.SecretEnv)
}
