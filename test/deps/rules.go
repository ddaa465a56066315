package deps

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Graph maps an import path to the packages it imports directly (test files
// excluded: a test may use what the shipped code may not).
type Graph map[string][]string

// workflowsMayUse is all of this module a workflow may import: workflow
// code replays from history, so it must not reach a database or the network.
var workflowsMayUse = []string{"maestrotype"}

// starterMayUse is all of this module the CLI links: it talks to maestro
// only through the HTTP API. The one exception is `starter catalog check`,
// which checks a file with no maestro running, as users' own CI needs: it
// links the catalog's loader and fence (eval, tools and what they use),
// which read nothing but the file, and never a connector, the ledger or
// the server.
var starterMayUse = []string{"apiclient", "apitype", "maestrotype", "eval", "tools", "approval/rule", "receipts"}

// standinImporters may import the provider stand-ins: the stand-ins
// themselves, the dev-mode wiring and the harnesses that drive maestro
// against them. Anything else would ship fakes beside the real connectors.
var standinImporters = []string{
	"internal/standin", "internal/devtemporal", "internal/server",
	"internal/bench", "internal/demo", "eval/grader", "eval/reality",
	"cmd/eval", "cmd/bench", "cmd/demo", "test",
}

// ioStdlib are the standard packages that do I/O; workflow code may not
// import them directly (the SDK's own use of net/http is its business).
var ioStdlib = []string{"net", "os", "database", "io/fs", "syscall", "plugin"}

// storageDeps may not be reached from workflow code by any path.
// database/sql/driver is not among them: it is only interfaces, which the
// SDK reaches through github.com/google/uuid.
var storageDeps = []string{"github.com/jackc", "modernc.org/sqlite", "github.com/mattn/go-sqlite3"}

// Violations checks g against the module's import rules and returns one
// message per offending import, naming it; none means the graph is clean.
func Violations(g Graph, module string) []string {
	c := checker{g: g, module: module}
	var out []string
	for _, p := range c.ours() {
		rel := c.rel(p)
		if under(rel, "workflows") {
			out = append(out, c.workflows(p)...)
		}
		if rel == "cmd/starter" {
			out = append(out, c.starter(p)...)
		}
		if !underAny(rel, standinImporters) {
			out = append(out, c.standins(p)...)
		}
	}
	sort.Strings(out)
	return out
}

type checker struct {
	g      Graph
	module string
}

func (c checker) workflows(p string) []string {
	var out []string
	for _, d := range c.g[p] {
		switch {
		case c.isOurs(d):
			if !underAny(c.rel(d), append([]string{"workflows"}, workflowsMayUse...)) {
				out = append(out, fmt.Sprintf("%s imports %s: of this module, workflow code may import only %s", c.rel(p), c.rel(d), strings.Join(workflowsMayUse, ", ")))
			}
		case isStdlib(d):
			if underAny(d, ioStdlib) {
				out = append(out, fmt.Sprintf("%s imports %s: workflow code replays from history and may not do I/O", c.rel(p), d))
			}
		case !under(d, "go.temporal.io"):
			out = append(out, fmt.Sprintf("%s imports %s: workflow code may import only the standard library, go.temporal.io/... and %s", c.rel(p), d, strings.Join(workflowsMayUse, ", ")))
		}
	}
	c.walk(p, func(d string, via []string) {
		switch {
		case d == "database/sql" || underAny(d, storageDeps):
			out = append(out, fmt.Sprintf("%s depends on %s (%s): workflow code may not reach a database", c.rel(p), d, strings.Join(via, " -> ")))
		case c.isOurs(d) && len(via) > 2 && !underAny(c.rel(d), append([]string{"workflows"}, workflowsMayUse...)):
			out = append(out, fmt.Sprintf("%s depends on %s (%s): of this module, workflow code may use only %s", c.rel(p), c.rel(d), strings.Join(via, " -> "), strings.Join(workflowsMayUse, ", ")))
		}
	})
	return out
}

func (c checker) starter(p string) []string {
	var out []string
	c.walk(p, func(d string, via []string) {
		if c.isOurs(d) && !slices.Contains(starterMayUse, c.rel(d)) {
			out = append(out, fmt.Sprintf("%s depends on %s (%s): the CLI may link of this module only %s", c.rel(p), c.rel(d), strings.Join(via, " -> "), strings.Join(starterMayUse, ", ")))
		}
	})
	return out
}

func (c checker) standins(p string) []string {
	var out []string
	for _, d := range c.g[p] {
		if c.isOurs(d) && under(c.rel(d), "internal/standin") {
			out = append(out, fmt.Sprintf("%s imports %s: only the dev-mode wiring and the test harnesses may import the stand-ins", c.rel(p), c.rel(d)))
		}
	}
	return out
}

// walk calls fn once for every package p reaches, with the import chain
// that first reached it.
func (c checker) walk(p string, fn func(dep string, via []string)) {
	seen := map[string]bool{p: true}
	type step struct {
		pkg string
		via []string
	}
	queue := []step{{p, []string{c.rel(p)}}}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, d := range c.g[s.pkg] {
			if seen[d] {
				continue
			}
			seen[d] = true
			via := append(slices.Clip(s.via), c.rel(d))
			fn(d, via)
			queue = append(queue, step{d, via})
		}
	}
}

// ours lists the module's packages, sorted.
func (c checker) ours() []string {
	var out []string
	for p := range c.g {
		if c.isOurs(p) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

func (c checker) isOurs(p string) bool { return p == c.module || under(p, c.module) }

// rel names one of the module's packages by its path inside the module.
func (c checker) rel(p string) string {
	if c.isOurs(p) {
		return strings.TrimPrefix(strings.TrimPrefix(p, c.module), "/")
	}
	return p
}

// under reports whether path is dir or inside it.
func under(path, dir string) bool { return path == dir || strings.HasPrefix(path, dir+"/") }

func underAny(path string, dirs []string) bool {
	return slices.ContainsFunc(dirs, func(d string) bool { return under(path, d) })
}

// isStdlib reports whether an import path is in the standard library: its
// first element has no dot.
func isStdlib(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}
