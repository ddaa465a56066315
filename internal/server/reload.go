package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/maestro-run/maestro/apitype"
	"github.com/maestro-run/maestro/eval"
	"github.com/maestro-run/maestro/internal/ledger"
	"github.com/maestro-run/maestro/tools"
)

// ReloadCatalog re-reads this process's catalog file and, if it passes
// every check, records it in the ledger as the current version and swaps
// to it. Requests in flight finish with the catalog they started with;
// invocations keep the version they were admitted under. A file that
// breaks any rule changes nothing: the answer lists every violation.
func (s *Core) ReloadCatalog(ctx context.Context) (apitype.CatalogReload, error) {
	if s.catalogFile == nil {
		return apitype.CatalogReload{}, errors.New("error reloading the catalog: this process has no catalog file to re-read")
	}
	data, err := s.catalogFile()
	if err != nil {
		return apitype.CatalogReload{}, fmt.Errorf("error reloading the catalog: %w", err)
	}
	return s.reload(ctx, data)
}

func (s *Core) reload(ctx context.Context, data []byte) (apitype.CatalogReload, error) {
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	prev := s.live.Load()
	res := apitype.CatalogReload{Version: prev.Hash(), Previous: prev.Hash()}
	cat, err := tools.Load(data)
	if err != nil {
		res.Violations = leaves(err)
		return res, nil
	}
	if res.Violations = s.checkCatalog(cat); len(res.Violations) > 0 {
		return res, nil
	}
	if err := s.store.CatalogActivate(ctx, ledger.CatalogVersion{Version: cat.Hash(), Source: cat.Source()}, RegistryRows(cat)); err != nil {
		return res, fmt.Errorf("error reloading the catalog: %w", err)
	}
	s.live.Swap(cat)
	s.drift.Store(nil)
	res.Version, res.Changed = cat.Hash(), cat.Hash() != prev.Hash()
	return res, nil
}

// checkCatalog runs on a loaded catalog the checks a start runs beyond the
// loader's own (demo keys, provider settings), then the structural fence.
func (s *Core) checkCatalog(cat *tools.Catalog) []string {
	var out []string
	if s.checkStart != nil {
		if err := s.checkStart(cat); err != nil {
			out = append(out, leaves(err)...)
		}
	}
	return append(out, fenceViolations(cat)...)
}

// fenceViolations runs the structural fence over a catalog: a start runs
// it as a reload does, so a catalog that starts is never refused on reload.
func fenceViolations(cat *tools.Catalog) []string {
	var out []string
	for _, v := range eval.FenceCatalog(cat) {
		out = append(out, "fence: "+v.String())
	}
	return out
}

// leaves flattens joined errors into their messages, one violation each.
func leaves(err error) []string {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []string
		for _, e := range j.Unwrap() {
			out = append(out, leaves(e)...)
		}
		return out
	}
	if u := errors.Unwrap(err); u != nil {
		if _, ok := u.(interface{ Unwrap() []error }); ok {
			return leaves(u)
		}
	}
	return []string{err.Error()}
}

// followCatalog keeps this process on the version the ledger names
// current: when another process reloads, this one re-reads its own file
// and swaps to it if it is that version. If its file is another version
// it keeps serving the one it has and says so, in the log and on /readyz,
// rather than diverge silently or run a catalog it was not given.
func (s *Core) followCatalog(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.convergeCatalog(ctx)
		}
	}
}

// convergeCatalog makes one pass of followCatalog.
func (s *Core) convergeCatalog(ctx context.Context) {
	current, err := s.store.CatalogCurrent(ctx)
	if err != nil || current == s.live.Load().Hash() {
		if err == nil {
			s.drift.Store(nil)
		}
		return
	}
	if s.catalogFile == nil {
		s.reportDrift(current, "this process has no catalog file to re-read")
		return
	}
	data, err := s.catalogFile()
	if err != nil {
		s.reportDrift(current, err.Error())
		return
	}
	if got := tools.Hash(data); got != current {
		s.reportDrift(current, "this process's catalog file is version "+got)
		return
	}
	res, err := s.reload(ctx, data)
	switch {
	case err != nil:
		s.reportDrift(current, err.Error())
	case len(res.Violations) > 0:
		s.reportDrift(current, fmt.Sprintf("the file breaks %d rule(s) here: %v", len(res.Violations), res.Violations))
	default:
		s.logger.Info("catalog reloaded to follow the ledger", "version", res.Version, "previous", res.Previous)
	}
}

func (s *Core) reportDrift(current, why string) {
	msg := fmt.Sprintf("serving catalog %s, not %s the ledger names current: %s", s.live.Load().Hash(), current, why)
	if old := s.drift.Swap(&msg); old == nil || *old != msg {
		s.logger.Warn("catalog drift: this process keeps the catalog it has", "serving", s.live.Load().Hash(), "current", current, "why", why)
	}
}
