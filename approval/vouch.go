package approval

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/maestro-run/maestro/internal/ledger"
	mt "github.com/maestro-run/maestro/maestrotype"
)

// countsFact reports whether the policy's rule may rest on a fact of
// provenance p: the rule trusts its kind and, for an operator's fact, the
// operator it names holds the authority the rule would grant. A bare
// "operator" names nobody whose authority could be checked, so it never
// counts.
func (p Policy) countsFact(pv mt.Provenance) bool {
	if p.TrustsFact == nil || !p.TrustsFact(pv) {
		return false
	}
	if pv.Kind() != mt.ProvenanceOperator {
		return true
	}
	id := pv.Operator()
	return id != "" && p.Vouches != nil && p.Vouches(id)
}

// RestedOn is the detail of an auto-approval event: the facts the rule
// read, each with whose word it is, so the log names the operator whose
// vouch let a call through without a human.
type RestedOn struct {
	Facts []RestedFact `json:"rested_on"`
}

// RestedFact is one fact an auto-approval read.
type RestedFact struct {
	Fact       string        `json:"fact"`
	Value      string        `json:"value"`
	Provenance mt.Provenance `json:"provenance"`
}

// VouchedBy lists the provenances of operator-vouched facts, in fact
// order: who, beside the rule, answers for the decision.
func (r RestedOn) VouchedBy() []mt.Provenance {
	var out []mt.Provenance
	for _, f := range r.Facts {
		if f.Provenance.Operator() != "" && !slices.Contains(out, f.Provenance) {
			out = append(out, f.Provenance)
		}
	}
	return out
}

// restedOn is the decision detail of a request the policy's rule
// approved: the facts it was shown and reads. Nil when it read none.
func restedOn(sess ledger.Session, p Policy) (json.RawMessage, error) {
	shown := sess.FactsTrusted(p.countsFact)
	var r RestedOn
	for _, name := range slices.Sorted(maps.Keys(shown)) {
		if !p.Condition.ReadsFact(name) {
			continue
		}
		f, _ := sess.Fact(name)
		r.Facts = append(r.Facts, RestedFact{Fact: name, Value: f.Value, Provenance: f.Provenance})
	}
	if len(r.Facts) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("error encoding what the auto-approval rested on: %w", err)
	}
	return b, nil
}
