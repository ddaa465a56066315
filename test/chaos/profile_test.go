//go:build chaos

package chaos

import (
	"fmt"
	"os"
	"time"
)

// profile sizes a run. CHAOS_PROFILE picks one: full (the default), ci or smoke.
type profile struct {
	name            string
	sessions        int
	callsPerSession int
	// The faults, each kind injected at its own pace, independently of
	// the others, so that they sometimes overlap.
	workerKills, apiKills, pgRestarts, temporalRestarts, providerBursts pace
	// inFlight bounds the requests open at once.
	inFlight int
	// deadline bounds the whole run.
	deadline time.Duration
}

// pace is how often a kind of fault is injected: after a pause of about
// every (half of it more or less, at random) from the end of the last. The
// run injects at least min, going on after the calls are done until it has.
// Worker kills count workers, two for a round that kills a pair.
type pace struct {
	every time.Duration
	min   int
}

// pairEvery makes every n-th round of worker kills kill two at once.
const pairEvery = 4

var profiles = map[string]profile{
	"full": {
		name: "full", sessions: 500, callsPerSession: 20, inFlight: 48, deadline: 40 * time.Minute,
		workerKills:      pace{every: 2 * time.Second, min: 100},
		apiKills:         pace{every: time.Minute, min: 5},
		pgRestarts:       pace{every: 2 * time.Minute, min: 2},
		temporalRestarts: pace{every: 150 * time.Second, min: 2},
		// Every stand-in fails in each of its ways at least once.
		providerBursts: pace{every: 20 * time.Second, min: 12},
	},
	// smoke checks the harness itself in a few minutes, every fault at
	// least once, a pair of worker kills among them.
	"smoke": {
		name: "smoke", sessions: 8, callsPerSession: 8, inFlight: 8, deadline: 8 * time.Minute,
		workerKills:      pace{every: 1500 * time.Millisecond, min: 3},
		apiKills:         pace{every: 3 * time.Second, min: 1},
		pgRestarts:       pace{every: 4 * time.Second, min: 1},
		temporalRestarts: pace{every: 5 * time.Second, min: 1},
		providerBursts:   pace{every: 2 * time.Second, min: 1},
	},
	"ci": {
		name: "ci", sessions: 30, callsPerSession: 10, inFlight: 16, deadline: 15 * time.Minute,
		workerKills:      pace{every: 3 * time.Second, min: 6},
		apiKills:         pace{every: 10 * time.Second, min: 1},
		pgRestarts:       pace{every: 15 * time.Second, min: 1},
		temporalRestarts: pace{every: 20 * time.Second, min: 1},
		providerBursts:   pace{every: 8 * time.Second, min: 1},
	},
}

func chosenProfile() (profile, error) {
	name := os.Getenv("CHAOS_PROFILE")
	if name == "" {
		name = "full"
	}
	p, ok := profiles[name]
	if !ok {
		return profile{}, fmt.Errorf("CHAOS_PROFILE %q is not one of full, ci or smoke", name)
	}
	return p, nil
}

const (
	callerNumber = "+14155550100"
	tenantID     = "t_100"
	// refundEvery gives every n-th session a refund an operator decides;
	// rejectEvery of those the operator rejects.
	refundEvery = 3
	rejectEvery = 2
	// rollbackEvery rolls back every n-th session before it ends.
	rollbackEvery = 5
)

// call is one planned invocation and, once made, what came of it.
type call struct {
	session string
	key     string
	tool    string
	args    string
	state   string
	receipt string // the effect's ID at the provider, for effects
	latency time.Duration
}

// plan lays out a session's calls: a message for the office (delivered
// after the call), reads, texts to the caller's own number, compensable
// work orders and, in some sessions, a refund an operator decides. Each
// call's marker is in the effect it causes, so an effect at a stand-in
// traces to the one call that caused it.
func plan(p profile, s int) []*call {
	session := fmt.Sprintf("chaos-%03d", s)
	calls := make([]*call, 0, p.callsPerSession)
	for i := range p.callsPerSession {
		key := fmt.Sprintf("%s:%02d", session, i)
		c := &call{session: session, key: key}
		switch {
		case i == 1:
			c.tool = "take_message"
			c.args = fmt.Sprintf(`{"message":"message %s","callback_number":%q}`, key, callerNumber)
		case i == p.callsPerSession-1 && s%refundEvery == 0:
			c.tool = "issue_refund"
			c.args = fmt.Sprintf(`{"tenant_id":%q,"amount_cents":%d,"reason":"refund %s"}`, tenantID, 100+s, key)
		case i%3 == 0:
			c.tool = "lookup_tenant"
			c.args = fmt.Sprintf(`{"tenant_id":%q}`, tenantID)
		case i%3 == 1:
			c.tool = "send_sms"
			c.args = fmt.Sprintf(`{"to":%q,"body":"text %s"}`, callerNumber, key)
		default:
			c.tool = "create_work_order"
			c.args = fmt.Sprintf(`{"tenant_id":%q,"category":"other","description":"order %s","priority":"routine"}`, tenantID, key)
		}
		calls = append(calls, c)
	}
	return calls
}

// rejected says whether the operator rejects the session's refund.
func rejected(s int) bool { return (s/refundEvery)%rejectEvery == 1 }

// rolledBack says whether the session is rolled back before it ends.
func rolledBack(s int) bool { return s%rollbackEvery == 2 }
