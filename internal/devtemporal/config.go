package devtemporal

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
)

// Each service listens at a fixed offset from Config.Port. Addresses that
// never change between runs let the membership table be written up front, so
// a restart has no stale member to wait out.
const (
	frontendOffset = iota
	historyOffset
	matchingOffset
	workerOffset

	portsUsed = workerOffset + 1
)

const loopback = "127.0.0.1"

// Config describes an embedded dev server.
type Config struct {
	// DataDir is the directory holding the SQLite files. Required unless
	// Postgres is set.
	DataDir string
	// Postgres keeps state in PostgreSQL instead. Optional: default nil,
	// SQLite under DataDir with one history shard.
	Postgres *Postgres
	// Namespace is registered on every start. Optional: default "default".
	Namespace string
	// Host is the IP address the frontend binds to; the other services stay
	// on loopback. Optional: default "127.0.0.1".
	Host string
	// Port is the frontend gRPC port. History, matching and worker listen on
	// Port+1, Port+2 and Port+3. Optional: default 7233.
	Port int
	// Logger receives the server's logs. Optional: default discards them,
	// because the server logs heavily even when healthy.
	Logger *slog.Logger
}

// WithDefaults returns c with every unset optional field filled in.
func (c Config) WithDefaults() Config {
	if c.Namespace == "" {
		c.Namespace = "default"
	}
	if c.Host == "" {
		c.Host = "127.0.0.1"
	}
	if c.Port == 0 {
		c.Port = 7233
	}
	if c.Postgres != nil {
		p := c.Postgres.WithDefaults()
		c.Postgres = &p
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

func (c Config) validate() error {
	if c.Postgres != nil {
		if err := c.Postgres.validate(); err != nil {
			return fmt.Errorf("error validating PostgreSQL settings: %w", err)
		}
	} else if c.DataDir == "" {
		return errors.New("DataDir is required")
	}
	if net.ParseIP(c.Host) == nil {
		return fmt.Errorf("host %q is not an IP address", c.Host)
	}
	if c.Port < 1 || c.Port+portsUsed-1 > 65535 {
		return fmt.Errorf("port %d leaves no room for the %d ports the server needs", c.Port, portsUsed)
	}
	return nil
}

// frontendAddr is where clients reach the server.
func (c Config) frontendAddr() string {
	return net.JoinHostPort(c.Host, strconv.Itoa(c.Port+frontendOffset))
}

// internalAddr is where the frontend and the other services reach a
// non-frontend service. Only the frontend is exposed on Host.
func (c Config) internalAddr(offset int) string {
	return net.JoinHostPort(loopback, strconv.Itoa(c.Port+offset))
}
