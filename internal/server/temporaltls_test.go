package server

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
)

// pki is a throwaway CA with a server and a client certificate, as PEM
// files.
type pki struct {
	caFile, serverCert, serverKey, clientCert, clientKey string
}

func newPKI(t *testing.T) pki {
	t.Helper()
	dir := t.TempDir()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	ca, err := x509.ParseCertificate(caDER)
	require.NoError(t, err)

	write := func(name, kind string, der []byte) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600))
		return path
	}
	issue := func(name string, serial int64, usage x509.ExtKeyUsage) (string, string) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		require.NoError(t, err)
		keyDER, err := x509.MarshalECPrivateKey(key)
		require.NoError(t, err)
		return write(name+".pem", "CERTIFICATE", der), write(name+"-key.pem", "EC PRIVATE KEY", keyDER)
	}
	p := pki{caFile: write("ca.pem", "CERTIFICATE", caDER)}
	p.serverCert, p.serverKey = issue("temporal.internal", 2, x509.ExtKeyUsageServerAuth)
	p.clientCert, p.clientKey = issue("maestro", 3, x509.ExtKeyUsageClientAuth)
	return p
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

func TestTemporalClientOptionsWithoutAuthArePlainTCP(t *testing.T) {
	t.Parallel()
	opts, err := temporalClientOptions("temporal:7233", "prod", TemporalAuth{}, discard())
	require.NoError(t, err)
	require.Equal(t, "temporal:7233", opts.HostPort)
	require.Equal(t, "prod", opts.Namespace)
	require.Nil(t, opts.ConnectionOptions.TLS)
	require.Nil(t, opts.Credentials)
}

func TestTemporalClientOptionsTLSWithSystemRoots(t *testing.T) {
	t.Parallel()
	opts, err := temporalClientOptions("temporal:7233", "prod", TemporalAuth{TLS: true}, discard())
	require.NoError(t, err)
	require.NotNil(t, opts.ConnectionOptions.TLS)
	require.Nil(t, opts.ConnectionOptions.TLS.RootCAs, "the system's roots")
	require.Empty(t, opts.ConnectionOptions.TLS.Certificates)
}

func TestTemporalClientOptionsAPIKeyUsesTLS(t *testing.T) {
	t.Parallel()
	opts, err := temporalClientOptions("ns.acct.tmprl.cloud:7233", "ns.acct", TemporalAuth{APIKey: "secret"}, discard())
	require.NoError(t, err)
	require.NotNil(t, opts.Credentials)
	require.NotNil(t, opts.ConnectionOptions.TLS, "an API key is never sent in the clear")
}

// TestTemporalMutualTLSHandshakes dials a TLS listener that demands a
// client certificate from the same CA with the options maestro builds:
// the handshake succeeds both ways, and fails without the client
// certificate.
func TestTemporalMutualTLSHandshakes(t *testing.T) {
	t.Parallel()
	p := newPKI(t)
	serverCert, err := tls.LoadX509KeyPair(p.serverCert, p.serverKey)
	require.NoError(t, err)
	caPEM, err := os.ReadFile(p.caFile)
	require.NoError(t, err)
	clients := x509.NewCertPool()
	require.True(t, clients.AppendCertsFromPEM(caPEM))
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{
		Certificates: []tls.Certificate{serverCert}, ClientCAs: clients, ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12,
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if c.(*tls.Conn).Handshake() == nil {
					_, _ = c.Write([]byte("k"))
				}
			}()
		}
	}()

	handshake := func(auth TemporalAuth) error {
		opts, err := temporalClientOptions(ln.Addr().String(), "default", auth, discard())
		require.NoError(t, err)
		conn, err := tls.Dial("tcp", ln.Addr().String(), opts.ConnectionOptions.TLS)
		if err != nil {
			return err
		}
		defer conn.Close()
		// In TLS 1.3 the server checks the client's certificate after the
		// client's handshake ends: the byte it sends on success, or the
		// alert it sends instead, is its verdict.
		_, err = io.ReadFull(conn, make([]byte, 1))
		return err
	}
	require.NoError(t, handshake(TemporalAuth{CAFile: p.caFile, CertFile: p.clientCert, KeyFile: p.clientKey, ServerName: "temporal.internal"}))
	require.Error(t, handshake(TemporalAuth{CAFile: p.caFile, ServerName: "temporal.internal"}), "the server demands a client certificate")
	require.Error(t, handshake(TemporalAuth{CAFile: p.caFile, CertFile: p.clientCert, KeyFile: p.clientKey, ServerName: "other.internal"}),
		"the server's certificate must carry the server name")
	require.Error(t, handshake(TemporalAuth{TLS: true, CertFile: p.clientCert, KeyFile: p.clientKey, ServerName: "temporal.internal"}),
		"without the CA the server's certificate is not trusted")
}

func TestTemporalAuthRefusesBadSettings(t *testing.T) {
	t.Parallel()
	p := newPKI(t)
	missing := filepath.Join(t.TempDir(), "nope.pem")
	notPEM := filepath.Join(t.TempDir(), "ca.txt")
	require.NoError(t, os.WriteFile(notPEM, []byte("not a certificate"), 0o600))
	cases := map[string]struct {
		auth TemporalAuth
		want string
	}{
		"cert without key":    {TemporalAuth{CertFile: p.clientCert}, "TEMPORAL_TLS_CERT_PATH is set but TEMPORAL_TLS_KEY_PATH is not"},
		"key without cert":    {TemporalAuth{KeyFile: p.clientKey}, "TEMPORAL_TLS_KEY_PATH is set but TEMPORAL_TLS_CERT_PATH is not"},
		"CA file missing":     {TemporalAuth{CAFile: missing}, "TEMPORAL_TLS_CA_PATH: error reading " + missing},
		"CA file not PEM":     {TemporalAuth{CAFile: notPEM}, "TEMPORAL_TLS_CA_PATH: " + notPEM + " holds no PEM certificate"},
		"cert file missing":   {TemporalAuth{CertFile: missing, KeyFile: p.clientKey}, "TEMPORAL_TLS_CERT_PATH: error reading " + missing},
		"key file missing":    {TemporalAuth{CertFile: p.clientCert, KeyFile: missing}, "TEMPORAL_TLS_KEY_PATH: error reading " + missing},
		"key of another pair": {TemporalAuth{CertFile: p.clientCert, KeyFile: p.serverKey}, "error loading " + p.clientCert + " and " + p.serverKey},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := temporalClientOptions("temporal:7233", "default", tc.auth, discard())
			require.ErrorContains(t, err, tc.want)
			cfg := Config{TemporalAddress: "temporal:7233", TemporalAuth: tc.auth}.WithDefaults()
			require.ErrorContains(t, cfg.validate(), tc.want, "checked before start-up goes further")
		})
	}
}

func TestTemporalAuthNeedsAnAddress(t *testing.T) {
	t.Parallel()
	cfg := Config{Dev: true, TemporalAuth: TemporalAuth{APIKey: "secret"}}.WithDefaults()
	require.ErrorContains(t, cfg.validate(), "TEMPORAL_TLS* and TEMPORAL_API_KEY secure the connection to TEMPORAL_ADDRESS, which is not set")
}

func TestTemporalAuthFromEnv(t *testing.T) {
	t.Setenv("TEMPORAL_TLS", "true")
	t.Setenv("TEMPORAL_TLS_CA_PATH", "/etc/temporal/ca.pem")
	t.Setenv("TEMPORAL_TLS_CERT_PATH", "/etc/temporal/client.pem")
	t.Setenv("TEMPORAL_TLS_KEY_PATH", "/etc/temporal/client-key.pem")
	t.Setenv("TEMPORAL_TLS_SERVER_NAME", "temporal.internal")
	t.Setenv("TEMPORAL_API_KEY", "secret")
	t.Setenv("MAESTRO_ROLE", "worker")
	t.Setenv("MAESTRO_DRAIN_TIMEOUT", "45s")
	cfg := FromEnv()
	require.Equal(t, TemporalAuth{
		TLS: true, CAFile: "/etc/temporal/ca.pem", CertFile: "/etc/temporal/client.pem", KeyFile: "/etc/temporal/client-key.pem",
		ServerName: "temporal.internal", APIKey: "secret",
	}, cfg.TemporalAuth)
	require.Equal(t, RoleWorker, cfg.Role)
	require.Equal(t, 45*time.Second, cfg.DrainTimeout)

	t.Setenv("TEMPORAL_TLS", "yes please")
	t.Setenv("MAESTRO_DRAIN_TIMEOUT", "soon")
	err := FromEnv().WithDefaults().validate()
	require.ErrorContains(t, err, `TEMPORAL_TLS must be true or false, got "yes please"`)
	require.ErrorContains(t, err, "--drain-timeout (MAESTRO_DRAIN_TIMEOUT) must be a positive duration such as 30s")
}

func TestTemporalCompressionIsOffOnlyOverLoopback(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"127.0.0.1:7233", "[::1]:7233", "localhost:7233"} {
		require.IsType(t, &client.GrpcCompressionNone{}, TemporalCompression(addr), addr)
	}
	for _, addr := range []string{"temporal.internal:7233", "10.0.0.5:7233", "not an address"} {
		require.Nil(t, TemporalCompression(addr), "%s keeps the SDK's default, gzip", addr)
	}
}
