//go:build crashtest

package crashtest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// servingPrefix is how the worker announces its API once it is ready.
const servingPrefix = "maestro is serving on "

// buildWorker compiles cmd/worker with failpoints compiled in. They stay
// inert until the environment arms them.
func buildWorker(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "worker")
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "build", "-tags", "failpoint", "-o", bin, "github.com/maestro-run/maestro/cmd/worker").CombinedOutput()
	require.NoError(t, err, "building the worker: %s", out)
	return bin
}

// worker is one worker process.
type worker struct {
	t      *testing.T
	name   string
	cmd    *exec.Cmd
	log    string
	url    string
	exited chan struct{} // closed once the process has exited
}

// startWorker starts the worker binary with args and env and returns once
// its API listens. Its output goes to a log file, shown if the test fails.
func startWorker(t *testing.T, bin, name string, args, env []string) *worker {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), name+".log")
	logFile, err := os.Create(logPath)
	require.NoError(t, err)
	serving := make(chan string, 1)
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	cmd.Stdout = &lineWatcher{out: logFile, prefix: servingPrefix, found: serving}
	cmd.Stderr = logFile
	require.NoError(t, cmd.Start())

	w := &worker{t: t, name: name, cmd: cmd, log: logPath, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		_ = logFile.Close()
		close(w.exited)
	}()
	t.Cleanup(w.stop)

	select {
	case w.url = <-serving:
		return w
	case <-w.exited:
		w.dumpLog()
		t.Fatalf("worker %s exited before serving: %s", name, cmd.ProcessState)
	case <-time.After(time.Minute):
		w.dumpLog()
		t.Fatalf("worker %s did not serve within a minute", name)
	}
	return nil
}

// waitKilled waits for the process to die and checks that SIGKILL, the
// failpoint's signal, is what ended it.
func (w *worker) waitKilled(timeout time.Duration) {
	w.t.Helper()
	select {
	case <-w.exited:
	case <-time.After(timeout):
		w.dumpLog()
		w.t.Fatalf("worker %s was not killed at the failpoint within %s", w.name, timeout)
	}
	ws, ok := w.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		w.dumpLog()
		w.t.Fatalf("worker %s ended with %s, not SIGKILL", w.name, w.cmd.ProcessState)
	}
}

// stop ends a worker this test started and has not seen exit.
func (w *worker) stop() {
	select {
	case <-w.exited:
		return
	default:
	}
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.exited:
	case <-time.After(10 * time.Second):
		_ = w.cmd.Process.Kill()
		<-w.exited
	}
	if w.t.Failed() {
		w.dumpLog()
	}
}

func (w *worker) dumpLog() {
	b, err := os.ReadFile(w.log)
	if err != nil {
		return
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	w.t.Logf("last lines of worker %s:\n%s", w.name, strings.Join(lines, "\n"))
}

// lineWatcher copies output to out and reports the rest of the first line
// that starts with prefix.
type lineWatcher struct {
	out    *os.File
	prefix string
	found  chan<- string

	mu   sync.Mutex
	buf  bytes.Buffer
	done bool
}

func (l *lineWatcher) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.done {
		l.buf.Write(p)
		for {
			line, err := l.buf.ReadString('\n')
			if err != nil {
				// An unfinished line waits for the rest of it.
				l.buf.Reset()
				l.buf.WriteString(line)
				break
			}
			if rest, ok := strings.CutPrefix(line, l.prefix); ok {
				l.found <- strings.TrimSpace(rest)
				l.done = true
				break
			}
		}
	}
	return l.out.Write(p)
}
