// Package admission decides whether a tool call may run at all, and how:
// deny by default, schema validation, argument freezing, operation-key
// claim and routing. It starts the invocation workflow for admitted calls.
// The HTTP API and the post-call workflow both admit calls through it.
package admission
