package tools

import (
	"errors"
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/maestro-run/maestro/maestrotype"
)

// TrustingDeclaredFacts returns the catalog document with every
// auto-approval rule also accepting facts the agent declared. Test, load
// and benchmark harnesses use it to drive the delivery path of calls a
// deployment would approve on platform-signed facts, which their stand-ins
// cannot sign. A deployment must never: it lets an agent approve its own
// calls by stating the facts the rule reads.
func TrustingDeclaredFacts(doc []byte) ([]byte, error) {
	return rewriteCatalog(doc, func(top *yaml.Node) {
		for _, tool := range mappingValue(top, "tools").Content {
			approval := mappingValue(tool, "approval")
			if approval.Kind != yaml.MappingNode || mappingValue(approval, "auto_approve_when").Kind == 0 {
				continue
			}
			declared := &yaml.Node{Kind: yaml.ScalarNode, Value: string(maestrotype.ProvenanceAgentDeclared)}
			if list := mappingValue(approval, "auto_approve_provenance"); list.Kind == yaml.SequenceNode {
				list.Content = append(list.Content, declared)
				continue
			}
			approval.Content = append(approval.Content,
				&yaml.Node{Kind: yaml.ScalarNode, Value: "auto_approve_provenance"},
				&yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle, Content: []*yaml.Node{declared}})
		}
	})
}

// mappingValue is the value under key in a mapping node, or an empty node.
func mappingValue(m *yaml.Node, key string) *yaml.Node {
	if m.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == key {
				return m.Content[i+1]
			}
		}
	}
	return &yaml.Node{}
}

// AllowingWritesWhileAwaiting returns the catalog document with every
// agent's while_awaiting_approval policy set to allow_writes. Harnesses
// that keep several calls of one session in flight at once, an approval
// among them, use it; a deployment chooses its policy in the catalog.
func AllowingWritesWhileAwaiting(doc []byte) ([]byte, error) {
	return rewriteCatalog(doc, func(top *yaml.Node) {
		for _, agent := range mappingValue(top, "agents").Content {
			if agent.Kind != yaml.MappingNode {
				continue
			}
			setScalar(agent, "while_awaiting_approval", string(AwaitingApprovalAllowWrites), "")
		}
	})
}

// rewriteCatalog applies edit to the top-level mapping of a one-document
// catalog and writes the document back: the shared frame of the
// harnesses' catalog rewrites.
func rewriteCatalog(doc []byte, edit func(top *yaml.Node)) ([]byte, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(doc, &root); err != nil {
		return nil, fmt.Errorf("error reading the catalog: %w", err)
	}
	if len(root.Content) != 1 {
		return nil, errors.New("error reading the catalog: not one YAML document")
	}
	edit(root.Content[0])
	out, err := yaml.Marshal(&root)
	if err != nil {
		return nil, fmt.Errorf("error writing the catalog: %w", err)
	}
	return out, nil
}

// setScalar sets key in mapping m to value, adding the key when m lacks
// it; tag, when not empty, types a value the key is added with.
func setScalar(m *yaml.Node, key, value, tag string) {
	if v := mappingValue(m, key); v.Kind == yaml.ScalarNode {
		v.Value = value
		return
	}
	m.Content = append(m.Content,
		&yaml.Node{Kind: yaml.ScalarNode, Value: key},
		&yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: value})
}
