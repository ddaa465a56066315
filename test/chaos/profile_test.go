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
	// minKills is how many worker kills the run makes at least; it keeps
	// killing after the calls are done until it has made them.
	minKills int
	// killEvery is the pause between a restarted worker serving and the
	// next kill.
	killEvery time.Duration
	// inFlight bounds the requests open at once.
	inFlight int
	// deadline bounds the whole run.
	deadline time.Duration
}

var profiles = map[string]profile{
	"full": {name: "full", sessions: 100, callsPerSession: 20, minKills: 20, killEvery: 3 * time.Second, inFlight: 32, deadline: 28 * time.Minute},
	// smoke checks the harness itself in a minute or two.
	"smoke": {name: "smoke", sessions: 6, callsPerSession: 6, minKills: 2, killEvery: 3 * time.Second, inFlight: 6, deadline: 5 * time.Minute},
	"ci":    {name: "ci", sessions: 30, callsPerSession: 10, minKills: 6, killEvery: 3 * time.Second, inFlight: 16, deadline: 15 * time.Minute},
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
