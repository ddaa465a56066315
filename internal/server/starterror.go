package server

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
)

// StartError is a failure to start: what was being done, why it failed,
// and what the person starting maestro can do about it.
type StartError struct {
	// What is the step that failed, as "error <What>" reads.
	What string
	Err  error
	// Fix tells the reader what to change.
	Fix string
}

func (e *StartError) Error() string {
	return fmt.Sprintf("error %s: %v\nto fix: %s", e.What, e.Err, e.Fix)
}

func (e *StartError) Unwrap() error { return e.Err }

const providersFix = "set the variables named above: TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and TWILIO_FROM if the catalog texts; " +
	"SES_REGION and SES_FROM if it emails, with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN) " +
	"or else an instance or task role; and MAESTRO_HTTP_SERVICE_<NAME>_URL (and _TOKEN) for each HTTP service it names"

const demoKeysFix = "give each its own key: `starter keys new` prints a fresh key and its sha256 " +
	"(or pipe a key of yours to `starter keys hash`); put the sha256 in the catalog's api_key_sha256 " +
	"and hand the key only to that agent or operator"

const budgetFix = "raise --drain-timeout (MAESTRO_DRAIN_TIMEOUT) to the length named above, or leave it unset to have it cover " +
	"the catalog's longest platform budget, or shorten the budget"

const fenceFix = "give each tool named above what the fence asks for (docs/catalog.md describes the rules); " +
	"`starter catalog check FILE` runs the same checks without starting"

const codecFix = "give each key as MAESTRO_CODEC_KEYS=id=base64key[,id2=…] or as <id>.key files in MAESTRO_CODEC_KEY_DIR " +
	"(make one with: openssl rand -base64 32), and name the one to encrypt with in MAESTRO_CODEC_ACTIVE_KEY"

func catalogFix(err error) string {
	if errors.Is(err, fs.ErrNotExist) {
		return "check the path given with --catalog (MAESTRO_CATALOG), or write a catalog with `starter catalog init`"
	}
	return "correct every row and field named above (docs/catalog.md describes them), then start again"
}

func catalogName(cfg Config) string {
	if cfg.CatalogPath == "" {
		return "(embedded demo catalog)"
	}
	return cfg.CatalogPath
}

func storeFix(cfg Config) string {
	if cfg.DatabaseURL == "" {
		return "check that the data directory (--data-dir, MAESTRO_DATA_DIR) is writable"
	}
	return fmt.Sprintf("check that PostgreSQL is running and reachable at %s and that DATABASE_URL is right; "+
		"if it is still starting, raise --dependency-timeout (MAESTRO_DEPENDENCY_TIMEOUT)", postgresHost(cfg.DatabaseURL))
}

func temporalFix(cfg Config) string {
	if cfg.TemporalAddress == "" {
		return fmt.Sprintf("check that the embedded server's ports (%d to %d) are free and the data directory is writable", cfg.TemporalPort, cfg.TemporalPort+3)
	}
	return fmt.Sprintf("check that the Temporal frontend is running and reachable at %s (TEMPORAL_ADDRESS) and that namespace %q exists; "+
		"if it is still starting, raise --dependency-timeout (MAESTRO_DEPENDENCY_TIMEOUT)", cfg.TemporalAddress, cfg.Namespace)
}

// postgresHost names the server a connection string points at without
// repeating its password.
func postgresHost(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.Host == "" {
		return "the host in DATABASE_URL"
	}
	if _, _, err := net.SplitHostPort(u.Host); err != nil {
		return u.Host + ":5432"
	}
	return u.Host
}
