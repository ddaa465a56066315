package approval

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/approval/rule"
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

// restedOn is the decision detail of a request cond approved: the facts
// it was shown and reads. Nil when it read none.
func restedOn(sess ledger.Session, shown map[string]string, cond *rule.Condition) (json.RawMessage, error) {
	var r apitype.RestedOn
	for _, name := range slices.Sorted(maps.Keys(shown)) {
		if !cond.ReadsFact(name) {
			continue
		}
		f, _ := sess.Fact(name)
		r.Facts = append(r.Facts, apitype.RestedFact{Fact: name, Value: f.Value, Provenance: f.Provenance})
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
