// Package chaos holds maestro's production-shape chaos test. Its only test
// lives behind the chaos build tag; run it with `make chaos`.
//
// The test runs the production shape on loopback, every part its own
// process: a Temporal server on PostgreSQL with several history shards,
// the provider stand-ins, one API process and three worker processes over
// one ledger. Sessions of mixed calls run while a random worker is killed
// with SIGKILL and restarted every few seconds and the API process is
// restarted once. Afterwards the outcome is proved at the stand-ins and in
// the ledger: no effect twice, none lost, every invocation final, every
// approval's effect at most once, the audit clean, and every session's
// post-call work delivered once.
package chaos
