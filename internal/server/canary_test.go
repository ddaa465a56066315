package server_test

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/server"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// canaryCatalog is the demo catalog with canaries on its text and email
// tools, firing at Twilio's magic valid number and the SES simulator; the
// text requires a green canary.
func canaryCatalog(t *testing.T) []byte {
	t.Helper()
	src := string(tools.DemoCatalogYAML)
	sms := "    connector:\n      kind: twilio_sms\n      to: \"{{.Args.to}}\"\n      body: \"{{.Args.body}}\"\n"
	require.Equal(t, 1, strings.Count(src, sms))
	src = strings.Replace(src, sms, sms+"    canary:\n      args: {to: \"+15005550006\", body: \"maestro canary\"}\n    requires_green_canary: true\n", 1)
	email := "    connector:\n      kind: ses_email\n      to: pm@demo-properties.example\n"
	require.Equal(t, 1, strings.Count(src, email))
	src = strings.Replace(src, email, "    canary:\n      args: {tenant_id: t_1, summary: canary}\n"+email, 1)
	return []byte(src)
}

func canaryTool(t *testing.T, st apitype.CanaryStatus, name string) apitype.CanaryTool {
	t.Helper()
	for _, ct := range st.Tools {
		if ct.Tool == name {
			return ct
		}
	}
	require.FailNow(t, "tool missing from the canary", name)
	return apitype.CanaryTool{}
}

// offered reports whether agents are offered a tool, checking that
// GET /v1/tools and the MCP tool list agree.
func offered(t *testing.T, e *env, name string) bool {
	t.Helper()
	list, err := e.agent.Tools(e.ctx)
	require.NoError(t, err)
	var inAPI, inMCP bool
	for _, tl := range list.Tools {
		inAPI = inAPI || tl.Name == name
	}
	cs := e.mcpSession(nil)
	res, err := cs.ListTools(e.ctx, nil)
	require.NoError(t, err)
	for _, tl := range res.Tools {
		inMCP = inMCP || tl.Name == name
	}
	require.Equal(t, inAPI, inMCP, "GET /v1/tools and MCP list %s alike", name)
	return inAPI
}

// TestCanary runs the canary against the stand-ins: green read back from
// their APIs, red when Twilio refuses the call (withholding the gated
// tool), and green again restoring it.
func TestCanary(t *testing.T) {
	t.Parallel()
	e := setup(t, func(o *options) { o.catalog = canaryCatalog(t) })
	e.describeSchedule(server.CanaryScheduleID(e.taskQueue))

	st, err := e.ops.Canary(e.ctx)
	require.NoError(t, err)
	require.Len(t, st.Tools, 2)
	require.Equal(t, apitype.CanaryNone, canaryTool(t, st, "send_sms").State, "no run yet")
	require.True(t, offered(t, e, "send_sms"), "no run yet withholds nothing")

	st, err = e.ops.CanaryRun(e.ctx)
	require.NoError(t, err)
	require.NotEmpty(t, st.RunID)
	sms := canaryTool(t, st, "send_sms")
	require.Equal(t, apitype.CanaryGreen, sms.State, sms.Detail)
	require.NotNil(t, sms.Receipt)
	require.NotNil(t, sms.LastSuccessAt)
	// The message is at Twilio, addressed as the canary asked.
	ev, err := e.standins.Reader().TwilioMessage(sms.Receipt.ID)
	require.NoError(t, err)
	require.Equal(t, "+15005550006", ev.Detail["to"])
	email := canaryTool(t, st, "email_property_manager")
	require.Equal(t, apitype.CanaryGreen, email.State, email.Detail)
	_, err = e.standins.Reader().SESMessage(e.ctx, email.Receipt.ID)
	require.NoError(t, err)
	require.True(t, offered(t, e, "send_sms"))

	// Twilio refuses the next call: the canary goes red, and the text is
	// withheld from agents; the email, which does not require green, stays.
	e.standins.Twilio.Faults().FailNext(1, http.StatusBadRequest)
	st, err = e.ops.CanaryRun(e.ctx)
	require.NoError(t, err)
	sms = canaryTool(t, st, "send_sms")
	require.Equal(t, apitype.CanaryRed, sms.State)
	require.True(t, sms.Withheld)
	require.NotNil(t, sms.LastSuccessAt, "the earlier success is kept")
	require.False(t, offered(t, e, "send_sms"))
	require.True(t, offered(t, e, "email_property_manager"))
	_, err = e.invoke("send_sms", e.key("canary-red"), `{"to":"+14155550100","body":"hi"}`)
	var refused *apiclient.Error
	require.True(t, errors.As(err, &refused), "%v", err)
	require.Equal(t, mt.CodeCanaryRed, refused.Observation.Code)
	shown, err := e.ops.Canary(e.ctx)
	require.NoError(t, err)
	require.Equal(t, apitype.CanaryRed, canaryTool(t, shown, "send_sms").State)
	// /metrics says the same: red now, with the last success's time.
	families, _ := e.scrape()
	for _, m := range families["maestro_canary_green"].GetMetric() {
		require.Equal(t, map[string]float64{"send_sms": 0, "email_property_manager": 1}[label(m, "tool")], value(m), label(m, "tool"))
	}
	require.Len(t, families["maestro_canary_green"].GetMetric(), 2)
	lastSuccess := map[string]float64{}
	for _, m := range families["maestro_canary_last_success_timestamp_seconds"].GetMetric() {
		lastSuccess[label(m, "tool")] = value(m)
	}
	require.Equal(t, float64(sms.LastSuccessAt.Unix()), lastSuccess["send_sms"])

	// A passing run restores it.
	st, err = e.ops.CanaryRun(e.ctx)
	require.NoError(t, err)
	require.Equal(t, apitype.CanaryGreen, canaryTool(t, st, "send_sms").State)
	require.True(t, offered(t, e, "send_sms"))

	// The canary's calls are no agent's: nothing of them is in the session.
	_, err = e.ops.Session(e.ctx, e.session)
	var notFound *apiclient.Error
	require.True(t, errors.As(err, &notFound) && notFound.StatusCode == http.StatusNotFound, "%v", err)
}

// TestCanaryBadInput refuses what the canary routes do not take.
func TestCanaryBadInput(t *testing.T) {
	t.Parallel()
	e := setup(t)
	_, err := e.agent.Canary(e.ctx)
	var refused *apiclient.Error
	require.True(t, errors.As(err, &refused), "%v", err)
	require.Equal(t, http.StatusUnauthorized, refused.StatusCode, "an agent key does not reach the ops API")

	req, err := http.NewRequestWithContext(e.ctx, http.MethodPost, e.url+"/v1/canary/run", bytes.NewReader([]byte(`{"tools":["send_sms"]}`)))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+tools.DemoOpsKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
}
