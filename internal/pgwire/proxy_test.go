package pgwire

import (
	"encoding/binary"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/stretchr/testify/require"
)

// pgMessage frames a protocol message: type, length counting itself, body.
func pgMessage(typ byte, body ...byte) []byte {
	msg := []byte{typ, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(msg[1:], uint32(4+len(body)))
	return append(msg, body...)
}

func TestScannerFindsMessagesAcrossChunkBorders(t *testing.T) {
	t.Parallel()
	var stream []byte
	stream = append(stream, pgMessage('C', []byte("INSERT 0 1\x00")...)...)
	stream = append(stream, pgMessage('Z', 'T')...)
	stream = append(stream, pgMessage('D', make([]byte, 300)...)...)
	stream = append(stream, pgMessage('Z', 'I')...)
	want := [][2]byte{{'C', 0}, {'Z', 'T'}, {'D', 0}, {'Z', 'I'}}
	// Every chunk size, down to a byte at a time, splits headers and
	// bodies somewhere.
	for size := 1; size <= len(stream); size++ {
		var got [][2]byte
		s := &pgScanner{wantFirstByte: 'Z', onMessage: func(typ, first byte) { got = append(got, [2]byte{typ, first}) }}
		for b := stream; len(b) > 0; {
			n := min(size, len(b))
			s.scan(b[:n])
			b = b[n:]
		}
		require.Equal(t, want, got, "chunks of %d bytes", size)
	}
}

func TestProxyRefusesARequiredTLS(t *testing.T) {
	t.Parallel()
	_, _, err := Start("postgres://u@db.example:5432/x?sslmode=require")
	require.ErrorIs(t, err, ErrTLSRequired)
}

func TestProxyCountsWhatAClientAsks(t *testing.T) {
	t.Parallel()
	base := os.Getenv("DATABASE_URL")
	if base == "" {
		base = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	}
	p, relayed, err := Start(base)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, p.Stop()) })
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, relayed)
	if err != nil && os.Getenv("MAESTRO_SKIP_POSTGRES") == "1" {
		t.Skipf("skipping: PostgreSQL unreachable and MAESTRO_SKIP_POSTGRES=1: %v", err)
	}
	require.NoError(t, err)
	defer conn.Close(ctx)
	start := p.Counts()
	require.Equal(t, int64(1), start.Connections)

	// A statement's first run on a connection prepares it: a round trip
	// that runs nothing, then one that runs it.
	_, err = conn.Exec(ctx, "SELECT $1::int", 1)
	require.NoError(t, err)
	require.Equal(t, Counts{RoundTrips: 2, Statements: 1, Transactions: 1, Prepares: 1}, p.Counts().Minus(start))

	// A transaction of one statement is three round trips and one
	// transaction.
	before := p.Counts()
	tx, err := conn.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, "SELECT $1::int", 2)
	require.NoError(t, err)
	require.NoError(t, tx.Commit(ctx))
	require.Equal(t, Counts{RoundTrips: 3, Statements: 3, Transactions: 1}, p.Counts().Minus(before))
}
