package bench

import (
	"fmt"
	"io"
	"strings"

	"github.com/maestro-run/maestro/internal/pgwire"
)

// ledgerPerCall is a cell's ledger work divided by its calls. Whatever
// else maestro did with its ledger during the cell (a sweep, a session's
// bookkeeping after the call answered) is counted with it: the window runs
// from the first measured call to the moment every session the calls
// touched has settled.
type ledgerPerCall struct {
	counted                              bool
	roundTrips, statements, transactions float64
	connections                          int64
}

func perCall(d pgwire.Counts, calls int) ledgerPerCall {
	if calls == 0 {
		return ledgerPerCall{}
	}
	n := float64(calls)
	return ledgerPerCall{
		counted:      true,
		roundTrips:   float64(d.RoundTrips) / n,
		statements:   float64(d.Statements) / n,
		transactions: float64(d.Transactions) / n,
		connections:  d.Connections,
	}
}

// writeLedgerTable prints maestro's ledger work per call, route by route.
func (rep report) writeLedgerTable(w io.Writer) error {
	var b strings.Builder
	if !rep.ledgerCounted {
		b.WriteString("\nLedger round trips per call: not counted; they are counted on a PostgreSQL ledger (-database-url) with -count-ledger.\n")
		_, err := io.WriteString(w, b.String())
		return err
	}
	b.WriteString("\nLedger work per maestro call (PostgreSQL ledger, read off the wire between maestro and PostgreSQL)\n")
	const row = "%-12s %5s %12s %12s %12s %10s\n"
	fmt.Fprintf(&b, row, "op", "conc", "round trips", "statements", "transactions", "new conns")
	for _, r := range rep.results {
		if r.path != pathMaestro || !r.ledger.counted {
			continue
		}
		fmt.Fprintf(&b, row, r.op, fmt.Sprint(r.concurrency), fmt.Sprintf("%.1f", r.ledger.roundTrips),
			fmt.Sprintf("%.1f", r.ledger.statements), fmt.Sprintf("%.1f", r.ledger.transactions), fmt.Sprint(r.ledger.connections))
	}
	if len(rep.ownLedger) > 0 {
		b.WriteString("\nEach route's own ledger work per call (calls one at a time in an open session, median; what the goal rows judge)\n")
		fmt.Fprintf(&b, row, "op", "", "round trips", "statements", "transactions", "")
		for _, op := range barRoutes {
			if l, ok := rep.ownLedger[op]; ok {
				fmt.Fprintf(&b, row, op, "", fmt.Sprintf("%.0f", l.roundTrips), fmt.Sprintf("%.0f", l.statements), fmt.Sprintf("%.0f", l.transactions), "")
			}
		}
	}
	b.WriteString(ledgerLegend)
	_, err := io.WriteString(w, b.String())
	return err
}

const ledgerLegend = `round trips: exchanges maestro waited on PostgreSQL for (ReadyForQuery
messages); statements: Execute and simple Query messages; transactions:
returns to idle after a statement or a block (commits, rollbacks,
autocommitted statements); new conns: connections opened in the cell. For
maestro/approval the window starts at the operator's decision, so the
request that opened the approval is not counted. A cell's counts hold all
the ledger did while it ran: opening one session in every few calls,
recording Twilio's delivery reports, the timed loops. A route's own work
is counted from the request until its answer is back, its workflow has
closed and the outbox owes nothing, with Twilio's reports withheld; round
trips that only prepare a statement are left out.
`
