// Package reality is the second rung of maestro's enforcement ladder: it
// fires every real-sync tool of a catalog through the real connectors at
// configured provider endpoints, then proves each effect by reading it back
// through the provider's own API.
//
// The read-back never consults maestro's ledger and never substitutes a
// local value for a provider answer: a read that fails is a failed tool,
// whatever the connector reported. A provider that cannot be read back
// cannot pass.
package reality
