package receipts

import (
	"testing"

	"github.com/stretchr/testify/require"

	mt "github.com/maestro-run/maestro/maestrotype"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	ok := &mt.Receipt{Provider: "twilio", ID: "SM1", Fields: map[string]string{"message_sid": "SM1", "status": "queued"}}
	require.NoError(t, Check(ok, []string{"message_sid", "status"}))
	require.NoError(t, Check(nil, nil), "reads need no receipt")
	require.ErrorContains(t, Check(nil, []string{"message_sid"}), "no receipt")
	require.ErrorContains(t, Check(&mt.Receipt{Provider: "ses", Fields: map[string]string{"message_id": "x"}}, []string{"message_id"}), "no provider ID")
	require.ErrorContains(t, Check(&mt.Receipt{Provider: "ses", ID: "x", Fields: map[string]string{}}, []string{"message_id"}), "message_id")
}
