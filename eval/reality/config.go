package reality

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/maestro-run/maestro/internal/connectors"
)

// Config is one reality run: where the providers are, how to reach them,
// and what to send each tool. It is read from YAML (or JSON, which is
// YAML) by LoadConfig.
type Config struct {
	// Catalog is the catalog file whose real-sync tools are fired, relative
	// to the config file. Optional: default the embedded demo catalog.
	Catalog string `yaml:"catalog"`
	Twilio  Twilio `yaml:"twilio"`
	SES     SES    `yaml:"ses"`
	// HTTPServices are the services the catalog's HTTP tools name.
	HTTPServices map[string]HTTPService `yaml:"http_services"`
	// Timeout bounds each provider request. Optional: default 10s.
	Timeout time.Duration `yaml:"timeout"`
	// Session holds the conversation facts templates may read, keyed as in
	// a request's session_context (caller_number, tenant_id, …).
	Session map[string]any `yaml:"session"`
	// Fixtures say how to call each tool, in the order they run.
	Fixtures []Fixture `yaml:"fixtures"`
}

// Twilio locates Twilio's Messages API. Messages are read back from the
// same endpoint with the same account.
type Twilio struct {
	BaseURL    string `yaml:"base_url"`
	AccountSID string `yaml:"account_sid"`
	AuthToken  string `yaml:"auth_token"`
	From       string `yaml:"from"`
}

// SES locates the SES v2 API and the store that records what it accepted.
type SES struct {
	Endpoint        string `yaml:"endpoint"`
	Region          string `yaml:"region"`
	AccessKeyID     string `yaml:"access_key_id"`
	SecretAccessKey string `yaml:"secret_access_key"`
	From            string `yaml:"from"`
	// StoreURL serves GET /store, an SES emulator's record of accepted
	// mail. Real SES offers no read API (delivery events go to SNS), so an
	// email tool cannot pass without it.
	StoreURL string `yaml:"store_url"`
}

// HTTPService is one HTTP API the catalog names.
type HTTPService struct {
	BaseURL string `yaml:"base_url"`
	Token   string `yaml:"token"`
}

// Fixture is how one tool is called and how its effect is read back.
type Fixture struct {
	Tool string `yaml:"tool"`
	// Skip, when set, is why the tool is not fired. The reason is reported
	// with the result; a tool is never left out silently.
	Skip string `yaml:"skip"`
	// Args are the call's arguments. Strings are templates that may read
	// the receipts of tools earlier in the run, keyed by tool name:
	// "{{.Receipts.create_work_order.ID}}" calls a compensation on the
	// resource an earlier call created.
	Args map[string]any `yaml:"args"`
	// Read is the path an HTTP tool's resource is read back from, a
	// template over .Receipt and .Args, e.g. "/v1/work_orders/{{.Receipt.ID}}".
	// Required for HTTP tools, which have no other way to prove the effect.
	Read string `yaml:"read"`
	// Expect lists fields the read-back resource must hold, e.g.
	// status: cancelled. The resource's id must always equal the receipt's.
	Expect map[string]any `yaml:"expect"`
}

// envRef is a ${NAME} reference in an endpoint or credential value.
var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// LoadConfig reads a config file. Endpoint and credential values may be
// written as ${NAME} and are then looked up with lookup (os.LookupEnv in
// the CLI), so secrets stay out of the file; a reference to an unset name
// is an error, never an empty value.
func LoadConfig(path string, lookup func(string) (string, bool)) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("error reading reality config: %w", err)
	}
	cfg, err := ParseConfig(data, lookup)
	if err != nil {
		return Config{}, fmt.Errorf("error loading reality config %s: %w", path, err)
	}
	if cfg.Catalog != "" && !filepath.IsAbs(cfg.Catalog) {
		cfg.Catalog = filepath.Join(filepath.Dir(path), cfg.Catalog)
	}
	return cfg, nil
}

// ParseConfig parses a config document; see LoadConfig.
func ParseConfig(data []byte, lookup func(string) (string, bool)) (Config, error) {
	var cfg Config
	dec := yaml.NewDecoder(bytes.NewReader(data))
	// A misspelt field would otherwise silently drop an expectation.
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil {
		return Config{}, fmt.Errorf("error parsing: %w", err)
	}
	if err := cfg.expand(lookup); err != nil {
		return Config{}, err
	}
	if err := cfg.validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// expand resolves ${NAME} references in endpoint and credential values.
func (c *Config) expand(lookup func(string) (string, bool)) error {
	missing := map[string]bool{}
	expand := func(fields ...*string) {
		for _, f := range fields {
			*f = envRef.ReplaceAllStringFunc(*f, func(ref string) string {
				name := envRef.FindStringSubmatch(ref)[1]
				v, ok := lookup(name)
				if !ok {
					missing[name] = true
				}
				return v
			})
		}
	}
	expand(&c.Twilio.BaseURL, &c.Twilio.AccountSID, &c.Twilio.AuthToken, &c.Twilio.From,
		&c.SES.Endpoint, &c.SES.Region, &c.SES.AccessKeyID, &c.SES.SecretAccessKey, &c.SES.From, &c.SES.StoreURL)
	for name, svc := range c.HTTPServices {
		expand(&svc.BaseURL, &svc.Token)
		c.HTTPServices[name] = svc
	}
	if len(missing) > 0 {
		return fmt.Errorf("unset variables referenced: %s", strings.Join(slices.Sorted(maps.Keys(missing)), ", "))
	}
	return nil
}

func (c *Config) validate() error {
	var errs []error
	seen := map[string]bool{}
	for i, f := range c.Fixtures {
		switch {
		case f.Tool == "":
			errs = append(errs, fmt.Errorf("fixtures[%d]: tool is required", i))
		case seen[f.Tool]:
			errs = append(errs, fmt.Errorf("fixtures[%d]: tool %s has a fixture already", i, f.Tool))
		case f.Skip != "" && (f.Args != nil || f.Read != "" || f.Expect != nil):
			errs = append(errs, fmt.Errorf("fixtures[%d] (%s): a skipped tool takes no args, read or expect", i, f.Tool))
		}
		seen[f.Tool] = true
	}
	if c.Timeout < 0 {
		errs = append(errs, errors.New("timeout must not be negative"))
	}
	return errors.Join(errs...)
}

// timeout is the bound on each provider request.
func (c Config) timeout() time.Duration {
	if c.Timeout == 0 {
		return 10 * time.Second
	}
	return c.Timeout
}

// connectorSet builds maestro's real connectors for the configured
// endpoints.
func (c Config) connectorSet() (connectors.Set, error) {
	services := make(map[string]connectors.HTTPService, len(c.HTTPServices))
	for name, s := range c.HTTPServices {
		services[name] = connectors.HTTPService{BaseURL: s.BaseURL, Token: s.Token}
	}
	set, err := connectors.NewSet(
		connectors.TwilioConfig{BaseURL: c.Twilio.BaseURL, AccountSID: c.Twilio.AccountSID, AuthToken: c.Twilio.AuthToken, From: c.Twilio.From, Timeout: c.timeout()},
		connectors.SESConfig{Endpoint: c.SES.Endpoint, Region: c.SES.Region, AccessKeyID: c.SES.AccessKeyID, SecretAccessKey: c.SES.SecretAccessKey, From: c.SES.From, Timeout: c.timeout()},
		connectors.HTTPConfig{Services: services, Timeout: c.timeout()},
	)
	if err != nil {
		return nil, fmt.Errorf("error building connectors: %w", err)
	}
	return set, nil
}
