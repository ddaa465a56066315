// Package devtemporal runs a complete Temporal server inside the process for
// dev mode. State lives in a SQLite file, so workflows survive a restart.
package devtemporal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/metrics"
	"go.temporal.io/server/temporal"
)

// readyTimeout bounds the wait for a server that never becomes ready when the
// caller's context has no deadline of its own.
const readyTimeout = time.Minute

// Server is a running embedded Temporal server.
type Server struct {
	cfg      Config
	server   temporal.Server
	stopOnce sync.Once
	stopErr  error
}

// Start starts a server and returns once its frontend answers and the
// namespace is registered.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("error validating config: %w", err)
	}
	// The server treats a busy port as fatal; checking first turns the most
	// common failure, a second dev server, into an error.
	if err := checkPortsFree(cfg); err != nil {
		return nil, err
	}
	persistence, err := openPersistence(cfg)
	if err != nil {
		return nil, err
	}

	srv, err := newServer(cfg, persistence)
	if err != nil {
		return nil, err
	}
	if err := startServer(srv); err != nil {
		return nil, errors.Join(err, srv.Stop())
	}

	s := &Server{cfg: cfg, server: srv}
	if err := s.waitReady(ctx); err != nil {
		return nil, errors.Join(err, s.Stop())
	}
	return s, nil
}

// HostPort is the frontend address for SDK clients.
func (s *Server) HostPort() string { return s.cfg.frontendAddr() }

// Namespace is the namespace registered at start.
func (s *Server) Namespace() string { return s.cfg.Namespace }

// Stop stops the server. It is safe to call more than once.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		if err := s.server.Stop(); err != nil {
			s.stopErr = fmt.Errorf("error stopping server: %w", err)
		}
	})
	return s.stopErr
}

func (s *Server) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()

	nc, err := client.NewNamespaceClient(client.Options{
		HostPort: s.HostPort(),
		Logger:   sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)),
	})
	if err != nil {
		return fmt.Errorf("error creating readiness client: %w", err)
	}
	defer nc.Close()

	// Describe already retries while the frontend is unavailable; the loop
	// covers the moment before the frontend's namespace cache is filled.
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		_, err := nc.Describe(ctx, s.cfg.Namespace)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("error waiting for namespace %q at %s: %w", s.cfg.Namespace, s.HostPort(), err)
		case <-tick.C:
		}
	}
}

// newServer builds the server. The server reports a port it cannot bind
// through its logger's Fatal, which panics here; that becomes an error
// wrapping ErrPortTaken, as it would for any embedder that checked first.
func newServer(cfg Config, persistence config.Persistence) (srv temporal.Server, err error) {
	defer recoverListen(&err)
	srv, err = temporal.NewServer(
		temporal.WithConfig(serverConfig(cfg, persistence)),
		temporal.ForServices(temporal.DefaultServices),
		temporal.WithStaticHosts(staticHosts(cfg)),
		temporal.WithDynamicConfigClient(dynamicConfig()),
		temporal.WithCustomMetricsHandler(metrics.NoopMetricsHandler),
		temporal.WithLogger(serverLogger{l: cfg.Logger}),
	)
	if err != nil {
		return nil, fmt.Errorf("error creating server: %w", err)
	}
	return srv, nil
}

func startServer(srv temporal.Server) (err error) {
	defer recoverListen(&err)
	if err := srv.Start(); err != nil {
		return fmt.Errorf("error starting server: %w", err)
	}
	return nil
}

// recoverListen turns the server's panic over a port it could not bind
// into an error; any other panic is not ours to swallow.
func recoverListen(err *error) {
	r := recover()
	if r == nil {
		return
	}
	if msg, ok := r.(string); ok && strings.Contains(msg, "listener") {
		*err = fmt.Errorf("%w: %s", ErrPortTaken, msg)
		return
	}
	panic(r)
}

func checkPortsFree(c Config) error {
	addrs := []string{c.frontendAddr()}
	for _, offset := range []int{historyOffset, matchingOffset, workerOffset} {
		addrs = append(addrs, c.internalAddr(offset))
	}
	for _, addr := range addrs {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return fmt.Errorf("%w: error reserving %s: %w", ErrPortTaken, addr, err)
		}
		if err := l.Close(); err != nil {
			return fmt.Errorf("error releasing %s: %w", addr, err)
		}
	}
	return nil
}
