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
	require.ErrorIs(t, Check(ok, nil), ErrNoReceipt, "a tool that declares nothing to prove cannot be believed")
	require.ErrorIs(t, Check(nil, nil), ErrNoReceipt)
	require.ErrorContains(t, Check(nil, []string{"message_sid"}), "no receipt")
	require.ErrorIs(t, Check(nil, []string{"message_sid"}), ErrNoReceipt)
	require.ErrorContains(t, Check(&mt.Receipt{Provider: "ses", Fields: map[string]string{"message_id": "x"}}, []string{"message_id"}), "no provider ID")
	require.ErrorContains(t, Check(&mt.Receipt{Provider: "ses", ID: "x", Fields: map[string]string{}}, []string{"message_id"}), "message_id")
}
