package fault

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Action is what a rule does to the requests it matches.
type Action string

const (
	// Fail answers with Rule.Status in the provider's error shape.
	Fail Action = "fail"
	// Delay holds the request for Rule.Delay, or until the client goes away.
	Delay Action = "delay"
	// Hang holds the request until Release or Reset, even if the client goes
	// away, so the test alone decides when the provider "wakes up".
	Hang Action = "hang"
	// Reset drops the connection without an answer, after the request was
	// written: before the effect the provider never acted, after it the
	// answer is lost.
	Reset Action = "reset"
	// Respond answers with Rule.Status and Rule.Body instead of the
	// provider's own answer: a 2xx that proves nothing, or one that carries
	// a failure status.
	Respond Action = "respond"
)

// Phase says where, relative to the provider's effect, a rule acts.
type Phase string

const (
	// BeforeEffect acts before the stand-in does anything with the request.
	BeforeEffect Phase = "before_effect"
	// AfterEffect acts once the effect is done and its response is ready but
	// not yet sent: the seam where a real response gets lost.
	AfterEffect Phase = "after_effect"
)

// Rule describes one injected fault.
type Rule struct {
	Action Action
	// Times is how many matching requests the rule applies to.
	// Optional: default 1.
	Times int
	// Status is the HTTP status a Fail answers with (4xx or 5xx), or a
	// Respond answers with (any). Fail and Respond only.
	Status int
	// Body is what a Respond answers with, verbatim (JSON or not).
	// Respond only. Optional: default empty.
	Body string
	// Delay is how long a Delay holds the request. Delay only.
	Delay time.Duration
	// Phase is where the rule acts.
	// Optional: default BeforeEffect for Fail, Hang, Reset and Respond,
	// AfterEffect for Delay.
	Phase Phase
	// Method limits the rule to one HTTP method. Optional: default any.
	Method string
	// Path limits the rule to request paths starting with it.
	// Optional: default any.
	Path string
}

func (r Rule) normalized() (Rule, error) {
	if r.Times == 0 {
		r.Times = 1
	}
	if r.Phase == "" {
		r.Phase = BeforeEffect
		if r.Action == Delay {
			r.Phase = AfterEffect
		}
	}
	r.Method = strings.ToUpper(r.Method)

	switch {
	case r.Times < 0:
		return Rule{}, fmt.Errorf("times must be positive, got %d", r.Times)
	case r.Phase != BeforeEffect && r.Phase != AfterEffect:
		return Rule{}, fmt.Errorf("unknown phase %q", r.Phase)
	}
	switch r.Action {
	case Fail:
		if r.Status < 400 || r.Status > 599 {
			return Rule{}, fmt.Errorf("fail needs a 4xx or 5xx status, got %d", r.Status)
		}
	case Delay:
		if r.Delay <= 0 {
			return Rule{}, errors.New("delay needs a positive duration")
		}
	case Respond:
		if r.Status < 200 || r.Status > 599 {
			return Rule{}, fmt.Errorf("respond needs a status from 200 to 599, got %d", r.Status)
		}
	case Hang, Reset:
	default:
		return Rule{}, fmt.Errorf("unknown action %q", r.Action)
	}
	return r, nil
}

func (r Rule) matches(req *http.Request, phase Phase) bool {
	return r.Phase == phase &&
		(r.Method == "" || r.Method == req.Method) &&
		strings.HasPrefix(req.URL.Path, r.Path)
}

// ruleJSON is the admin endpoint's wire form; durations travel as Go
// duration strings ("250ms") because nanosecond integers are unreadable.
type ruleJSON struct {
	Action Action `json:"action"`
	Times  int    `json:"times,omitempty"`
	Status int    `json:"status,omitempty"`
	Body   string `json:"body,omitempty"`
	Delay  string `json:"delay,omitempty"`
	Phase  Phase  `json:"phase,omitempty"`
	Method string `json:"method,omitempty"`
	Path   string `json:"path,omitempty"`
}

// MarshalJSON encodes the rule in the admin endpoint's form.
func (r Rule) MarshalJSON() ([]byte, error) {
	w := ruleJSON{
		Action: r.Action,
		Times:  r.Times,
		Status: r.Status,
		Body:   r.Body,
		Phase:  r.Phase,
		Method: r.Method,
		Path:   r.Path,
	}
	if r.Delay > 0 {
		w.Delay = r.Delay.String()
	}
	return json.Marshal(w)
}

// UnmarshalJSON decodes the admin endpoint's form. Unknown fields are
// rejected: a misspelt "status" would otherwise silently become another fault.
func (r *Rule) UnmarshalJSON(data []byte) error {
	var w ruleJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return err
	}
	var delay time.Duration
	if w.Delay != "" {
		d, err := time.ParseDuration(w.Delay)
		if err != nil {
			return fmt.Errorf("error parsing delay: %w", err)
		}
		delay = d
	}
	*r = Rule{
		Action: w.Action,
		Times:  w.Times,
		Status: w.Status,
		Body:   w.Body,
		Delay:  delay,
		Phase:  w.Phase,
		Method: w.Method,
		Path:   w.Path,
	}
	return nil
}
