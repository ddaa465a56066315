package server

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
)

// TemporalAuth is how maestro proves itself to, and checks, a Temporal
// frontend: plain TCP (the default, for a cluster on a private network),
// TLS, mutual TLS, or an API key over TLS (Temporal Cloud).
type TemporalAuth struct {
	// TLS turns TLS on with the system's roots (TEMPORAL_TLS=true). Any of
	// the other fields turns it on too. Optional: default off.
	TLS bool
	// CAFile is a PEM bundle of the CAs the frontend's certificate must
	// chain to (TEMPORAL_TLS_CA_PATH), for a self-hosted cluster with its
	// own CA. Optional: default the system's roots.
	CAFile string
	// CertFile and KeyFile are maestro's client certificate and key, in
	// PEM, for mutual TLS (TEMPORAL_TLS_CERT_PATH, TEMPORAL_TLS_KEY_PATH).
	// Optional, but one needs the other.
	CertFile string
	KeyFile  string
	// ServerName is the name the frontend's certificate must carry, when
	// it is not the host in TEMPORAL_ADDRESS (TEMPORAL_TLS_SERVER_NAME).
	// Optional: default that host.
	ServerName string
	// APIKey authenticates maestro to Temporal Cloud, sent as a bearer
	// token over TLS (TEMPORAL_API_KEY). Optional.
	APIKey string
}

// enabled reports whether the connection uses TLS.
func (a TemporalAuth) enabled() bool {
	return a.TLS || a.CAFile != "" || a.CertFile != "" || a.KeyFile != "" || a.ServerName != "" || a.APIKey != ""
}

// validate checks the settings and that every file named can be read and
// parsed, so a mistake is reported at start rather than as a failed
// handshake.
func (a TemporalAuth) validate() error {
	_, err := a.tlsConfig()
	return err
}

// tlsConfig is the TLS configuration the client dials with, or nil for
// plain TCP.
func (a TemporalAuth) tlsConfig() (*tls.Config, error) {
	if !a.enabled() {
		return nil, nil
	}
	var errs []error
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: a.ServerName}
	if a.CAFile != "" {
		pem, err := os.ReadFile(a.CAFile)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("TEMPORAL_TLS_CA_PATH: error reading %s: %w", a.CAFile, err))
		default:
			cfg.RootCAs = x509.NewCertPool()
			if !cfg.RootCAs.AppendCertsFromPEM(pem) {
				errs = append(errs, fmt.Errorf("TEMPORAL_TLS_CA_PATH: %s holds no PEM certificate", a.CAFile))
			}
		}
	}
	switch {
	case a.CertFile != "" && a.KeyFile == "":
		errs = append(errs, errors.New("TEMPORAL_TLS_CERT_PATH is set but TEMPORAL_TLS_KEY_PATH is not: mutual TLS needs both"))
	case a.CertFile == "" && a.KeyFile != "":
		errs = append(errs, errors.New("TEMPORAL_TLS_KEY_PATH is set but TEMPORAL_TLS_CERT_PATH is not: mutual TLS needs both"))
	case a.CertFile != "":
		if err := readable(a.CertFile, "TEMPORAL_TLS_CERT_PATH"); err != nil {
			errs = append(errs, err)
		} else if err := readable(a.KeyFile, "TEMPORAL_TLS_KEY_PATH"); err != nil {
			errs = append(errs, err)
		} else if cert, err := tls.LoadX509KeyPair(a.CertFile, a.KeyFile); err != nil {
			errs = append(errs, fmt.Errorf("TEMPORAL_TLS_CERT_PATH / TEMPORAL_TLS_KEY_PATH: error loading %s and %s: %w", a.CertFile, a.KeyFile, err))
		} else {
			cfg.Certificates = []tls.Certificate{cert}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return cfg, nil
}

// readable names the setting and file that cannot be read.
func readable(path, setting string) error {
	if _, err := os.ReadFile(path); err != nil {
		return fmt.Errorf("%s: error reading %s: %w", setting, path, err)
	}
	return nil
}

// temporalClientOptions are the options maestro dials Temporal with.
func temporalClientOptions(addr, namespace string, auth TemporalAuth, logger *slog.Logger) (client.Options, error) {
	tlsCfg, err := auth.tlsConfig()
	if err != nil {
		return client.Options{}, err
	}
	opts := client.Options{
		HostPort:          addr,
		Namespace:         namespace,
		Logger:            sdklog.NewStructuredLogger(logger.With("component", "temporal-sdk")),
		ConnectionOptions: client.ConnectionOptions{TLS: tlsCfg, GrpcCompression: TemporalCompression(addr)},
	}
	if auth.APIKey != "" {
		opts.Credentials = client.NewAPIKeyStaticCredentials(auth.APIKey)
	}
	return opts, nil
}

// TemporalCompression is the gRPC compression for a Temporal server at
// addr: none over loopback, where compressing buys nothing and costs CPU on
// every call (ADR 8); otherwise the SDK's default, gzip.
func TemporalCompression(addr string) client.GrpcCompression {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil
	}
	if ip := net.ParseIP(host); host == "localhost" || (ip != nil && ip.IsLoopback()) {
		return &client.GrpcCompressionNone{}
	}
	return nil
}
