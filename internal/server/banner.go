package server

import (
	"fmt"
	"io"

	"github.com/maestro-run/maestro/internal/mcp"
	"github.com/maestro-run/maestro/internal/platform"
	"github.com/maestro-run/maestro/tools"
)

// PrintBanner tells a developer how to reach a dev-mode maestro.
func (d *Server) PrintBanner(w io.Writer) {
	fmt.Fprintf(w, "maestro is serving on %s\n", d.URL())
	if !d.cfg.Dev {
		return
	}
	fmt.Fprintf(w, `
  dev mode: embedded Temporal, %s ledger, provider stand-ins on loopback
  agent key: %s
  ops key:   %s
  stand-ins: twilio %s  ses %s  sandbox %s
  mcp:       %s (streamable HTTP, Authorization: Bearer <agent key>)

  try:
    curl -s -H 'Authorization: Bearer %s' -H 'Content-Type: application/json' \
      -d '{"session_id":"call-1","tool":"lookup_tenant","args":{"tenant_id":"t_100"},"operation_key":"call-1:lookup"}' \
      %s/v1/invocations

  histories are encrypted (key %q); read one with:
    temporal workflow show --address %s --namespace %s --workflow-id 'invocation/call-1:lookup' \
      --codec-endpoint '%s/codec/{namespace}' --codec-auth 'Bearer %s'

`, d.ledgerKind(), tools.DemoAgentKey, tools.DemoOpsKey,
		d.standins.TwilioURL(), d.standins.SESURL(), d.standins.SandboxURL(), d.URL()+mcp.Path,
		tools.DemoAgentKey, d.URL(),
		d.codec.ActiveKeyID(), d.TemporalAddress(), d.Namespace(), d.URL(), tools.DemoOpsKey)
	writePlatformRoutes(w, platform.Routes(d.Catalog, d.publicURL))
}

// writePlatformRoutes lists where each agent's voice platform reaches
// maestro, to paste into the platform's dashboard.
func writePlatformRoutes(w io.Writer, routes []platform.Route) {
	if len(routes) == 0 {
		return
	}
	fmt.Fprintf(w, "  voice platforms (tool JSON: starter platforms export <platform> --agent <id>):\n")
	for _, r := range routes {
		fmt.Fprintf(w, "    %s (%s)\n      tools:  %s\n      events: %s\n", r.Agent, r.Kind, r.Tools, r.Events)
	}
	fmt.Fprintln(w)
}

func (d *Server) ledgerKind() string {
	if d.cfg.DatabaseURL != "" {
		return "PostgreSQL"
	}
	return "SQLite (" + d.cfg.ledgerPath() + ")"
}
