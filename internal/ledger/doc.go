// Package store is maestro's ledger: sessions, invocations, the idempotency
// ledger of effects, undo entries and how their compensations settled,
// deferred items and the post-call items that deliver them, approval
// requests with their append-only event log and single-use tokens, and
// refusals.
// PostgreSQL (through pgx) is the production backend; SQLite serves dev mode
// behind the same interface, and one conformance suite runs against both.
//
// There is one implementation, over database/sql. What the backends do
// differently lives in their SQL: each dialect has its own embedded query
// files (queries/<dialect>/*.sql, one "-- name: EntityVerb" per query) and
// numbered migrations (migrations/<dialect>/NNN_name.sql), kept as alike
// as the two databases allow.
//
// Time: every timestamp the ledger makes, and every lease decision, uses
// the database's clock. It is the one clock all workers share, so a worker
// whose own clock drifts can neither cut another's lease short nor stretch
// its own. PostgreSQL stores timestamptz (microseconds); SQLite stores
// fixed-width UTC text at millisecond precision, so its string order is time
// order. Times come back in UTC either way.
package ledger
