package ledger_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/internal/ledger/ledgertest"
	mt "github.com/maestro-run/maestro/maestrotype"
)

// benchBackends are the ledgers the effect benchmarks run on.
var benchBackends = []struct {
	name string
	open func(*testing.B) ledger.Store
}{
	{"SQLite", benchSQLite},
	{"Postgres", benchPostgres},
}

// BenchmarkEffectClaim measures the ledger claim every write makes before
// calling its provider, on each backend: a new key (a real-sync write), a
// new key with its undo entry in the same transaction (a compensable
// write), and a retry that finds the key settled.
func BenchmarkEffectClaim(b *testing.B) {
	for _, backend := range benchBackends {
		b.Run(backend.name, func(b *testing.B) {
			s := backend.open(b)
			ctx := b.Context()

			// Every run of a sub-benchmark claims keys of its own: -count
			// runs it again on the same ledger.
			b.Run("New", func(b *testing.B) {
				run, i := benchRandomHex(4), 0
				for b.Loop() {
					i++
					benchClaimNew(ctx, b, s, benchClaimParams(fmt.Sprintf("new-%s-%d", run, i), nil))
				}
			})

			b.Run("NewWithUndo", func(b *testing.B) {
				run, i := benchRandomHex(4), 0
				for b.Loop() {
					i++
					undo := &ledger.UndoEntry{
						SessionID:        "call-bench",
						CompensationTool: "cancel_work_order",
						ArgsSnapshot:     json.RawMessage(`{"work_order_id":"wo_0123456789"}`),
					}
					benchClaimNew(ctx, b, s, benchClaimParams(fmt.Sprintf("undo-%s-%d", run, i), undo))
				}
			})

			b.Run("Settled", func(b *testing.B) {
				p := benchClaimParams("settled-"+benchRandomHex(4), nil)
				benchClaimNew(ctx, b, s, p)
				receipt := &mt.Receipt{Provider: "twilio", ID: "SM0123", Status: "queued", IssuedAt: time.Now()}
				if err := s.EffectSettle(ctx, ledger.EffectSettleParams{
					OperationKey: p.OperationKey, Owner: p.Owner, Status: mt.EffectSucceeded, Receipt: receipt,
					Result: &mt.Observation{Status: mt.StatusSuccess, Summary: "sent", Receipt: receipt},
				}); err != nil {
					b.Fatal(err)
				}
				p.Owner = "retry"
				for b.Loop() {
					res, err := s.EffectClaim(ctx, p)
					if err != nil {
						b.Fatal(err)
					}
					if res.Outcome != ledger.ClaimSettled {
						b.Fatalf("a retry got %v, want the settled effect", res.Outcome)
					}
				}
			})
		})
	}
}

func benchClaimParams(key string, undo *ledger.UndoEntry) ledger.EffectClaimParams {
	return ledger.EffectClaimParams{
		OperationKey: key,
		InvocationID: "inv_" + key,
		Tool:         "send_sms",
		PayloadHash:  "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		Owner:        "run/activity/1",
		LeaseTTL:     30 * time.Second,
		BeforeState:  json.RawMessage(`{"kind":"twilio_sms","settings":{"to":"+14155550100","body":"We have your report."}}`),
		Undo:         undo,
	}
}

func benchClaimNew(ctx context.Context, b *testing.B, s ledger.Store, p ledger.EffectClaimParams) {
	res, err := s.EffectClaim(ctx, p)
	if err != nil {
		b.Fatal(err)
	}
	if res.Outcome != ledger.ClaimNew {
		b.Fatalf("claiming %s got %v, want a new claim", p.OperationKey, res.Outcome)
	}
}

// benchSQLite opens a migrated ledger in the benchmark's temporary
// directory, with the same settings as dev mode's.
func benchSQLite(b *testing.B) ledger.Store {
	b.Helper()
	s, err := ledger.OpenSQLite(b.Context(), filepath.Join(b.TempDir(), "ledger.db"))
	if err != nil {
		b.Fatal(err)
	}
	return benchMigrated(b, s)
}

// benchPostgres opens a migrated ledger in a fresh schema of the test
// database (DATABASE_URL, as for the tests), dropped afterwards.
func benchPostgres(b *testing.B) ledger.Store {
	b.Helper()
	base := os.Getenv("DATABASE_URL")
	if base == "" {
		base = ledgertest.DefaultDatabaseURL
	}
	ctx := b.Context()
	schema := "mb_" + benchRandomHex(8)
	dsn, err := ledger.SchemaCreate(ctx, base, schema)
	if ledgertest.Unreachable(err) {
		if os.Getenv("MAESTRO_SKIP_POSTGRES") == "1" {
			b.Skipf("skipping: PostgreSQL unreachable and MAESTRO_SKIP_POSTGRES=1: %v", err)
		}
		b.Fatalf("%v (set DATABASE_URL, or MAESTRO_SKIP_POSTGRES=1 to skip)", err)
	}
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		// b.Context is already canceled when cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := ledger.SchemaDrop(ctx, base, schema); err != nil {
			b.Error(err)
		}
	})
	s, err := ledger.OpenPostgres(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	return benchMigrated(b, s)
}

func benchMigrated(b *testing.B, s ledger.Store) ledger.Store {
	b.Helper()
	b.Cleanup(func() {
		if err := s.Close(); err != nil {
			b.Error(err)
		}
	})
	if err := s.Migrate(b.Context()); err != nil {
		b.Fatal(err)
	}
	return s
}

func benchRandomHex(n int) string {
	buf := make([]byte, n)
	_, _ = rand.Read(buf) // crypto/rand.Read never returns an error
	return hex.EncodeToString(buf)
}
