// Package crashtest proves maestro's promise at its most fragile point: a
// worker killed after a provider accepted an effect and before the ledger
// recorded it. Its test, run by `make crashtest`, runs the worker as its
// own OS process, built with failpoints, against a Temporal server, a
// PostgreSQL ledger and provider stand-ins that outlive it; kills it with
// SIGKILL at that seam; restarts it; and counts the effects at the
// receivers. A control run with reconciliation and idempotency keys turned
// off must count every effect twice, or the test proves nothing. A third
// run has every provider perform its effect and then answer 5xx, and kills
// the worker as that error comes back: a retry that believed the 5xx would
// do everything twice, and the receivers must still hold exactly one of
// each. A second
// test kills the worker in the middle of a rollback, after the first
// compensation reached the provider, and proves that the saga resumes on
// restart and cancels each effect exactly once.
//
// The tests are behind the "crashtest" build tag: they build a binary and
// take about two minutes, so they run from their own make target.
package crashtest
