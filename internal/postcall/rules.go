package postcall

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// Rules is the deterministic Extractor. Each recorded intent becomes one
// item calling the tool its catalog delivery names. Each transcript turn
// yields one item per postcall rule it matches, at most one per rule.
//
// Keys: an intent's item is keyed by the intent's ID, with source
// "deferred:<id>"; a rule's item by "<rule>-<turn>", with source
// "transcript:<rule>#<turn>", where turn is the turn's 0-based index in
// the transcript.
//
// Every item's arguments fit its tool's input schema. The gate checks them
// again at dispatch; judging them here reports a bad item with its reason
// rather than dispatching a call bound to be refused.
type Rules struct {
	Catalog *tools.Catalog
}

var _ Extractor = Rules{}

// Extract judges a call. It does no I/O, so it ignores the context.
func (r Rules) Extract(_ context.Context, g maestrotype.Gathered) (maestrotype.Judged, error) {
	if r.Catalog == nil {
		return maestrotype.Judged{}, errors.New("error extracting work items: no catalog to judge by")
	}
	for i, d := range g.Deferred {
		if d.ID == "" {
			return maestrotype.Judged{}, fmt.Errorf("error extracting work items: deferred item %d (%s) has no ID to key it by", i, d.Tool)
		}
	}
	pc := r.Catalog.PostCall()
	session := sessionData(g.Facts)
	var res maestrotype.Judged
	for _, d := range g.Deferred {
		item, err := r.deliver(pc, d, session)
		add(&res, item, err)
	}
	if pc != nil {
		for i, turn := range g.Transcript.Turns {
			for _, rule := range pc.Rules {
				if rule.Matches(turn) {
					item, err := r.dispatch(rule, pc.Urgent, i, turn, session)
					add(&res, item, err)
				}
			}
		}
	}
	if key, ok := duplicateKey(res); ok {
		return maestrotype.Judged{}, fmt.Errorf("error extracting work items: key %q names two pieces of work", key)
	}
	return res, nil
}

// deliver turns a recorded intent into the call that delivers it.
func (r Rules) deliver(pc *tools.PostCall, d maestrotype.DeferredIntent, session map[string]any) (maestrotype.WorkItem, error) {
	item := maestrotype.WorkItem{Key: d.ID, Source: "deferred:" + d.ID, DeferredID: d.ID}
	delivery, ok := pc.Delivery(d.Tool)
	if !ok {
		return item, fmt.Errorf("the catalog has no post-call delivery for %s", d.Tool)
	}
	item.Tool = delivery.Tool
	args, err := delivery.Render(d.Args, session)
	if err != nil {
		return item, err
	}
	item.Args = args
	item.Deadline = delivery.Deadline
	urgent := pc.Urgent.Matches(string(d.Args))
	for _, f := range delivery.Fallbacks {
		// A fallback that cannot be rendered is still tried: the gate
		// refuses it, and the refusal is one more attempt a human sees.
		fargs, err := f.Render(d.Tool, d.Args, session)
		if err != nil {
			fargs = nil
		}
		item.Fallbacks = append(item.Fallbacks, maestrotype.Channel{Tool: f.Tool, Args: fargs, Deadline: f.Deadline})
	}
	if urgent {
		markUrgent(&item, pc.Urgent.Deadline)
	}
	return item, r.fits(item)
}

// markUrgent cuts every channel's deadline to the urgent one.
func markUrgent(item *maestrotype.WorkItem, deadline time.Duration) {
	item.Urgent = true
	item.Deadline = min(item.Deadline, deadline)
	for i := range item.Fallbacks {
		item.Fallbacks[i].Deadline = min(item.Fallbacks[i].Deadline, deadline)
	}
}

// dispatch turns a turn a rule matched into the call the rule names.
func (r Rules) dispatch(rule tools.Rule, urgency *tools.Urgency, i int, turn maestrotype.Turn, session map[string]any) (maestrotype.WorkItem, error) {
	item := maestrotype.WorkItem{
		Key:    fmt.Sprintf("%s-%d", rule.Name, i),
		Tool:   rule.Tool,
		Source: fmt.Sprintf("transcript:%s#%d", rule.Name, i),
	}
	args, err := rule.Render(turn, session)
	if err != nil {
		return item, err
	}
	item.Args = args
	item.Deadline = tools.DefaultDeliveryDeadline
	if rule.Urgent || urgency.Matches(turn.Text) {
		markUrgent(&item, urgency.Deadline)
	}
	return item, r.fits(item)
}

func (r Rules) fits(item maestrotype.WorkItem) error {
	tool, ok := r.Catalog.Tool(item.Tool)
	if !ok {
		return fmt.Errorf("tool %s is not in the catalog", item.Tool)
	}
	return tool.ValidateArgs(item.Args)
}

// add records item in res, or the failure to make it.
func add(res *maestrotype.Judged, item maestrotype.WorkItem, err error) {
	if err != nil {
		res.Failures = append(res.Failures, maestrotype.ItemFailure{
			Key:        item.Key,
			Source:     item.Source,
			DeferredID: item.DeferredID,
			Tool:       item.Tool,
			Reason:     err.Error(),
		})
		return
	}
	res.Items = append(res.Items, item)
}

// sessionData gives templates the facts in the form they read them.
func sessionData(facts map[string]string) map[string]any {
	out := make(map[string]any, len(facts))
	for k, v := range facts {
		out[k] = v
	}
	return out
}

// duplicateKey finds a key used twice: a deferred ID gathered twice, or
// one that happens to spell a transcript item's key.
func duplicateKey(res maestrotype.Judged) (string, bool) {
	seen := make(map[string]bool, len(res.Items)+len(res.Failures))
	check := func(key string) bool {
		dup := seen[key]
		seen[key] = true
		return dup
	}
	for _, it := range res.Items {
		if check(it.Key) {
			return it.Key, true
		}
	}
	for _, f := range res.Failures {
		if check(f.Key) {
			return f.Key, true
		}
	}
	return "", false
}
