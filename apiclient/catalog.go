package apiclient

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/maestro-run/maestro/apitype"
)

// CatalogRefusedError is a reload refused because the catalog file breaks
// some rule: the server kept the catalog it had.
type CatalogRefusedError struct {
	Reload apitype.CatalogReload
}

func (e *CatalogRefusedError) Error() string {
	return fmt.Sprintf("catalog reload refused, version %s kept: %s", e.Reload.Version, strings.Join(e.Reload.Violations, "; "))
}

// ReloadCatalog has the server re-read its catalog file and swap to it
// (operator key). A file breaking some rule comes back as
// *CatalogRefusedError listing every violation.
func (c *Client) ReloadCatalog(ctx context.Context) (apitype.CatalogReload, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.baseURL+"/v1/catalog/reload", nil)
	if err != nil {
		return apitype.CatalogReload{}, fmt.Errorf("error building request: %w", err)
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return apitype.CatalogReload{}, fmt.Errorf("error calling maestro at %s: %w", c.baseURL, err)
	}
	defer resp.Body.Close()
	var out apitype.CatalogReload
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return out, fmt.Errorf("error reading maestro's answer: %w", err)
	}
	if resp.StatusCode == http.StatusUnprocessableEntity && json.Unmarshal(raw, &out) == nil && len(out.Violations) > 0 {
		return out, &CatalogRefusedError{Reload: out}
	}
	if resp.StatusCode >= 300 {
		return apitype.CatalogReload{}, answerError(resp.StatusCode, raw)
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return out, fmt.Errorf("error decoding maestro's answer: %w", err)
	}
	return out, nil
}

// CatalogVersions returns which catalog version the processes follow, the
// one the answering process serves, and the recent activations (operator
// key).
func (c *Client) CatalogVersions(ctx context.Context) (apitype.CatalogVersions, error) {
	var out apitype.CatalogVersions
	_, _, err := c.do(ctx, http.MethodGet, "/v1/catalog/versions", nil, &out)
	return out, err
}
