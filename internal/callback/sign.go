package callback

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Headers of a callback POST.
const (
	// SignatureHeader carries "t=<unix seconds>,v1=<hex HMAC-SHA256 of
	// "<t>.<body>">": the timestamp is signed with the body, so a captured
	// callback cannot be replayed later under a fresh time.
	SignatureHeader = "Maestro-Signature"
	// InvocationHeader names the invocation whose final observation the
	// body is: a receiver that sees it twice (an answer lost on the way
	// back) can drop the repeat.
	InvocationHeader = "Maestro-Invocation-Id"
)

// ErrBadSignature is returned by Verify for a header that does not prove
// the body came from maestro with the shared secret.
var ErrBadSignature = errors.New("callback signature does not verify")

// Sign returns the SignatureHeader value for body sent at t.
func Sign(secret []byte, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + mac(secret, ts, body)
}

// Verify checks a SignatureHeader value against body and refuses a
// timestamp further than tolerance from now, so receivers can reuse it.
func Verify(secret []byte, header string, body []byte, now time.Time, tolerance time.Duration) error {
	var ts, sig string
	for part := range strings.SplitSeq(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sig = v
		}
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || sig == "" {
		return fmt.Errorf("%w: want t=<unix>,v1=<hex>, got %q", ErrBadSignature, header)
	}
	if d := now.Sub(time.Unix(unix, 0)).Abs(); d > tolerance {
		return fmt.Errorf("%w: timestamp is %s away from now", ErrBadSignature, d)
	}
	if !hmac.Equal([]byte(sig), []byte(mac(secret, ts, body))) {
		return ErrBadSignature
	}
	return nil
}

func mac(secret []byte, ts string, body []byte) string {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte(ts))
	h.Write([]byte{'.'})
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}
