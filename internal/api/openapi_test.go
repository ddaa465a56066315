package api

import (
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
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

// TestOpenAPIDocumentIsValid loads the document with an OpenAPI validator:
// a YAML slip (an unquoted comma in a flow mapping, say) must not turn a
// description into a stray field.
func TestOpenAPIDocumentIsValid(t *testing.T) {
	t.Parallel()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(OpenAPI)
	require.NoError(t, err)
	require.NoError(t, doc.Validate(loader.Context))
}
