package platform

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func sign(secret string, parts ...string) []byte {
	h := hmac.New(sha256.New, []byte(secret))
	for _, p := range parts {
		h.Write([]byte(p))
	}
	return h.Sum(nil)
}

var (
	body   = []byte(`{"message":{"type":"tool-calls"}}`)
	secret = []byte("s3cret")
	now    = time.Unix(1_800_000_000, 0)
)

func TestVerifyElevenLabs(t *testing.T) {
	t.Parallel()
	ts := strconv.FormatInt(now.Unix(), 10)
	good := "t=" + ts + ",v0=" + hex.EncodeToString(sign("s3cret", ts, ".", string(body)))
	sig, err := VerifyElevenLabs(good, body, secret, now.Add(29*time.Minute))
	require.NoError(t, err)
	require.NotEmpty(t, sig.ID)

	_, err = VerifyElevenLabs(good, body, secret, now.Add(31*time.Minute))
	require.ErrorIs(t, err, ErrStale)
	_, err = VerifyElevenLabs(good, append(body, ' '), secret, now)
	require.ErrorIs(t, err, ErrForged)
	_, err = VerifyElevenLabs(good, body, []byte("other"), now)
	require.ErrorIs(t, err, ErrForged)
	_, err = VerifyElevenLabs("", body, secret, now)
	require.ErrorIs(t, err, ErrUnsigned)
	_, err = VerifyElevenLabs("v0=abc", body, secret, now)
	require.ErrorIs(t, err, ErrUnsigned)
}

func TestVerifyVapi(t *testing.T) {
	t.Parallel()
	for _, ts := range []string{strconv.FormatInt(now.UnixMilli(), 10), strconv.FormatInt(now.Unix(), 10)} {
		mac := sign("s3cret", ts, ".", string(body))
		for _, sigHeader := range []string{hex.EncodeToString(mac), "sha256=" + hex.EncodeToString(mac), base64.StdEncoding.EncodeToString(mac)} {
			_, err := VerifyVapi(sigHeader, ts, body, secret, now.Add(time.Minute))
			require.NoError(t, err, sigHeader)
		}
		_, err := VerifyVapi(hex.EncodeToString(mac), ts, body, secret, now.Add(6*time.Minute))
		require.ErrorIs(t, err, ErrStale)
		_, err = VerifyVapi(hex.EncodeToString(mac), ts, body, []byte("other"), now)
		require.ErrorIs(t, err, ErrForged)
	}
	_, err := VerifyVapi("", "", body, secret, now)
	require.ErrorIs(t, err, ErrUnsigned)
}

func TestVerifyRetell(t *testing.T) {
	t.Parallel()
	v := strconv.FormatInt(now.UnixMilli(), 10)
	good := "v=" + v + ",d=" + hex.EncodeToString(sign("s3cret", string(body), v))
	_, err := VerifyRetell(good, body, secret, now.Add(4*time.Minute))
	require.NoError(t, err)
	_, err = VerifyRetell(good, body, secret, now.Add(-6*time.Minute))
	require.ErrorIs(t, err, ErrStale)
	// The timestamp is part of what is signed: moving it forges.
	moved := "v=" + strconv.FormatInt(now.UnixMilli()+1, 10) + ",d=" + hex.EncodeToString(sign("s3cret", string(body), v))
	_, err = VerifyRetell(moved, body, secret, now)
	require.ErrorIs(t, err, ErrForged)
}

func TestVerifyBearer(t *testing.T) {
	t.Parallel()
	require.NoError(t, VerifyBearer("Bearer s3cret", secret))
	require.ErrorIs(t, VerifyBearer("Bearer s3cre", secret), ErrForged)
	require.ErrorIs(t, VerifyBearer("", secret), ErrUnsigned)
}

func TestTranscripts(t *testing.T) {
	t.Parallel()
	msg, err := ParseVapi([]byte(`{"message":{"type":"end-of-call-report","call":{"id":"c1"},"artifact":{"messages":[
		{"role":"system","message":"prompt"},{"role":"bot","message":"Hi","time":1800000000000},{"role":"user","message":"Call me back"}]}}}`))
	require.NoError(t, err)
	turns := msg.Transcript().Turns
	require.Len(t, turns, 2)
	require.Equal(t, "agent", turns[0].Speaker)
	require.Equal(t, "caller", turns[1].Speaker)

	call, args, err := ParseElevenLabsTool([]byte(`{"to":"+1","system__conversation_id":"conv_1","system__caller_id":"+14155550100"}`))
	require.NoError(t, err)
	require.Equal(t, "conv_1", call.ID)
	require.Equal(t, "+14155550100", call.Signed["caller_number"])
	require.JSONEq(t, `{"to":"+1"}`, string(args), "system variables are not arguments")

	calls, errs := VapiMessage{ToolCallList: []vapiToolCall{{ID: "t1", Name: "x", Arguments: []byte(`"{\"a\":1}"`)}}}.ToolCalls()
	require.NoError(t, errs[0])
	require.JSONEq(t, `{"a":1}`, string(calls[0].Args), "arguments as a JSON string")
}
