// Package maestrotype holds the types shared across maestro: tool classes,
// observations, receipts and ledger states. It imports nothing of ours, so
// every other package (including deterministic workflow code) may use it.
package maestrotype
