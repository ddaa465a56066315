package apitype

import mt "github.com/maestro-run/maestro/maestrotype"

// RestedOn is the detail of an auto_approved approval event: the facts
// the rule read, each with whose word it is, so the log names the
// operator whose vouch let a call through without a human.
type RestedOn struct {
	Facts []RestedFact `json:"rested_on"`
}

// RestedFact is one fact an auto-approval read.
type RestedFact struct {
	Fact       string        `json:"fact"`
	Value      string        `json:"value"`
	Provenance mt.Provenance `json:"provenance"`
}
