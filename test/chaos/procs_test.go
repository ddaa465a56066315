//go:build chaos

package chaos

import (
	"bufio"
	"context"
	"fmt"
	"io"
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

// build compiles a command of this module into dir.
func build(t *testing.T, dir, pkg string) string {
	t.Helper()
	bin := filepath.Join(dir, filepath.Base(pkg))
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/maestro-run/maestro/"+pkg).CombinedOutput()
	require.NoError(t, err, "building %s: %s", pkg, out)
	return bin
}

// proc is one process the test started. Its output goes to a log file,
// whose tail is shown when the process fails to start or the test fails.
type proc struct {
	name   string
	cmd    *exec.Cmd
	log    string
	exited chan struct{}
}

// startProc starts bin and waits until it prints a line starting with
// prefix; it returns that line's rest, and lines gets every stdout line
// after it.
func startProc(t *testing.T, dir, name, bin string, env []string, prefix string, lines func(string), args ...string) (*proc, string) {
	t.Helper()
	p, rest, err := launch(t, dir, name, bin, env, prefix, lines, args...)
	require.NoError(t, err)
	return p, rest
}

// launch is startProc for goroutines other than the test's, which must
// not stop the test themselves.
func launch(t *testing.T, dir, name, bin string, env []string, prefix string, lines func(string), args ...string) (*proc, string, error) {
	logPath := filepath.Join(dir, name+".log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, "", fmt.Errorf("error opening %s's log: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = logFile
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", fmt.Errorf("error piping %s's output: %w", name, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("error starting %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: logPath, exited: make(chan struct{})}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		seen := false
		for sc.Scan() {
			line := sc.Text()
			_, _ = io.WriteString(logFile, line+"\n")
			if rest, ok := strings.CutPrefix(line, prefix); ok && !seen {
				seen = true
				found <- strings.TrimSpace(rest)
				continue
			}
			if seen && lines != nil {
				lines(line)
			}
		}
		_ = cmd.Wait()
		_ = logFile.Close()
		close(p.exited)
	}()
	select {
	case rest := <-found:
		return p, rest, nil
	case <-p.exited:
		p.dumpLog(t)
		return nil, "", fmt.Errorf("%s exited before serving: %s", name, cmd.ProcessState)
	case <-time.After(2 * time.Minute):
		p.kill()
		p.dumpLog(t)
		return nil, "", fmt.Errorf("%s did not serve within two minutes", name)
	}
}

// kill ends the process with SIGKILL and waits for it to be gone.
func (p *proc) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

// stop asks the process to drain and exit, and kills it if it does not.
func (p *proc) stop() {
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(40 * time.Second):
		p.kill()
	}
}

func (p *proc) dumpLog(t *testing.T) {
	b, err := os.ReadFile(p.log)
	if err != nil {
		return
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 30 {
		lines = lines[len(lines)-30:]
	}
	t.Logf("last lines of %s:\n%s", p.name, strings.Join(lines, "\n"))
}

// vars collects NAME=value lines a process prints, until want are all in.
type vars struct {
	mu   sync.Mutex
	got  map[string]string
	done chan struct{}
	want int
}

func newVars(want int) *vars {
	return &vars{got: map[string]string{}, done: make(chan struct{}), want: want}
}

func (v *vars) line(l string) {
	name, value, ok := strings.Cut(l, "=")
	if !ok {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, dup := v.got[name]; dup || len(v.got) >= v.want {
		return
	}
	v.got[name] = value
	if len(v.got) == v.want {
		close(v.done)
	}
}

// keepLogs copies the processes' whole logs into dir, so a failed run
// can be read in full without burying the test's own messages.
func keepLogs(t *testing.T, dir string, procs []*proc) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Logf("error keeping the logs: %v", err)
		return
	}
	for _, p := range procs {
		b, err := os.ReadFile(p.log)
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, p.name+".log"), b, 0o600)
		}
		if err != nil {
			t.Logf("error keeping %s's log: %v", p.name, err)
		}
	}
	t.Logf("the processes' logs are in %s", dir)
}
