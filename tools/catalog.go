package tools

import (
	"slices"
)

// A Catalog is a loaded, validated catalog file. It is immutable and safe
// for concurrent use.
type Catalog struct {
	hash      string
	source    []byte
	tools     map[string]*Tool
	sorted    []*Tool
	agents    []*Agent
	operators []*Operator
	roles     []*Role
	postCall  *PostCall
	// sessionFacts is the contract of what a session may carry: see
	// SessionFact.
	sessionFacts []SessionFact
	// permissions are the roles the catalog names for each permission it
	// sets; the rest keep their defaults.
	permissions map[Permission][]string
}

// Hash returns the hex sha256 of the catalog file, recorded next to the
// mirrored rows so a reader can tell which file they came from.
func (c *Catalog) Hash() string {
	return c.hash
}

// Source returns the file the catalog was loaded from, byte for byte: the
// ledger keeps it under Hash so any process can load that version again.
func (c *Catalog) Source() []byte {
	return slices.Clone(c.source)
}

// Tool returns the named tool. A tool that is not in the catalog does not
// run.
func (c *Catalog) Tool(name string) (*Tool, bool) {
	t, ok := c.tools[name]
	return t, ok
}

// Tools returns every tool, sorted by name.
func (c *Catalog) Tools() []*Tool {
	return slices.Clone(c.sorted)
}

// Agent returns the agent with the given ID.
func (c *Catalog) Agent(id string) (*Agent, bool) {
	i := slices.IndexFunc(c.agents, func(a *Agent) bool { return a.ID == id })
	if i < 0 {
		return nil, false
	}
	return c.agents[i], true
}

// Agents returns every agent, in file order.
func (c *Catalog) Agents() []*Agent {
	return slices.Clone(c.agents)
}

// AgentByKey authenticates an agent by its API key.
func (c *Catalog) AgentByKey(key string) (*Agent, bool) {
	return byKey(c.agents, key, func(a *Agent) (keyHash, bool) { return a.key, a.hasKey })
}

// Operator returns the operator with the given ID.
func (c *Catalog) Operator(id string) (*Operator, bool) {
	i := slices.IndexFunc(c.operators, func(o *Operator) bool { return o.ID == id })
	if i < 0 {
		return nil, false
	}
	return c.operators[i], true
}

// Operators returns every operator, in file order.
func (c *Catalog) Operators() []*Operator {
	return slices.Clone(c.operators)
}

// OperatorByKey authenticates an operator by its API key.
func (c *Catalog) OperatorByKey(key string) (*Operator, bool) {
	return byKey(c.operators, key, func(o *Operator) (keyHash, bool) { return o.key, o.hasKey })
}

// PostCall returns the post-call section, or nil when the catalog has none
// (which it may only when no tool is record-deferred).
func (c *Catalog) PostCall() *PostCall {
	return c.postCall
}
