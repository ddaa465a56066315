package tools_test

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/tools"
)

// withKeyHashes is the demo catalog with its agent authenticated by
// agentKey and its operator by opsKey.
func withKeyHashes(agentKey, opsKey string) []byte {
	yaml := strings.Replace(string(tools.DemoCatalogYAML), tools.HashKey(tools.DemoAgentKey), tools.HashKey(agentKey), 1)
	return []byte(strings.Replace(yaml, tools.HashKey(tools.DemoOpsKey), tools.HashKey(opsKey), 1))
}

func TestLoadRefusesGuessableKeys(t *testing.T) {
	t.Parallel()
	for key, class := range map[string]string{
		"":            "the empty key",
		"a":           "a key of 3 characters or fewer",
		"ab ":         "a key of 3 characters or fewer",
		"~~~":         "a key of 3 characters or fewer",
		"007":         "a key of 3 characters or fewer",
		"1234":        "an all-digit key of 6 digits or fewer",
		"000000":      "an all-digit key of 6 digits or fewer",
		"12345678":    "a common password",
		"password":    "a common password",
		"Password":    "a common password",
		"PASSWORD":    "a common password",
		"changeme123": "a common password",
		"secret!":     "a common password",
		"admin1":      "a common password",
		"test":        "a common password",
	} {
		t.Run("operator "+key, func(t *testing.T) {
			t.Parallel()
			_, err := tools.Load(withKeyHashes(tools.DemoAgentKey, key))
			require.Error(t, err)
			var fe *tools.FieldError
			require.True(t, errors.As(err, &fe), "%v", err)
			require.Equal(t, `operators[0] "demo-manager"`, fe.Row)
			require.Equal(t, "api_key_sha256", fe.Field)
			require.Equal(t, tools.RuleWeakKey, fe.Rule)
			require.Contains(t, fe.Problem, "is the sha256 of "+class+", which can be guessed")
			require.Contains(t, fe.Problem, "starter keys new")
			require.NotContains(t, err.Error(), "required", "one problem for the field, not a second for the key it lacks")
		})
	}
	_, err := tools.Load(withKeyHashes("secret", tools.DemoOpsKey))
	require.ErrorContains(t, err, `agents[0] "voice-agent": api_key_sha256: is the sha256 of a common password`)
}

func TestLoadAcceptsKeysItCannotTellFromStrong(t *testing.T) {
	t.Parallel()
	random := make([]byte, 32)
	_, _ = rand.Read(random)
	// The development keys are refused outside dev mode by the daemon, as
	// published, not here as short.
	_, err := tools.Load(tools.DemoCatalogYAML)
	require.NoError(t, err)
	for _, key := range []string{
		hex.EncodeToString(random),
		// Past the rule's reach: seven digits, four letters.
		"1234567", "abcd",
	} {
		_, err := tools.Load(withKeyHashes(tools.DemoAgentKey, key))
		require.NoError(t, err, "%q", key)
	}
}
