// Package bench measures what maestro's guarantees cost. In one process,
// on one embedded Temporal server and one set of provider stand-ins, it
// makes the same tool calls four ways: the connector called directly (no
// durability), a bare Temporal workflow running the connector as one
// activity (the durability floor, with variants for the Temporal features
// maestro could adopt), maestro through its HTTP API, and maestro's
// approval round trip. For each it reports latency percentiles,
// throughput and the Temporal history events each invocation costs, as a
// table, a CSV file and an SVG chart.
package bench
