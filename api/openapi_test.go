package api

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// TestOpenAPIDocumentsEveryRoute keeps the document and the router in step.
func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	t.Parallel()
	var doc struct {
		Paths map[string]map[string]any `yaml:"paths"`
	}
	require.NoError(t, yaml.Unmarshal(OpenAPI, &doc))
	documented := map[string]bool{}
	for path, ops := range doc.Paths {
		for method := range ops {
			documented[strings.ToUpper(method)+" "+path] = true
		}
	}
	for _, r := range Routes {
		require.True(t, documented[r], "route %q is not in openapi.yaml", r)
		delete(documented, r)
	}
	require.Empty(t, documented, "openapi.yaml documents routes the server does not serve")
}
