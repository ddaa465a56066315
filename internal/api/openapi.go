package api

import (
	_ "embed"
	"net/http"
)

// OpenAPI is the API's OpenAPI 3.1 document.
//
//go:embed openapi.yaml
var OpenAPI []byte

func handleOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/yaml")
	_, _ = w.Write(OpenAPI)
}
