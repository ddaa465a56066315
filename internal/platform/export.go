package platform

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"slices"
	"time"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/tools"
)

// Paths of the adapters, relative to the API's base URL.
func VapiPath(agent string) string { return "/v1/platforms/vapi/" + url.PathEscape(agent) }
func ElevenLabsToolPath(agent, tool string) string {
	return "/v1/platforms/elevenlabs/" + url.PathEscape(agent) + "/tools/" + url.PathEscape(tool)
}
func ElevenLabsPostCallPath(agent string) string {
	return "/v1/platforms/elevenlabs/" + url.PathEscape(agent) + "/post-call"
}
func RetellFunctionsPath(agent string) string {
	return "/v1/platforms/retell/" + url.PathEscape(agent) + "/functions"
}
func RetellWebhookPath(agent string) string {
	return "/v1/platforms/retell/" + url.PathEscape(agent) + "/webhook"
}

// Route is where an agent's platform reaches maestro: its tool calls at
// Tools (for ElevenLabs, one URL per tool, {tool} standing for its name)
// and its end-of-call events at Events.
type Route struct {
	Agent  string
	Kind   tools.PlatformKind
	Tools  string
	Events string
}

// RouteOf is the route of an agent's platform, with maestro reachable at
// baseURL.
func RouteOf(agent string, kind tools.PlatformKind, baseURL string) Route {
	r := Route{Agent: agent, Kind: kind}
	switch kind {
	case tools.PlatformVapi:
		r.Tools, r.Events = baseURL+VapiPath(agent), baseURL+VapiPath(agent)
	case tools.PlatformElevenLabs:
		r.Tools, r.Events = baseURL+ElevenLabsToolPath(agent, "")+"{tool}", baseURL+ElevenLabsPostCallPath(agent)
	case tools.PlatformRetell:
		r.Tools, r.Events = baseURL+RetellFunctionsPath(agent), baseURL+RetellWebhookPath(agent)
	}
	return r
}

// Routes lists the routes of the catalog's agents that have a platform
// block, in catalog order.
func Routes(cat *tools.Catalog, baseURL string) []Route {
	var out []Route
	for _, a := range cat.Agents() {
		if a.Platform != nil {
			out = append(out, RouteOf(a.ID, a.Platform.Kind, baseURL))
		}
	}
	return out
}

// Export builds the platform's tool definitions for an agent, for the
// tools its platform block exposes, with maestro reachable at baseURL.
func Export(cat *tools.Catalog, agent *tools.Agent, baseURL string) (apitype.PlatformExport, error) {
	return ExportWithout(cat, agent, baseURL, nil)
}

// ExportWithout is Export leaving out the tools withheld reports, such as
// those a red canary keeps from agents. A nil withheld leaves out none.
func ExportWithout(cat *tools.Catalog, agent *tools.Agent, baseURL string, withheld func(*tools.Tool) bool) (apitype.PlatformExport, error) {
	pl := agent.Platform
	if pl == nil {
		return apitype.PlatformExport{}, fmt.Errorf("agent %q has no platform block", agent.ID)
	}
	timeout := pl.AnswerWithin()
	out := apitype.PlatformExport{
		Platform: string(pl.Kind), AgentID: agent.ID, SecretEnv: pl.SecretEnv,
		AnswerBudgetSeconds: pl.AnswerBudget.Seconds(), Tools: []json.RawMessage{},
	}
	secret := "<the value of $" + pl.SecretEnv + ">"
	for _, name := range pl.Tools {
		t, ok := cat.Tool(name)
		if !ok || (withheld != nil && withheld(t)) {
			continue
		}
		var schema map[string]any
		if err := json.Unmarshal(t.InputSchema.JSON(), &schema); err != nil {
			return out, fmt.Errorf("error reading the schema of %s: %w", name, err)
		}
		var def any
		switch pl.Kind {
		case tools.PlatformVapi:
			def = map[string]any{
				"type":     "function",
				"async":    false,
				"function": map[string]any{"name": t.Name, "description": t.Description, "parameters": schema},
				"server":   map[string]any{"url": baseURL + VapiPath(agent.ID), "timeoutSeconds": seconds(timeout)},
			}
		case tools.PlatformElevenLabs:
			def = map[string]any{
				"type":                  "webhook",
				"name":                  t.Name,
				"description":           t.Description,
				"response_timeout_secs": seconds(timeout),
				"execution_mode":        elevenLabsExecutionMode(pl),
				"api_schema": map[string]any{
					"url":                 baseURL + ElevenLabsToolPath(agent.ID, t.Name),
					"method":              "POST",
					"request_headers":     map[string]string{"Authorization": "Bearer " + secret},
					"request_body_schema": elevenLabsBody(t.Description, schema),
				},
			}
		case tools.PlatformRetell:
			def = map[string]any{
				"type":                   "custom",
				"name":                   t.Name,
				"description":            t.Description,
				"url":                    baseURL + RetellFunctionsPath(agent.ID),
				"method":                 "POST",
				"parameters":             schema,
				"speak_during_execution": false,
				"speak_after_execution":  true,
				"timeout_ms":             timeout.Milliseconds(),
			}
		}
		raw, err := json.Marshal(def)
		if err != nil {
			return out, fmt.Errorf("error encoding %s: %w", name, err)
		}
		out.Tools = append(out.Tools, raw)
	}
	route := RouteOf(agent.ID, pl.Kind, baseURL)
	out.ToolsURL, out.EventsURL = route.Tools, route.Events
	var settings any
	switch pl.Kind {
	case tools.PlatformVapi:
		settings = map[string]any{
			"credential": map[string]any{
				"provider": "webhook",
				"name":     "maestro " + agent.ID,
				"authenticationPlan": map[string]any{
					"type": "hmac", "secretKey": secret, "algorithm": "sha256",
					"signatureHeader": "x-signature", "timestampHeader": "x-timestamp",
					"payloadFormat": "{timestamp}.{body}",
				},
			},
			"assistant": map[string]any{
				"server":         map[string]any{"url": out.EventsURL, "timeoutSeconds": seconds(timeout), "credentialId": "<the credential's id>"},
				"serverMessages": []string{"tool-calls", "end-of-call-report"},
			},
		}
		out.Steps = []string{
			"Create the credential (Vapi dashboard: Settings > Credentials > Custom credential, HMAC, or POST /credential) with secretKey set to the value of $" + pl.SecretEnv + ".",
			"Set the assistant's server URL, timeout and credential as in settings.assistant, and its server messages to tool-calls and end-of-call-report.",
			"Create each tool in tools with server.credentialId set to the credential's id, and add them to the assistant.",
		}
	case tools.PlatformElevenLabs:
		settings = map[string]any{
			"post_call_webhook": map[string]any{"url": out.EventsURL, "events": []string{ElevenLabsTranscription},
				"hmac_secret": "ElevenLabs generates it: put it in $" + pl.SecretEnv + ", which also authenticates the tools"},
		}
		out.Steps = []string{
			"Add each tool in tools as a webhook tool of the agent (or POST it to /v1/convai/tools); the system__ body fields are dynamic variables the platform fills, not the model.",
			"Workspace settings > Webhooks: add the post-call webhook at events_url, and enable it for the agent's post_call_transcription events.",
			"Set $" + pl.SecretEnv + " to the webhook's HMAC secret and use the same value in each tool's Authorization header.",
		}
		if pl.AsyncTools {
			out.Steps = append(out.Steps, "Keep each tool's execution mode async and its response timeout as exported: the agent goes on talking while a call runs, and maestro answers with the final outcome within the timeout.")
		}
	case tools.PlatformRetell:
		settings = map[string]any{
			"agent": map[string]any{"webhook_url": out.EventsURL},
		}
		out.Steps = []string{
			"Set $" + pl.SecretEnv + " to the Retell API key that has the webhook badge: Retell signs with it.",
			"Add each tool in tools to the agent's Retell LLM as a custom function (general_tools); leave \"args only\" off.",
			"Set the agent's webhook URL to events_url (call_ended and call_analyzed end the call in maestro).",
		}
	}
	raw, err := json.Marshal(settings)
	if err != nil {
		return out, fmt.Errorf("error encoding settings: %w", err)
	}
	out.Settings = raw
	return out, nil
}

// elevenLabsExecutionMode is async when the agent should go on talking
// while a call runs and take its final answer when it comes.
func elevenLabsExecutionMode(pl *tools.Platform) string {
	if pl.AsyncTools {
		return "async"
	}
	return "immediate"
}

func seconds(d time.Duration) int {
	return int(math.Ceil(d.Seconds()))
}

// elevenLabsBody is a tool's input schema as an ElevenLabs request body
// schema, plus the system variables maestro reads the call from. ElevenLabs
// takes a subset of JSON Schema and wants a description on every property.
func elevenLabsBody(description string, schema map[string]any) map[string]any {
	body := elevenLabsSchema(schema, description)
	props, _ := body["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
		body["properties"] = props
	}
	for _, v := range ElevenLabsSystemVariables {
		props[v.Name] = map[string]any{"type": "string", "description": "Filled by the platform", "dynamic_variable": v.Name}
	}
	req, _ := body["required"].([]any)
	body["required"] = append(req, ElevenLabsConversationID)
	return body
}

func elevenLabsSchema(s map[string]any, description string) map[string]any {
	out := map[string]any{}
	for _, k := range []string{"type", "enum", "required"} {
		if v, ok := s[k]; ok {
			out[k] = v
		}
	}
	out["description"] = description
	if d, ok := s["description"].(string); ok && d != "" {
		out["description"] = d
	}
	if props, ok := s["properties"].(map[string]any); ok {
		conv := map[string]any{}
		names := make([]string, 0, len(props))
		for n := range props {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			if p, ok := props[n].(map[string]any); ok {
				conv[n] = elevenLabsSchema(p, n)
			}
		}
		out["properties"] = conv
	}
	if items, ok := s["items"].(map[string]any); ok {
		out["items"] = elevenLabsSchema(items, "item")
	}
	return out
}
