// Package failpoint lets a test stop maestro at a named point in its code,
// the way a power cut or an OOM kill would. It exists for the crash test,
// which proves that an effect the provider accepted is recorded exactly
// once even when the worker dies before the ledger hears of it.
//
// Nothing here is compiled into a normal build: without the "failpoint"
// build tag every function is an empty stub the compiler removes, so no
// environment variable can arm a failpoint in production. With the tag, a
// failpoint is still inert until the environment names it:
//
//	MAESTRO_FAILPOINT=after-provider  arm the named point (or after-provider-error, after-compensation)
//	MAESTRO_FAILPOINT_HITS=4          kill when the 4th call reaches it (default 1)
//	MAESTRO_UNSAFE_NO_LEDGER=1        bypass reconciliation and idempotency keys
//
// Calls that reach an armed point before the last hit wait there, so every
// one of them is caught between the provider and the ledger when the
// process dies.
//
// MAESTRO_UNSAFE_NO_LEDGER turns off the protections the crash test is
// meant to prove necessary; the test runs with it once to show that it
// then counts duplicates.
package failpoint

// AfterProvider is the seam between a provider accepting an effect and the
// ledger settling it.
const AfterProvider = "after-provider"

// AfterProviderError is the seam between a provider answering with an
// error that proves nothing (a 5xx, say, perhaps after it acted) and
// maestro reconciling or recording it.
const AfterProviderError = "after-provider-error"

// AfterCompensation is the seam inside a rollback between a provider
// undoing an effect and the undo entry recording it.
const AfterCompensation = "after-compensation"

// BetweenParts is the seam inside a composite effect (a page by text and
// email) between one part settled in the ledger and the next not yet sent.
const BetweenParts = "between-parts"
