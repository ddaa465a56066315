package tools

import (
	"errors"
	"fmt"
	"strconv"

	"gopkg.in/yaml.v3"
)

// LiftingAgentCaps returns the catalog document with every agent's
// max_open_approvals and max_live_sessions set to the largest value the
// loader accepts. Harnesses that measure throughput (many sessions left
// open, many requests waiting at once) use it; a deployment keeps caps
// that protect its queue.
func LiftingAgentCaps(doc []byte) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(doc, &root); err != nil {
		return nil, fmt.Errorf("error reading the catalog: %w", err)
	}
	if len(root.Content) != 1 {
		return nil, errors.New("error reading the catalog: not one YAML document")
	}
	for _, agent := range mappingValue(root.Content[0], "agents").Content {
		if agent.Kind != yaml.MappingNode {
			continue
		}
		for _, field := range []string{"max_open_approvals", "max_live_sessions"} {
			if v := mappingValue(agent, field); v.Kind == yaml.ScalarNode {
				v.Value = strconv.Itoa(maxCap)
				continue
			}
			agent.Content = append(agent.Content,
				&yaml.Node{Kind: yaml.ScalarNode, Value: field},
				&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(maxCap)})
		}
	}
	out, err := yaml.Marshal(&root)
	if err != nil {
		return nil, fmt.Errorf("error writing the catalog: %w", err)
	}
	return out, nil
}
