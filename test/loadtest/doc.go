// Package loadtest holds maestro's bounded load test. Its only test lives
// behind the loadtest build tag so the ordinary test run stays fast; run it
// with `make loadtest`.
//
// The test drives one dev-mode process on loopback with hundreds of
// concurrent sessions of mixed calls, then proves the invariant from the
// outside in: the ledger holds exactly one terminal outcome per call, the
// effects the provider stand-ins hold are exactly the committed receipts,
// no effect happened twice, no approval was lost, and the audit scan is
// clean.
package loadtest
