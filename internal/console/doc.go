// Package console is the ops console: server-rendered pages in which
// operators sign in with their key and decide approvals, watch sessions,
// settle reconciliations and read the audit. It holds no logic of its own:
// every action goes through the HTTP API in process, as the signed-in
// operator, so the browser and the CLI are held to the same rules.
package console
