// Package chaos holds maestro's production-shape chaos test. Its only test
// lives behind the chaos build tag; run it with `make chaos`.
//
// The test runs the production shape on loopback, every part its own
// process: a Temporal server on PostgreSQL with four history shards, the
// provider stand-ins, two API processes behind a round-robin proxy (the
// address clients and Twilio's delivery reports use) and three worker
// processes over one ledger. Every process reaches PostgreSQL through a
// TCP proxy the test can restart. Sessions of mixed calls run while the
// test, each kind at its own random pace: SIGKILLs workers, sometimes two
// at once; SIGKILLs an API process holding requests, which the proxy
// answers 502 and the clients retry with the same operation key; restarts
// PostgreSQL, dropping every connection and refusing new ones for a few
// seconds; SIGKILLs and restarts the Temporal server; and makes the
// provider stand-ins fail in bursts. Every killed process is started
// again where it was.
//
// Afterwards the outcome is proved at the stand-ins and in the ledger: no
// effect twice, none lost, every invocation final, every approval's effect
// at most once, the audit clean, and every session's post-call work
// delivered once. results/chaos.json holds the figures, the count of
// every kind of fault and the schedule of when each was injected.
package chaos
