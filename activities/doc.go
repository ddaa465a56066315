// Package activities performs maestro's side effects for the workflows:
// claiming the idempotency ledger, calling connectors, recording receipts
// and deferred work. Dependencies are injected into the Activities struct.
package activities
