package bench

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
)

// historyReaders bounds concurrent history reads, so reading does not
// compete with the server more than a handful of clients would.
const historyReaders = 8

// settleTimeout bounds the wait for a running workflow to finish its
// outstanding workflow task.
const settleTimeout = 10 * time.Second

// history is what one workflow's history says about the call it ran.
type history struct {
	// types are the event types in order, as Temporal's UI names them.
	types []string
	// run is the time from the workflow's start, or for a gated call from
	// the approval signal that woke it, to its last event.
	run time.Duration
	// activity is the time activities ran, from started to completed.
	activity time.Duration
}

// historyReader reads workflow histories: their events are the unit
// Temporal Cloud bills by, and their timestamps say where a call's time
// went.
type historyReader struct {
	temporal client.Client
}

// readAll reads the workflows' histories, a few at a time, each once
// ready says it is ready to be read.
func (h historyReader) readAll(ctx context.Context, ids []string, ready func(context.Context, string) error) ([]history, error) {
	out := make([]history, len(ids))
	errs := make([]error, len(ids))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(historyReaders, len(ids)) {
		wg.Go(func() {
			for i := range next {
				if errs[i] = ready(ctx, ids[i]); errs[i] != nil {
					continue
				}
				out[i], errs[i] = h.read(ctx, ids[i])
			}
		})
	}
	for i := range ids {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// read reads one workflow's whole history.
func (h historyReader) read(ctx context.Context, workflowID string) (history, error) {
	iter := h.temporal.GetWorkflowHistory(ctx, workflowID, "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var events []*historypb.HistoryEvent
	for iter.HasNext() {
		ev, err := iter.Next()
		if err != nil {
			return history{}, fmt.Errorf("error reading the history of %s: %w", workflowID, err)
		}
		events = append(events, ev)
	}
	return summarizeHistory(events), nil
}

func summarizeHistory(events []*historypb.HistoryEvent) history {
	var h history
	if len(events) == 0 {
		return h
	}
	start := events[0].GetEventTime().AsTime()
	started := map[int64]time.Time{} // scheduled event ID → started time
	for _, ev := range events {
		h.types = append(h.types, ev.GetEventType().String())
		at := ev.GetEventTime().AsTime()
		switch ev.GetEventType() {
		case enums.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
			start = at
		case enums.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			started[ev.GetActivityTaskStartedEventAttributes().GetScheduledEventId()] = at
		case enums.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			if s, ok := started[ev.GetActivityTaskCompletedEventAttributes().GetScheduledEventId()]; ok {
				h.activity += at.Sub(s)
			}
		}
	}
	h.run = events[len(events)-1].GetEventTime().AsTime().Sub(start)
	return h
}

// closed waits until a workflow has completed: maestro answers once the
// outcome is in its ledger, which can be before the invocation's workflow
// has run its last task, and that task's events count too.
func (h historyReader) closed(ctx context.Context, workflowID string) error {
	ctx, cancel := context.WithTimeout(ctx, settleTimeout)
	defer cancel()
	iter := h.temporal.GetWorkflowHistory(ctx, workflowID, "", true, enums.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT)
	for iter.HasNext() {
		if _, err := iter.Next(); err != nil {
			return fmt.Errorf("error waiting for %s to complete: %w", workflowID, err)
		}
	}
	return nil
}

// settle waits until a workflow has no workflow task scheduled or
// running: until it has taken in every signal sent to it so far.
func (h historyReader) settle(ctx context.Context, workflowID string) error {
	ctx, cancel := context.WithTimeout(ctx, settleTimeout)
	defer cancel()
	for {
		d, err := h.temporal.DescribeWorkflowExecution(ctx, workflowID, "")
		if err != nil {
			return fmt.Errorf("error describing %s: %w", workflowID, err)
		}
		if d.GetPendingWorkflowTask() == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("error waiting for %s to settle: %w", workflowID, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
