package tools

import (
	"slices"
	"strings"
)

// SessionFactID is the one session value every template may read: the
// session's own ID, which every call carries.
const SessionFactID = "id"

// A SessionFact is a fact the agent runtime may state about a session in
// its first call's session_context ("caller_number", "tenant_id"). The
// catalog's session_facts section is the contract between the runtime and
// the templates: a post-call template may read a declared fact, and reading
// one the catalog does not declare is refused at load, so a misspelt name
// is a load error rather than an argument that silently renders empty.
//
// Facts are optional: a runtime may leave any of them out. So only
// post-call arguments read them, where an absent value renders empty and
// the target tool's schema decides whether what is left is enough. Tool
// templates (connector settings, wording, compensation arguments) render
// strictly and see only .Session.id.
type SessionFact struct {
	Name        string
	Description string
}

type sessionFactFile struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
}

// SessionFacts returns the declared session facts, in file order.
func (c *Catalog) SessionFacts() []SessionFact {
	return slices.Clone(c.sessionFacts)
}

func (c *Catalog) sessionFactNames() []string {
	names := make([]string, len(c.sessionFacts))
	for i, f := range c.sessionFacts {
		names[i] = f.Name
	}
	return names
}

// sessionFacts checks the declared facts: each has a name fit for a
// template field, declared once, and none shadows the session's ID.
func (v *validator) sessionFacts() {
	p := v.p
	seen := make(map[string]bool)
	for i, f := range v.c.sessionFacts {
		row := rowName("session_facts", i, f.Name)
		switch {
		case !toolNameRE.MatchString(f.Name):
			p.add(row, "name", "want lower_snake_case, at most 64 characters, got %q", f.Name)
		case f.Name == SessionFactID:
			p.add(row, "name", "%q is the session's ID, which every template may read without declaring it", SessionFactID)
		case seen[f.Name]:
			p.add(row, "name", "duplicate session fact %q", f.Name)
		}
		seen[f.Name] = true
	}
}

// describeSessionFacts lists the declared facts for a refusal.
func (v *validator) describeSessionFacts() string {
	names := v.c.sessionFactNames()
	if len(names) == 0 {
		return "it declares none"
	}
	return "it declares " + strings.Join(names, ", ")
}
