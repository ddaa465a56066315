package tools

import (
	"errors"
	"time"
)

// AnswerWithin is how long after a tool call arrives the platform waits for
// maestro's answer: the budget plus TimeoutMargin, the timeout the export
// gives the platform. A server must hold the call's connection that long
// for its answer to be delivered.
func (p *Platform) AnswerWithin() time.Duration {
	return p.AnswerBudget + TimeoutMargin
}

// budgetField names the catalog field the budget was read from.
func (p *Platform) budgetField() string {
	if p.AsyncTools {
		return "platform.async_budget"
	}
	return "platform.answer_budget"
}

// LongestAnswer is the longest AnswerWithin of the catalog's platform
// agents: how long a tool call may hold a connection. Zero without any.
func (c *Catalog) LongestAnswer() time.Duration {
	var longest time.Duration
	for _, a := range c.agents {
		if a.Platform != nil {
			longest = max(longest, a.Platform.AnswerWithin())
		}
	}
	return longest
}

// CheckAnswersWithin refuses every platform budget a server cannot serve
// when it holds a request at most limit, as a stopping process does its
// drain window: a call whose answer is due later would be cut off
// unanswered after its effect happened. setting names the server setting
// that sets limit, for the remedy.
func (c *Catalog) CheckAnswersWithin(limit time.Duration, setting string) error {
	var p problems
	for i, a := range c.agents {
		pl := a.Platform
		if pl == nil || pl.AnswerWithin() <= limit {
			continue
		}
		p.add(rowName("agents", i, a.ID), pl.budgetField(),
			"%s is answered up to %s after a call arrives, but %s is %s: a call in flight when the process stops would be cut off unanswered; raise %s to at least %s, or shorten the budget",
			pl.AnswerBudget, pl.AnswerWithin(), setting, limit, setting, pl.AnswerWithin())
	}
	return errors.Join(p.errs...)
}
