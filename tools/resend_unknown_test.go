package tools_test

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The page opts in as a whole; which of its parts are actually sent again
// is decided per part by whether its provider can be searched (ADR 14).
func TestDemoPageResendsWhatCannotBeSearched(t *testing.T) {
	t.Parallel()
	page, ok := demo(t).Tool("escalate_to_human")
	require.True(t, ok)
	require.True(t, page.Resends())
	email, ok := demo(t).Tool("email_property_manager")
	require.True(t, ok)
	require.False(t, email.Resends(), "an in-call email whose outcome is unknown is held for a human")
}
