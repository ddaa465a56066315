package tools

import "gopkg.in/yaml.v3"

// HoldingOnUnknown returns the catalog document with every tool's
// on_unknown set to hold, the default. A harness that proves every effect
// happened at most once uses it: a tool that opts into resend accepts a
// possible second message when its provider's answer is lost, which such a
// harness would count as a duplicate.
func HoldingOnUnknown(doc []byte) ([]byte, error) {
	return rewriteCatalog(doc, func(top *yaml.Node) {
		for _, tool := range mappingValue(top, "tools").Content {
			if tool.Kind == yaml.MappingNode && mappingValue(tool, "on_unknown").Kind == yaml.ScalarNode {
				setScalar(tool, "on_unknown", string(OnUnknownHold), "")
			}
		}
	})
}
