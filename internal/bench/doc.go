// Package bench measures what maestro's guarantees cost. In one process,
// on one embedded Temporal server and one set of provider stand-ins, it
// makes the same tool calls four ways: the connector called directly (no
// durability), a bare Temporal workflow running the connector as one
// activity (the durability floor, with variants for the Temporal features
// maestro uses or could adopt), maestro through its HTTP API, and maestro's
// approval round trip against a bare signal-driven workflow. For each it
// reports latency percentiles, throughput, the Temporal history events
// each invocation costs and, on a PostgreSQL ledger, the ledger round trips,
// as a table, a CSV file and an SVG chart; then it judges the goals of
// "voice-grade latency" against the bare workflow that uses the same
// Temporal features as maestro's route, as a table of passes and misses.
package bench
