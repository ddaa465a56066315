package reality

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"time"

	"github.com/maestro-run/maestro/internal/connectors"
	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/receipts"
	"github.com/maestro-run/maestro/tools"
)

// Run fires every real-sync tool of the configured catalog and reads each
// effect back. An error means the run could not start (a bad config or
// catalog) and nothing was sent; a tool that failed is in the report.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cat, err := loadCatalog(cfg)
	if err != nil {
		return nil, err
	}
	steps, err := plan(cfg, cat)
	if err != nil {
		return nil, fmt.Errorf("error planning the reality run: %w", err)
	}
	conns, err := cfg.connectorSet()
	if err != nil {
		return nil, err
	}
	rd, err := newReader(cfg)
	if err != nil {
		return nil, err
	}
	r := &runner{
		cfg:      cfg,
		conns:    conns,
		reader:   rd,
		receipts: map[string]*mt.Receipt{},
		runID:    "reality-" + time.Now().UTC().Format("20060102T150405") + "-" + strings.ToLower(rand.Text()[:6]),
	}
	rep := &Report{RunID: r.runID, CatalogHash: cat.Hash(), Endpoints: cfg.endpoints(), Started: time.Now().UTC()}
	for _, s := range steps {
		rep.add(r.fire(ctx, s))
	}
	rep.Seconds = time.Since(rep.Started).Seconds()
	return rep, nil
}

type runner struct {
	cfg    Config
	conns  connectors.Set
	reader *reader
	// receipts of the tools that passed, for later fixtures to reference.
	receipts map[string]*mt.Receipt
	runID    string
}

// fire runs one tool and judges it.
func (r *runner) fire(ctx context.Context, s step) Result {
	res := Result{Tool: s.tool.Name, Connector: string(s.tool.Connector.Kind)}
	fail := func(format string, a ...any) Result {
		res.Verdict, res.Detail = Fail, fmt.Sprintf(format, a...)
		return res
	}
	switch {
	case s.fixture == nil:
		return fail("no fixture: give the tool arguments, or skip it with a reason")
	case s.fixture.Skip != "":
		res.Verdict, res.Detail = Skip, s.fixture.Skip
		return res
	}

	raw, err := renderArgs(s.fixture.Args, argsData{Receipts: r.receipts, Session: r.cfg.Session})
	if err != nil {
		return fail("%v (a receipt can be referenced only from a tool that passed earlier in the run)", err)
	}
	if err := s.tool.ValidateArgs(raw); err != nil {
		return fail("fixture arguments do not fit the tool's schema: %v", err)
	}
	args, err := tools.DecodeArgs(raw)
	if err != nil {
		return fail("error decoding fixture arguments: %v", err)
	}
	key := r.runID + ":" + s.tool.Name
	rc, err := s.tool.RenderCall(tools.TemplateData{Args: args, Session: r.session(), OperationKey: key})
	if err != nil {
		return fail("error rendering the connector call: %v", err)
	}
	call := connectors.Call{Kind: rc.Kind, IdempotencyKey: key, Settings: rc.Settings, Body: rc.Body}

	out, err := r.conns.Do(ctx, call)
	if err != nil {
		return fail("the provider call failed: %v", err)
	}
	res.Receipt = out.Receipt
	if err := receipts.Check(out.Receipt, s.tool.ReceiptFields); err != nil {
		return fail("the receipt does not prove the effect: %v", err)
	}
	res.ReadBacks, err = r.reader.readBack(ctx, s.tool, s.fixture, call, out.Receipt, args)
	if err != nil {
		return fail("read-back: %v", err)
	}
	r.receipts[s.tool.Name] = out.Receipt
	res.Verdict, res.Detail = Pass, confirmed(res.ReadBacks)
	return res
}

// session is what catalog templates see as .Session: the configured facts
// and the run's ID, as maestro gives a call its session's.
func (r *runner) session() map[string]any {
	s := map[string]any{"id": r.runID}
	for k, v := range r.cfg.Session {
		s[k] = v
	}
	return s
}

func confirmed(rbs []ReadBack) string {
	parts := make([]string, len(rbs))
	for i, rb := range rbs {
		parts[i] = rb.Provider + ": " + rb.Checked
	}
	return strings.Join(parts, "; ")
}

func (c Config) endpoints() Endpoints {
	e := Endpoints{Twilio: c.Twilio.BaseURL, SES: c.SES.Endpoint, SESStore: c.SES.StoreURL, HTTPServices: map[string]string{}}
	for name, s := range c.HTTPServices {
		e.HTTPServices[name] = s.BaseURL
	}
	return e
}
