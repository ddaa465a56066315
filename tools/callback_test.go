package tools_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/maestro-run/maestro/tools"
)

func loadWithCallback(t *testing.T, url, env string) (*tools.Catalog, error) {
	t.Helper()
	d := minimalDoc(t)
	if url != "" {
		d.agent()["callback_url"] = url
	}
	if env != "" {
		d.agent()["callback_secret_env"] = env
	}
	data, err := yaml.Marshal(map[string]any(d))
	require.NoError(t, err)
	return tools.Load(data)
}

func TestAgentCallbackLoads(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		url      string
		loopback bool
	}{
		{"https://agent.example/maestro/callbacks", false},
		{"http://127.0.0.1:9000/cb", true},
		{"http://localhost:9000/cb", true},
		{"http://[::1]:9000/cb", true},
	} {
		t.Run(tc.url, func(t *testing.T) {
			t.Parallel()
			cat, err := loadWithCallback(t, tc.url, "MAESTRO_CALLBACK_SECRET_AGENT")
			require.NoError(t, err)
			a, ok := cat.Agent("agent")
			require.True(t, ok)
			require.NotNil(t, a.Callback)
			require.Equal(t, tc.url, a.Callback.URL.String())
			require.Equal(t, "MAESTRO_CALLBACK_SECRET_AGENT", a.Callback.SecretEnv)
			require.Equal(t, tc.loopback, a.Callback.Loopback())
		})
	}

	cat, err := loadWithCallback(t, "", "")
	require.NoError(t, err)
	a, _ := cat.Agent("agent")
	require.Nil(t, a.Callback, "an agent without a callback URL only polls")
}

func TestAgentCallbackRefusalsNameRowAndField(t *testing.T) {
	t.Parallel()
	const row = `agents[0] "agent"`
	for name, tc := range map[string]struct{ url, env, field string }{
		"plain http to another host": {"http://agent.example/cb", "S", "callback_url"},
		"not a web URL":              {"ftp://agent.example/cb", "S", "callback_url"},
		"relative":                   {"/cb", "S", "callback_url"},
		"credentials in the URL":     {"https://user:pw@agent.example/cb", "S", "callback_url"},
		"unparseable":                {"https://agent example/%zz", "S", "callback_url"},
		"no secret":                  {"https://agent.example/cb", "", "callback_secret_env"},
		"secret that is no env name": {"https://agent.example/cb", "MY-SECRET", "callback_secret_env"},
		"secret without a URL":       {"", "S", "callback_secret_env"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := loadWithCallback(t, tc.url, tc.env)
			require.Error(t, err)
			for _, p := range fieldErrors(err) {
				if p.Row == row && p.Field == tc.field {
					return
				}
			}
			require.Failf(t, "refusal does not name the row and field", "want %s: %s, got:\n%v", row, tc.field, err)
		})
	}
}
