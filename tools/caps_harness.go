package tools

import (
	"strconv"

	"gopkg.in/yaml.v3"
)

// LiftingAgentCaps returns the catalog document with every agent's
// max_open_approvals and max_live_sessions set to the largest value the
// loader accepts. Harnesses that measure throughput (many sessions left
// open, many requests waiting at once) use it; a deployment keeps caps
// that protect its queue.
func LiftingAgentCaps(doc []byte) ([]byte, error) {
	return rewriteCatalog(doc, func(top *yaml.Node) {
		for _, agent := range mappingValue(top, "agents").Content {
			if agent.Kind != yaml.MappingNode {
				continue
			}
			for _, field := range []string{"max_open_approvals", "max_live_sessions"} {
				setScalar(agent, field, strconv.Itoa(maxCap), "!!int")
			}
		}
	})
}
