// Package demo drives a scripted property-management call through
// maestro's HTTP API against an embedded dev stack, printing every
// observation and reading every receipt back from the provider stand-ins'
// own APIs. It fails loudly if anything it shows is not so.
package demo

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/maestro-run/maestro/apiclient"
	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/internal/server"
	"github.com/maestro-run/maestro/internal/standin"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// Config configures a demo run.
type Config struct {
	// Out receives the narrative. Optional: default os.Stdout.
	Out io.Writer
	// DataDir holds the embedded stack's files. Optional: default a fresh
	// temporary directory, removed afterwards.
	DataDir string
	// TemporalPort for the embedded server. Optional: default 17233, away
	// from a `make run` instance on 7233.
	TemporalPort int
	// HTTPAddr is where maestro serves its API and console. Optional:
	// default a free port on 127.0.0.1.
	HTTPAddr string
	// Hold leaves a refund awaiting approval after the scenario, for a
	// person to decide in the console, and keeps maestro serving until ctx
	// ends.
	Hold bool
	// Held, when Hold is set, is told where the held request is in the
	// console, then its final invocation state once decided. Optional: for
	// tests that play the person.
	Held func(consoleURL string, state mt.InvocationState)
}

// Run starts the dev stack, plays the scenario and stops the stack.
func Run(ctx context.Context, cfg Config) (err error) {
	if cfg.Out == nil {
		cfg.Out = os.Stdout
	}
	if cfg.TemporalPort == 0 {
		cfg.TemporalPort = 17233
	}
	if cfg.DataDir == "" {
		dir, err := os.MkdirTemp("", "maestro-demo-")
		if err != nil {
			return fmt.Errorf("error creating demo directory: %w", err)
		}
		defer os.RemoveAll(dir)
		cfg.DataDir = dir
	}
	fmt.Fprintln(cfg.Out, "Starting maestro in dev mode (embedded Temporal, SQLite ledger, provider stand-ins)…")
	d, err := server.Start(ctx, server.Config{
		Dev:          true,
		HTTPAddr:     cmp.Or(cfg.HTTPAddr, "127.0.0.1:0"),
		DataDir:      filepath.Join(cfg.DataDir, "data"),
		TemporalPort: cfg.TemporalPort,
		Logger:       slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, d.Stop(context.Background())) }()
	fmt.Fprintf(cfg.Out, "maestro API at %s\n", d.URL())
	fmt.Fprintf(cfg.Out, "ops console at %s/console (sign in with the operator key %q)\n", d.URL(), tools.DemoOpsKey)

	s := &scenario{
		ctx:      ctx,
		out:      cfg.Out,
		agent:    apiclient.New(d.URL(), tools.DemoAgentKey, apiclient.Options{}),
		ops:      apiclient.New(d.URL(), tools.DemoOpsKey, apiclient.Options{}),
		standins: d.Standins(),
		session:  "demo-call-1",
	}
	if err := s.play(); err != nil {
		return err
	}
	fmt.Fprintf(cfg.Out, "\nDemo complete: %d steps, every receipt confirmed by the provider that issued it.\n", s.steps)
	if cfg.Hold {
		return s.hold(d.URL(), cfg.Held)
	}
	return nil
}

// scenario is one caller's conversation with the voice agent.
type scenario struct {
	ctx      context.Context
	out      io.Writer
	agent    *apiclient.Client
	ops      *apiclient.Client
	standins *standin.Set
	session  string
	steps    int
}

func (s *scenario) step(title string) {
	s.steps++
	fmt.Fprintf(s.out, "\n── %d. %s\n", s.steps, title)
}

// invoke calls a tool as the agent runtime would: the session's facts (the
// caller's number from telephony, the tenant it resolved) go with every
// call, and the session keeps those of its first call.
func (s *scenario) invoke(tool, key, args string) (apiclient.Response, error) {
	fmt.Fprintf(s.out, "   agent → %s %s\n", tool, args)
	resp, err := s.agent.Invoke(s.ctx, apitype.InvokeRequest{
		SessionID:      s.session,
		Tool:           tool,
		Args:           json.RawMessage(args),
		OperationKey:   s.session + ":" + key,
		SessionContext: map[string]string{"caller_number": callerNumber, "tenant_id": "t_100"},
	})
	if err != nil {
		return resp, err
	}
	s.printObservation(resp)
	return resp, nil
}

func (s *scenario) printObservation(resp apiclient.Response) {
	o := resp.Observation
	fmt.Fprintf(s.out, "   maestro: %s [%s] %s\n", resp.State, o.Status, o.Summary)
	if o.Wording != "" {
		fmt.Fprintf(s.out, "   agent may say: %q\n", o.Wording)
	}
	if r := o.Receipt; r != nil {
		fmt.Fprintf(s.out, "   receipt: %s id=%s status=%s %s\n", r.Provider, r.ID, r.Status, fields(r.Fields))
	}
}

func (s *scenario) confirm(format string, args ...any) {
	fmt.Fprintf(s.out, "   ✓ "+format+"\n", args...)
}

func expect(ok bool, format string, args ...any) error {
	if ok {
		return nil
	}
	return fmt.Errorf("demo expectation failed: "+format, args...)
}

func fields(m map[string]string) string {
	var parts []string
	for _, k := range []string{mt.ReceiptMessageSID, mt.ReceiptMessageID, mt.ReceiptResourceID} {
		if v, ok := m[k]; ok {
			parts = append(parts, k+"="+v)
		}
	}
	return strings.Join(parts, " ")
}

func isState(resp apiclient.Response, want mt.InvocationState) error {
	return expect(resp.State == want, "%s: state %s, want %s (%s)", resp.Tool, resp.State, want, resp.Observation.Summary)
}
