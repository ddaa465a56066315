package postcall

import (
	"context"

	"github.com/maestro-run/maestro/maestrotype"
)

// An Extractor judges one call: it decides which work the call left
// behind and what to dispatch for it.
//
// An implementation must key every item stably, so a re-run yields the
// same keys, and uniquely within the session: the dispatch step derives
// each item's operation key from it. It returns an error only when it
// cannot judge the call at all; work it found but cannot dispatch belongs
// in Judged.Failures, so one bad item never holds back the rest. It reads
// the transcript in g.Transcript: TranscriptRef is fetched, and the
// transcript stored in the ledger read, before judging.
type Extractor interface {
	Extract(ctx context.Context, g maestrotype.Gathered) (maestrotype.Judged, error)
}
