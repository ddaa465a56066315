package rule

import (
	"slices"

	"github.com/google/cel-go/cel"
	celast "github.com/google/cel-go/common/ast"
)

// sessionVar is the variable a condition reads session facts through.
const sessionVar = "session"

// sessionReads finds the session facts a checked condition reads, so an
// auto-approval can say which facts, and so whose word, it rested on. A
// condition that uses session other than as session.<name> (indexing it,
// passing it whole) is taken to read every fact.
func sessionReads(ast *cel.Ast) (names []string, all bool) {
	root := celast.NavigateAST(ast.NativeRep())
	for _, e := range celast.MatchDescendants(root, celast.KindMatcher(celast.IdentKind)) {
		if e.AsIdent() != sessionVar {
			continue
		}
		parent, ok := e.Parent()
		if !ok || parent.Kind() != celast.SelectKind || parent.AsSelect().Operand().ID() != e.ID() {
			return nil, true
		}
		names = append(names, parent.AsSelect().FieldName())
	}
	slices.Sort(names)
	return slices.Compact(names), false
}

// ReadsFact reports whether the condition may read the named session
// fact.
func (c *Condition) ReadsFact(name string) bool {
	return c.readsAll || slices.Contains(c.reads, name)
}
