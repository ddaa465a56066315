package sweep_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-run/maestro/internal/sweep"
)

func TestBackoffDoublesUpToItsCap(t *testing.T) {
	t.Parallel()
	var got []time.Duration
	for failures := range 6 {
		got = append(got, sweep.Backoff(time.Second, 10*time.Second, failures))
	}
	require.Equal(t, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second}, got)
	require.Equal(t, 10*time.Second, sweep.Backoff(time.Second, 10*time.Second, 1000), "no overflow")
}

func TestEverySweepsAtOnceAndWhenKicked(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	swept := make(chan struct{})
	kick := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		sweep.Every(ctx, time.Hour, kick, func(context.Context) { swept <- struct{}{} })
	}()
	<-swept // at once, not after an hour
	kick <- struct{}{}
	<-swept
	cancel()
	<-done
}
