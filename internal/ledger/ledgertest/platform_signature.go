package ledgertest

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/ledger"
)

// A signature's identity as the verifier computes it: platform and MAC.
func signatureID() string { return "vapi:" + randomHex(32) }

func testPlatformSignature(t *testing.T, setup setupFunc) {
	t.Run("FirstUseOnly", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		id, expires := signatureID(), time.Now().Add(5*time.Minute)

		first := claim(t, s, ctx, id, expires)
		require.True(t, first)
		again := claim(t, s, ctx, id, expires)
		require.False(t, again, "a live signature is refused")
		later := claim(t, s, ctx, id, expires.Add(time.Hour))
		require.False(t, later, "a replay cannot buy itself a later expiry")

		other := claim(t, s, ctx, signatureID(), expires)
		require.True(t, other, "another signature is its own")
	})

	t.Run("ConcurrentClaimsOneWins", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		id, expires := signatureID(), time.Now().Add(5*time.Minute)
		var wins, failures atomic.Int32
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				first, err := s.PlatformSignatureClaim(ctx, id, expires)
				switch {
				case err != nil:
					t.Errorf("claim: %v", err)
					failures.Add(1)
				case first:
					wins.Add(1)
				}
			})
		}
		wg.Wait()
		require.Zero(t, failures.Load())
		require.Equal(t, int32(1), wins.Load(), "one claimer of a signature is its first use")
	})

	t.Run("ExpiredIsTakenAgain", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		id := signatureID()

		first := claim(t, s, ctx, id, time.Now().Add(-time.Minute))
		require.True(t, first)
		again := claim(t, s, ctx, id, time.Now().Add(5*time.Minute))
		require.True(t, again, "a claim past its expiry no longer refuses")
		third := claim(t, s, ctx, id, time.Now().Add(5*time.Minute))
		require.False(t, third, "the retaken claim carries the new expiry")
	})

	t.Run("ForgetAllowsAnotherUse", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		id, expires := signatureID(), time.Now().Add(5*time.Minute)

		first := claim(t, s, ctx, id, expires)
		require.True(t, first)
		require.NoError(t, s.PlatformSignatureForget(ctx, id))
		again := claim(t, s, ctx, id, expires)
		require.True(t, again, "a forgotten signature may be sent again")
		replay := claim(t, s, ctx, id, expires)
		require.False(t, replay)

		require.NoError(t, s.PlatformSignatureForget(ctx, signatureID()), "forgetting an unknown signature is a no-op")
	})

	t.Run("RefusesBadInput", func(t *testing.T) {
		t.Parallel()
		s, ctx := setup(t)
		_, err := s.PlatformSignatureClaim(ctx, "", time.Now().Add(time.Minute))
		require.ErrorContains(t, err, "signature ID is required")
		_, err = s.PlatformSignatureClaim(ctx, signatureID(), time.Time{})
		require.ErrorContains(t, err, "expiry is required")
		require.ErrorContains(t, s.PlatformSignatureForget(ctx, ""), "signature ID is required")
	})
}

// claim claims id until expires and reports whether it was the first use.
func claim(t *testing.T, s ledger.Store, ctx context.Context, id string, expires time.Time) bool {
	t.Helper()
	first, err := s.PlatformSignatureClaim(ctx, id, expires)
	require.NoError(t, err)
	return first
}
