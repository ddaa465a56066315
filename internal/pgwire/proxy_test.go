package pgwire

import (
	"encoding/binary"
	"testing"

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
