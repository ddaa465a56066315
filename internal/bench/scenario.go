package bench

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/maestro-run/maestro/internal/connectors"
)

// The paths a call can take, from no durability to maestro.
const (
	pathDirect     = "direct"
	pathTemporal   = "temporal"
	pathEager      = "temporal+eager"
	pathLocal      = "temporal+local"
	pathEagerLocal = "temporal+eager+local"
	pathUpdate     = "temporal+update"
	pathSignal     = "temporal+signal"
	pathMaestro    = "maestro"
)

// call is one request of a cell.
type call struct {
	// caller is the goroutine that makes the call.
	caller int
	// key is the operation key, unique in the run.
	key string
	// session is the maestro session the call belongs to.
	session string
}

// sample is what one call measured.
type sample struct {
	latency time.Duration
	// workflowID ran the call; empty for a direct call.
	workflowID string
	// sessionWorkflowID is the maestro session the call was recorded in.
	sessionWorkflowID string
}

// scenario makes one kind of call along one path.
type scenario struct {
	path string
	op   op
	// measures says what the latency spans.
	measures string
	// prepare readies one call before the clock starts. Optional.
	prepare func(ctx context.Context, c call) error
	// do makes one call and times the part the scenario measures.
	do func(ctx context.Context, c call) (sample, error)
}

func (s scenario) name() string { return s.path + "/" + s.op.name }

// slug is the name in a form session IDs and operation keys accept:
// maestro's identifier rule refuses '/'.
func (s scenario) slug() string {
	return strings.NewReplacer("+", "-", "/", ".").Replace(s.name())
}

// scenarios lists every scenario, grouped by op with the floors first.
// Every bare-Temporal variant runs the read, which is enough to see what
// each feature saves; the other ops run the plain floor for reference and
// the variant maestro's route is held to.
func (s *stack) scenarios() []scenario {
	var out []scenario
	for _, o := range ops {
		out = append(out, s.direct(o), s.bare(o, bareVariants[0]))
		switch o.name {
		case "read":
			for _, v := range bareVariants[1:] {
				out = append(out, s.bare(o, v))
			}
		case "approval":
			out = append(out, s.bareApproval(o))
		default:
			out = append(out, s.bare(o, variantFor(matchedBaseline(o.name))))
		}
		if o.name == "approval" {
			out = append(out, s.approval(o))
		} else {
			out = append(out, s.maestro(o))
		}
	}
	return out
}

// matchedBaseline is the bare path that uses the Temporal features
// maestro's route for the op uses: every invocation starts eagerly, a read
// runs as a local activity, writes as regular activities, and an approved
// call is woken by a signal. The goals are judged against it rather than
// the plainest workflow, so a gap measures maestro, not a feature the floor
// lacks.
func matchedBaseline(op string) string {
	switch op {
	case "read":
		return pathEagerLocal
	case "approval":
		return pathSignal
	}
	return pathEager
}

func variantFor(path string) bareVariant {
	for _, v := range bareVariants {
		if v.path == path {
			return v
		}
	}
	panic("no bare variant runs " + path)
}

// selected keeps the scenarios whose name contains one of only, or all of
// them when only is empty.
func selected(all []scenario, only []string) []scenario {
	if len(only) == 0 {
		return all
	}
	var out []scenario
	for _, sc := range all {
		for _, o := range only {
			if o != "" && strings.Contains(sc.name(), o) {
				out = append(out, sc)
				break
			}
		}
	}
	return out
}

// checkResult makes sure a provider call did what the op asks: a read
// returned data, a write returned a receipt.
func checkResult(o op, res connectors.Result) error {
	if o.name == "read" {
		if len(res.Payload) == 0 {
			return fmt.Errorf("%s returned no data", o.tool)
		}
		return nil
	}
	if res.Receipt == nil || res.Receipt.ID == "" {
		return fmt.Errorf("%s returned no receipt", o.tool)
	}
	return nil
}
