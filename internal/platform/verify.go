package platform

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Why a request's signature was refused. Each is answered 401 and runs
// nothing.
var (
	ErrUnsigned = errors.New("the request carries no signature")
	ErrForged   = errors.New("the signature does not match the body")
	ErrStale    = errors.New("the signature's timestamp is outside the tolerance")
	ErrReplayed = errors.New("the signature was seen before")
)

// Tolerances: how far a signature's timestamp may be from now.
const (
	// ElevenLabsTolerance is what ElevenLabs' own SDK accepts.
	ElevenLabsTolerance = 30 * time.Minute
	// RetellTolerance is what Retell's SDK accepts.
	RetellTolerance = 5 * time.Minute
	// VapiTolerance: Vapi documents none; five minutes, as Retell.
	VapiTolerance = 5 * time.Minute
)

// Signed is a verified signature: its identity for the replay guard, and
// how long it stays acceptable.
type Signed struct {
	ID      string
	Expires time.Time
}

func mac(secret []byte, parts ...string) []byte {
	h := hmac.New(sha256.New, secret)
	for _, p := range parts {
		h.Write([]byte(p))
	}
	return h.Sum(nil)
}

// fresh checks a timestamp against now, both ways: a timestamp far in the
// future is as suspect as an old one.
func fresh(at, now time.Time, tolerance time.Duration) error {
	if d := now.Sub(at); d > tolerance || d < -tolerance {
		return fmt.Errorf("%w: signed at %s, %s from now (tolerance %s)", ErrStale, at.UTC().Format(time.RFC3339), d.Round(time.Second), tolerance)
	}
	return nil
}

// VerifyElevenLabs checks ElevenLabs' post-call webhook signature:
// "ElevenLabs-Signature: t=<unix s>,v0=<hex HMAC-SHA256(secret, "<t>.<body>")>".
func VerifyElevenLabs(header string, body, secret []byte, now time.Time) (Signed, error) {
	if header == "" {
		return Signed{}, ErrUnsigned
	}
	var ts string
	var sigs []string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v0":
			sigs = append(sigs, v)
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(sigs) == 0 {
		return Signed{}, fmt.Errorf("%w: want t=<unix seconds>,v0=<hex>", ErrUnsigned)
	}
	want := mac(secret, ts, ".", string(body))
	if !anyHexEqual(sigs, want) {
		return Signed{}, ErrForged
	}
	at := time.Unix(sec, 0)
	if err := fresh(at, now, ElevenLabsTolerance); err != nil {
		return Signed{}, err
	}
	return Signed{ID: "elevenlabs:" + hex.EncodeToString(want), Expires: at.Add(ElevenLabsTolerance)}, nil
}

// VerifyVapi checks a Vapi HMAC credential's signature with its default
// settings: "x-signature" over "{timestamp}.{body}" with SHA-256, the
// timestamp in "x-timestamp". It accepts the signature in hex or base64,
// with or without a "sha256=" prefix, and the timestamp in seconds or
// milliseconds.
func VerifyVapi(signature, timestamp string, body, secret []byte, now time.Time) (Signed, error) {
	if signature == "" || timestamp == "" {
		return Signed{}, fmt.Errorf("%w: want x-signature and x-timestamp", ErrUnsigned)
	}
	n, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return Signed{}, fmt.Errorf("%w: x-timestamp %q is not a number", ErrUnsigned, timestamp)
	}
	want := mac(secret, timestamp, ".", string(body))
	sig := strings.TrimPrefix(strings.TrimSpace(signature), "sha256=")
	got, err := hex.DecodeString(sig)
	if err != nil {
		if got, err = base64.StdEncoding.DecodeString(sig); err != nil {
			return Signed{}, ErrForged
		}
	}
	if !hmac.Equal(got, want) {
		return Signed{}, ErrForged
	}
	at := time.Unix(n, 0)
	if n > 1e12 {
		at = time.UnixMilli(n)
	}
	if err := fresh(at, now, VapiTolerance); err != nil {
		return Signed{}, err
	}
	return Signed{ID: "vapi:" + hex.EncodeToString(want), Expires: at.Add(VapiTolerance)}, nil
}

// VerifyRetell checks "X-Retell-Signature: v=<unix ms>,d=<hex HMAC-SHA256
// keyed with the API key over body+timestamp>".
func VerifyRetell(header string, body, apiKey []byte, now time.Time) (Signed, error) {
	if header == "" {
		return Signed{}, ErrUnsigned
	}
	var ts, digest string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "v":
			ts = v
		case "d":
			digest = v
		}
	}
	ms, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || digest == "" {
		return Signed{}, fmt.Errorf("%w: want v=<unix ms>,d=<hex>", ErrUnsigned)
	}
	want := mac(apiKey, string(body), ts)
	if !anyHexEqual([]string{digest}, want) {
		return Signed{}, ErrForged
	}
	at := time.UnixMilli(ms)
	if err := fresh(at, now, RetellTolerance); err != nil {
		return Signed{}, err
	}
	return Signed{ID: "retell:" + hex.EncodeToString(want), Expires: at.Add(RetellTolerance)}, nil
}

// VerifyBearer checks the secret an ElevenLabs server tool sends in its
// Authorization header, in constant time.
func VerifyBearer(authorization string, secret []byte) error {
	tok, ok := strings.CutPrefix(authorization, "Bearer ")
	if !ok {
		if authorization == "" {
			return ErrUnsigned
		}
		tok = authorization
	}
	// Hashing first makes the comparison independent of the lengths.
	got, want := sha256.Sum256([]byte(strings.TrimSpace(tok))), sha256.Sum256(secret)
	if !hmac.Equal(got[:], want[:]) {
		return ErrForged
	}
	return nil
}

func anyHexEqual(sigs []string, want []byte) bool {
	ok := false
	for _, s := range sigs {
		got, err := hex.DecodeString(strings.TrimSpace(s))
		if err == nil && hmac.Equal(got, want) {
			ok = true
		}
	}
	return ok
}
