package apiclient

import (
	"context"
	"net/http"
	"net/url"

	"github.com/maestro-run/maestro/apitype"
)

// PlatformExport reads the tool definitions to paste into a voice
// platform's dashboard for an agent (platform: elevenlabs, vapi or retell).
func (c *Client) PlatformExport(ctx context.Context, platform, agentID string) (apitype.PlatformExport, error) {
	var out apitype.PlatformExport
	_, _, err := c.do(ctx, http.MethodGet, "/v1/platforms/"+url.PathEscape(platform)+"/agents/"+url.PathEscape(agentID)+"/tools", nil, &out)
	return out, err
}
