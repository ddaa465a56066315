// Package devtemporaltest runs maestro's Temporal server in a process of
// its own for a package's tests. The race detector instruments everything
// compiled into a test binary; Temporal's server and its SQLite, which the
// tests use but do not examine, run several times slower under it and
// would take most of a race-enabled run's CPU.
package devtemporaltest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Namespace is the namespace the server registers.
const Namespace = "maestro-test"

// startTimeout bounds building the server and waiting for it to answer.
const startTimeout = 5 * time.Minute

// Server is a Temporal server running as a child process, its state in
// SQLite files in a temporary directory.
type Server struct {
	cmd      *exec.Cmd
	dir      string
	hostPort string
	exited   chan error
}

// Start builds maestro's worker command without the race detector and runs
// its temporal subcommand on free ports. It returns once the frontend
// answers and the namespace is registered. It is meant for TestMain, so it
// returns an error rather than failing a test.
func Start() (*Server, error) {
	dir, err := os.MkdirTemp("", "maestro-temporal-")
	if err != nil {
		return nil, fmt.Errorf("error creating a directory for Temporal: %w", err)
	}
	s := &Server{dir: dir, exited: make(chan error, 1)}
	if err := s.start(); err != nil {
		return nil, errors.Join(err, s.Stop())
	}
	return s, nil
}

func (s *Server) start() error {
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	bin := filepath.Join(s.dir, "maestro")
	out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/maestro-run/maestro/cmd/worker").CombinedOutput()
	if err != nil {
		return fmt.Errorf("error building the Temporal server: %w\n%s", err, out)
	}
	logPath := filepath.Join(s.dir, "temporal.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("error creating the Temporal server's log: %w", err)
	}
	defer logFile.Close() // the child holds its own descriptor
	s.cmd = exec.Command(bin, "temporal", "--data-dir", filepath.Join(s.dir, "data"),
		"--port", "0", "--namespace", Namespace, "-v")
	s.cmd.Stderr = logFile
	dieWithParent(s.cmd)
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("error reading the Temporal server's output: %w", err)
	}
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("error starting the Temporal server: %w", err)
	}
	ready := make(chan string, 1)
	go func() {
		lines := bufio.NewScanner(stdout)
		for lines.Scan() {
			if rest, ok := strings.CutPrefix(lines.Text(), "ready "); ok {
				ready <- rest
			}
		}
		s.exited <- s.cmd.Wait()
	}()
	select {
	case s.hostPort = <-ready:
		return nil
	case err := <-s.exited:
		s.cmd = nil
		return fmt.Errorf("the Temporal server exited before it was ready (%v):\n%s", err, tail(logPath))
	case <-ctx.Done():
		return fmt.Errorf("the Temporal server was not ready within %s:\n%s", startTimeout, tail(logPath))
	}
}

// HostPort is the frontend address for SDK clients.
func (s *Server) HostPort() string { return s.hostPort }

// Stop ends the server and removes its state. It is safe to call once the
// tests are done, whatever Start returned.
func (s *Server) Stop() error {
	var errs []error
	if s.cmd != nil {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-s.exited:
			if err != nil {
				errs = append(errs, fmt.Errorf("the Temporal server stopped with an error: %w", err))
			}
		case <-time.After(time.Minute):
			_ = s.cmd.Process.Kill()
			errs = append(errs, errors.New("the Temporal server did not stop within a minute of SIGTERM; killed"))
		}
	}
	errs = append(errs, os.RemoveAll(s.dir))
	return errors.Join(errs...)
}

// tail is the end of the server's log, for an error that needs it.
func tail(path string) string {
	b, _ := os.ReadFile(path)
	const keep = 4000
	if len(b) > keep {
		b = b[len(b)-keep:]
	}
	return string(b)
}
