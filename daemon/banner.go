package daemon

import (
	"fmt"
	"io"

	"github.com/maestro-run/maestro/tools"
)

// PrintBanner tells a developer how to reach a dev-mode maestro.
func (d *Daemon) PrintBanner(w io.Writer) {
	fmt.Fprintf(w, "maestro is serving on %s\n", d.URL())
	if !d.cfg.Dev {
		return
	}
	fmt.Fprintf(w, `
  dev mode: embedded Temporal, %s ledger, provider stand-ins on loopback
  agent key: %s
  ops key:   %s
  stand-ins: twilio %s  ses %s  sandbox %s

  try:
    curl -s -H 'Authorization: Bearer %s' -H 'Content-Type: application/json' \
      -d '{"session_id":"call-1","tool":"lookup_tenant","args":{"tenant_id":"t_100"},"operation_key":"call-1:lookup"}' \
      %s/v1/invocations

`, d.ledgerKind(), tools.DemoAgentKey, tools.DemoOpsKey,
		d.standins.TwilioURL(), d.standins.SESURL(), d.standins.SandboxURL(),
		tools.DemoAgentKey, d.URL())
}

func (d *Daemon) ledgerKind() string {
	if d.cfg.DatabaseURL != "" {
		return "PostgreSQL"
	}
	return "SQLite (" + d.cfg.ledgerPath() + ")"
}
