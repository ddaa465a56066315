package bench

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
)

// The profile files, in the output directory.
const (
	cpuProfileFile  = "cpu.pprof"
	heapProfileFile = "heap.pprof"
)

// profiles records the measured cells: the bench, maestro and the
// embedded Temporal server share the process, so one profile shows where
// each spends its time.
type profiles struct {
	dir     string
	cpu     *os.File
	heap    bool
	written []string
}

func startProfiles(cfg Config) (*profiles, error) {
	p := &profiles{dir: cfg.OutDir, heap: cfg.MemProfile}
	if !cfg.CPUProfile && !cfg.MemProfile {
		return p, nil
	}
	if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
		return nil, fmt.Errorf("error creating %s: %w", cfg.OutDir, err)
	}
	if !cfg.CPUProfile {
		return p, nil
	}
	path := filepath.Join(cfg.OutDir, cpuProfileFile)
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("error creating %s: %w", path, err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		return nil, errors.Join(fmt.Errorf("error starting the CPU profile: %w", err), f.Close())
	}
	p.cpu = f
	return p, nil
}

// stop ends the CPU profile and writes the heap profile.
func (p *profiles) stop() error {
	var errs []error
	if p.cpu != nil {
		pprof.StopCPUProfile()
		if err := p.cpu.Close(); err != nil {
			errs = append(errs, fmt.Errorf("error closing the CPU profile: %w", err))
		} else {
			p.written = append(p.written, p.cpu.Name())
		}
		p.cpu = nil
	}
	if p.heap {
		p.heap = false
		// A collection first, so the profile shows what is live rather
		// than what is garbage not yet collected.
		runtime.GC()
		path := filepath.Join(p.dir, heapProfileFile)
		if err := writeFile(path, func(w io.Writer) error { return pprof.WriteHeapProfile(w) }); err != nil {
			errs = append(errs, err)
		} else {
			p.written = append(p.written, path)
		}
	}
	return errors.Join(errs...)
}

// files lists the profiles written, for the progress log.
func (p *profiles) files() string {
	if len(p.written) == 0 {
		return ""
	}
	return ", " + strings.Join(p.written, ", ")
}
