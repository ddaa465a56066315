package codec_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"

	"github.com/maestro-run/maestro/internal/codec"
)

func newKey(t *testing.T) []byte {
	t.Helper()
	k := make([]byte, codec.KeySize)
	_, err := rand.Read(k)
	require.NoError(t, err)
	return k
}

func payload(t *testing.T, v any) *commonpb.Payload {
	t.Helper()
	p, err := converter.GetDefaultDataConverter().ToPayload(v)
	require.NoError(t, err)
	return p
}

const secret = "+14155550123 says the boiler is leaking"

func TestCodecRoundTrip(t *testing.T) {
	t.Parallel()
	c, err := codec.New("k1", map[string][]byte{"k1": newKey(t)})
	require.NoError(t, err)
	plain := payload(t, secret)
	enc, err := c.Encode([]*commonpb.Payload{plain})
	require.NoError(t, err)
	require.Equal(t, codec.Encoding, string(enc[0].Metadata[converter.MetadataEncoding]))
	require.Equal(t, "k1", string(enc[0].Metadata[codec.MetadataKeyID]))
	require.False(t, bytes.Contains(enc[0].Data, []byte("boiler")), "the payload is in clear")
	require.Len(t, enc[0].Metadata, 2, "the original metadata is encrypted too")

	dec, err := c.Decode(enc)
	require.NoError(t, err)
	var got string
	require.NoError(t, converter.GetDefaultDataConverter().FromPayload(dec[0], &got))
	require.Equal(t, secret, got)

	// The same value twice is two different ciphertexts.
	again, err := c.Encode([]*commonpb.Payload{plain})
	require.NoError(t, err)
	require.NotEqual(t, enc[0].Data, again[0].Data)
}

func TestCodecRotation(t *testing.T) {
	t.Parallel()
	oldKey, newKeyBytes := newKey(t), newKey(t)
	before, err := codec.New("2025", map[string][]byte{"2025": oldKey})
	require.NoError(t, err)
	written, err := before.Encode([]*commonpb.Payload{payload(t, secret)})
	require.NoError(t, err)

	after, err := codec.New("2026", map[string][]byte{"2025": oldKey, "2026": newKeyBytes})
	require.NoError(t, err)
	dec, err := after.Decode(written)
	require.NoError(t, err, "a history written under the old key still decodes")
	var got string
	require.NoError(t, converter.GetDefaultDataConverter().FromPayload(dec[0], &got))
	require.Equal(t, secret, got)

	fresh, err := after.Encode([]*commonpb.Payload{payload(t, secret)})
	require.NoError(t, err)
	require.Equal(t, "2026", string(fresh[0].Metadata[codec.MetadataKeyID]), "new payloads use the active key")
	_, err = before.Decode(fresh)
	var unknown *codec.UnknownKeyError
	require.ErrorAs(t, err, &unknown)
}

func TestCodecUnknownKey(t *testing.T) {
	t.Parallel()
	a, err := codec.New("a", map[string][]byte{"a": newKey(t)})
	require.NoError(t, err)
	b, err := codec.New("b", map[string][]byte{"b": newKey(t)})
	require.NoError(t, err)
	enc, err := a.Encode([]*commonpb.Payload{payload(t, secret)})
	require.NoError(t, err)
	_, err = b.Decode(enc)
	var unknown *codec.UnknownKeyError
	require.ErrorAs(t, err, &unknown)
	require.Equal(t, "a", unknown.KeyID)
	require.ErrorContains(t, err, `key "a"`)
}

func TestCodecTamperedCiphertext(t *testing.T) {
	t.Parallel()
	key := newKey(t)
	c, err := codec.New("k", map[string][]byte{"k": key, "other": newKey(t)})
	require.NoError(t, err)
	enc, err := c.Encode([]*commonpb.Payload{payload(t, secret)})
	require.NoError(t, err)

	flipped := &commonpb.Payload{Metadata: enc[0].Metadata, Data: bytes.Clone(enc[0].Data)}
	flipped.Data[len(flipped.Data)-1] ^= 1
	_, err = c.Decode([]*commonpb.Payload{flipped})
	require.ErrorContains(t, err, `error decrypting payload under key "k"`)

	short := &commonpb.Payload{Metadata: enc[0].Metadata, Data: enc[0].Data[:4]}
	_, err = c.Decode([]*commonpb.Payload{short})
	require.ErrorContains(t, err, "too short")

	// Relabelled with another loaded key's ID: the key ID is
	// authenticated, so this fails too.
	relabelled := &commonpb.Payload{Metadata: map[string][]byte{
		converter.MetadataEncoding: []byte(codec.Encoding), codec.MetadataKeyID: []byte("other"),
	}, Data: enc[0].Data}
	_, err = c.Decode([]*commonpb.Payload{relabelled})
	require.ErrorContains(t, err, `under key "other"`)
}

func TestCodecPassesPlainPayloadsThrough(t *testing.T) {
	t.Parallel()
	c, err := codec.New("k", map[string][]byte{"k": newKey(t)})
	require.NoError(t, err)
	plain := payload(t, secret)
	dec, err := c.Decode([]*commonpb.Payload{plain})
	require.NoError(t, err)
	require.Same(t, plain, dec[0])
}

func TestCodecDataConverterEncryptsFailures(t *testing.T) {
	t.Parallel()
	c, err := codec.New("k", map[string][]byte{"k": newKey(t)})
	require.NoError(t, err)
	f := c.FailureConverter().ErrorToFailure(errorString(secret))
	require.NotContains(t, f.GetMessage(), "boiler")
	require.NotNil(t, f.GetEncodedAttributes())
	require.False(t, bytes.Contains(f.GetEncodedAttributes().GetData(), []byte("boiler")))
	require.ErrorContains(t, c.FailureConverter().FailureToError(f), secret)
}

type errorString string

func (e errorString) Error() string { return string(e) }

func TestNewRefusesBadKeys(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		active string
		keys   map[string][]byte
		want   string
	}{
		"none":           {"k", nil, "no codec key"},
		"short key":      {"k", map[string][]byte{"k": make([]byte, 16)}, "16 bytes"},
		"bad ID":         {"a b", map[string][]byte{"a b": make([]byte, 32)}, "key ID"},
		"missing active": {"x", map[string][]byte{"k": make([]byte, 32)}, `active codec key "x"`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := codec.New(tc.active, tc.keys)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func b64(k []byte) string { return base64.StdEncoding.EncodeToString(k) }

func TestLoadInlineAndDir(t *testing.T) {
	t.Parallel()
	k1, k2 := newKey(t), newKey(t)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "k2.key"), []byte(b64(k2)+"\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "README"), []byte("not a key"), 0o600))
	c, err := codec.Load(codec.Config{Keys: "k1=" + b64(k1), KeyDir: dir, ActiveKey: "k2"})
	require.NoError(t, err)
	require.Equal(t, []string{"k1", "k2"}, c.KeyIDs())
	require.Equal(t, "k2", c.ActiveKeyID())

	one, err := codec.Load(codec.Config{Keys: " k1=" + b64(k1) + " ,"})
	require.NoError(t, err)
	require.Equal(t, "k1", one.ActiveKeyID(), "a single key is the active one")
}

func TestLoadRefusesBadConfig(t *testing.T) {
	t.Parallel()
	k := b64(newKey(t))
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.key"), []byte("short"), 0o600))
	for name, tc := range map[string]struct {
		cfg  codec.Config
		want string
	}{
		"nothing":        {codec.Config{}, "no codec key is configured"},
		"no equals":      {codec.Config{Keys: "justsomething"}, "not id=base64key"},
		"not base64":     {codec.Config{Keys: "k=!!!"}, "not base64"},
		"short":          {codec.Config{Keys: "k=" + b64(make([]byte, 16))}, "16 bytes"},
		"two, no active": {codec.Config{Keys: "a=" + k + ",b=" + b64(newKey(t))}, "MAESTRO_CODEC_ACTIVE_KEY"},
		"conflict":       {codec.Config{Keys: "a=" + k + ",a=" + b64(newKey(t))}, "given twice"},
		"unknown active": {codec.Config{Keys: "a=" + k, ActiveKey: "b"}, `active codec key "b"`},
		"bad file":       {codec.Config{KeyDir: dir}, "bad.key"},
		"missing dir":    {codec.Config{KeyDir: filepath.Join(dir, "nope")}, "error reading codec key directory"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := codec.Load(tc.cfg)
			require.ErrorContains(t, err, tc.want)
			require.NotContains(t, err.Error(), k, "an error never echoes a key")
		})
	}
}

func TestDevKeyDirPersists(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "codec")
	cfg, err := codec.DevKeyDir(dir)
	require.NoError(t, err)
	first, err := codec.Load(cfg)
	require.NoError(t, err)
	require.Equal(t, codec.DevKeyID, first.ActiveKeyID())
	enc, err := first.Encode([]*commonpb.Payload{payload(t, secret)})
	require.NoError(t, err)

	info, err := os.Stat(filepath.Join(dir, codec.DevKeyID+codec.KeyFileSuffix))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())

	cfg, err = codec.DevKeyDir(dir)
	require.NoError(t, err)
	second, err := codec.Load(cfg)
	require.NoError(t, err)
	_, err = second.Decode(enc)
	require.NoError(t, err, "a restart keeps the dev key")
}
