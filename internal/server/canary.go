package server

import (
	"context"
	"crypto/rand"
	"fmt"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/maestro-run/maestro/internal/canary"
	"github.com/maestro-run/maestro/internal/connectors"
	"github.com/maestro-run/maestro/receipts/readback"
	"github.com/maestro-run/maestro/workflows"
)

// DefaultCanaryEvery is how often the reality canary runs unless
// configured otherwise.
const DefaultCanaryEvery = 24 * time.Hour

// CanaryConfig configures the reality canary.
type CanaryConfig struct {
	// Every is how often the schedule runs the canary
	// (MAESTRO_CANARY_INTERVAL). Optional: default 24h; negative turns
	// the schedule off (an operator can still run it).
	Every time.Duration
	// Connectors perform the canary calls, against the providers' test
	// facilities. Optional: default the service's own connectors.
	Connectors connectors.Set
	// Reader reads the canary's effects back from the providers.
	// Optional: without it, no canary runs.
	Reader *readback.Reader
	// Services are the HTTP services an http canary is read back from.
	// Optional.
	Services map[string]connectors.HTTPService
}

// newCanary builds the canary's state, which every role reads, and the
// runner, which only a worker needs; nil when no Reader is configured.
func newCanary(cfg CoreConfig, s *Core) (*canary.Runner, error) {
	s.canary = canary.NewState(cfg.Store, cfg.CatalogPoll)
	if cfg.Canary.Reader == nil {
		return nil, nil
	}
	conns := cfg.Canary.Connectors
	if conns == nil {
		conns = cfg.Connectors
	}
	return canary.New(canary.Config{Catalog: s.live, Connectors: conns, Reader: cfg.Canary.Reader,
		Services: cfg.Canary.Services, Store: cfg.Store})
}

// scheduleCanary makes sure the canary is scheduled on Temporal, once per
// namespace and task queue, unless every is negative.
func scheduleCanary(ctx context.Context, c client.Client, taskQueue string, every time.Duration) error {
	if every < 0 {
		return nil
	}
	return scheduleEvery(ctx, c, CanaryScheduleID(taskQueue), workflows.CanaryWorkflowID+"/"+taskQueue,
		workflows.CanaryWorkflowName, taskQueue, every, "the reality canary")
}

// CanaryScheduleID names the canary's schedule for a task queue.
func CanaryScheduleID(taskQueue string) string {
	return workflows.CanaryScheduleID + "/" + taskQueue
}

// runCanary runs the canary workflow now and waits for it, for POST
// /v1/canary/run. Each run is its own workflow, beside the schedule's.
func (s *Core) runCanary(c client.Client, taskQueue string) func(context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
			ID:        workflows.CanaryWorkflowID + "/" + taskQueue + "/now-" + rand.Text(),
			TaskQueue: taskQueue,
		}, workflows.CanaryWorkflowName)
		if err != nil {
			return "", fmt.Errorf("error starting the canary: %w", err)
		}
		var res workflows.CanaryRun
		if err := run.Get(ctx, &res); err != nil {
			return run.GetRunID(), fmt.Errorf("error running the canary: %w", err)
		}
		if err := s.canary.Refresh(ctx); err != nil {
			return res.RunID, err
		}
		return res.RunID, nil
	}
}

// canaryConfig reads the canary's effects back with the configured
// providers' credentials, from their own APIs: in dev mode, the
// stand-ins'.
func (d *Server) canaryConfig() CanaryConfig {
	p := d.providers
	reader := &readback.Reader{
		TwilioURL: p.Twilio.BaseURL, TwilioAccountSID: p.Twilio.AccountSID, TwilioAuthToken: p.Twilio.AuthToken,
		SESStoreURL: d.cfg.CanarySESStoreURL,
	}
	if reader.TwilioURL == "" {
		reader.TwilioURL = connectors.TwilioConfig{}.WithDefaults().BaseURL
	}
	if d.standins != nil && reader.SESStoreURL == "" {
		reader.SESStoreURL = d.standins.SESURL()
	}
	return CanaryConfig{Every: d.cfg.CanaryEvery, Reader: reader, Services: p.HTTP}
}
