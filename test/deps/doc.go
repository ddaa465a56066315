// Package deps guards the module's import graph: its test fails, naming the
// offending import, when a package reaches for something its layer must not.
package deps
