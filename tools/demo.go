package tools

import _ "embed"

// DemoCatalogYAML is the catalog of the property-management demo agent:
// one tool of every class, the agent allowed to call them and an operator
// who can approve the gated ones. Its keys are development keys.
//
//go:embed demo_catalog.yaml
var DemoCatalogYAML []byte

// Development keys of the demo catalog's agent and operator. The catalog
// holds only their hashes; these exist so a local run can authenticate.
const (
	DemoAgentKey = "demo-agent-key"
	DemoOpsKey   = "demo-ops-key"
)
