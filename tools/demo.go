package tools

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"errors"
	"fmt"
)

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

// DemoKeyHolders names the agents and operators whose key is one of the
// development keys, as `agent "id"` or `operator "id"`, in file order.
// Those keys are published with maestro, so anyone could call as them.
func (c *Catalog) DemoKeyHolders() []string {
	demo := []keyHash{sha256.Sum256([]byte(DemoAgentKey)), sha256.Sum256([]byte(DemoOpsKey))}
	isDemo := func(h keyHash, has bool) bool {
		return has && (h.equal(demo[0]) || h.equal(demo[1]))
	}
	var out []string
	for _, a := range c.agents {
		if isDemo(a.key, a.hasKey) {
			out = append(out, fmt.Sprintf("agent %q", a.ID))
		}
	}
	for _, o := range c.operators {
		if isDemo(o.key, o.hasKey) {
			out = append(out, fmt.Sprintf("operator %q", o.ID))
		}
	}
	return out
}

// ReplacingDemoKeys returns a catalog document derived from the demo
// catalog with the development keys' hashes replaced by those of agentKey
// and opsKey. Harnesses that run it outside dev mode use it, since maestro
// refuses the development keys there.
func ReplacingDemoKeys(doc []byte, agentKey, opsKey string) ([]byte, error) {
	agent, ops := []byte(HashKey(DemoAgentKey)), []byte(HashKey(DemoOpsKey))
	if !bytes.Contains(doc, agent) || !bytes.Contains(doc, ops) {
		return nil, errors.New("error replacing the demo keys: the catalog does not hold both demo key hashes")
	}
	doc = bytes.ReplaceAll(doc, agent, []byte(HashKey(agentKey)))
	return bytes.ReplaceAll(doc, ops, []byte(HashKey(opsKey))), nil
}
