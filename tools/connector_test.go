package tools

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/maestrotype"
)

// Every kind the catalog knows is a valid kind, and every valid kind is
// one the catalog knows how to check.
func TestKindsMatchConnectorKinds(t *testing.T) {
	for _, k := range []maestrotype.ConnectorKind{
		maestrotype.KindTwilioSMS, maestrotype.KindSESEmail, maestrotype.KindPage, maestrotype.KindHTTP, maestrotype.KindDeferred,
	} {
		_, ok := kinds[k]
		require.True(t, ok, k)
	}
	for k := range kinds {
		require.True(t, k.Valid(), k)
	}
}
