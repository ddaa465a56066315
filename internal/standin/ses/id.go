package ses

import (
	"crypto/rand"
	"fmt"
	"time"
)

// newMessageID returns an ID shaped like SES's: a region-cell prefix and the
// millisecond timestamp in hex, a UUID, and a sequence suffix, e.g.
// 0100018f2b3c4d5e-1b4e28ba-2fa1-4d3b-9c5e-6a7b8c9d0e1f-000000.
func newMessageID(now time.Time) string {
	return fmt.Sprintf("01%014x-%s-000000", now.UnixMilli(), newUUID())
}

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
