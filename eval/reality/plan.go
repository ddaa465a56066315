package reality

import (
	"errors"
	"fmt"

	mt "github.com/maestro-run/maestro/maestrotype"
	"github.com/maestro-run/maestro/tools"
)

// step is one tool to fire, with its fixture; a nil fixture is a real-sync
// tool the config forgot, which fails rather than going unmentioned.
type step struct {
	tool    *tools.Tool
	fixture *Fixture
}

// loadCatalog loads the configured catalog, or the demo catalog.
func loadCatalog(cfg Config) (*tools.Catalog, error) {
	if cfg.Catalog == "" {
		cat, err := tools.Load(tools.DemoCatalogYAML)
		if err != nil {
			return nil, fmt.Errorf("error loading the demo catalog: %w", err)
		}
		return cat, nil
	}
	cat, err := tools.LoadFile(cfg.Catalog)
	if err != nil {
		return nil, fmt.Errorf("error loading catalog: %w", err)
	}
	return cat, nil
}

// plan orders the run: fixtures in file order, then every real-sync tool
// without one. A fixture that cannot be run as written is an error before
// anything is sent, so a typo never costs a real message.
func plan(cfg Config, cat *tools.Catalog) ([]step, error) {
	var steps []step
	var errs []error
	covered := map[string]bool{}
	for i := range cfg.Fixtures {
		f := &cfg.Fixtures[i]
		covered[f.Tool] = true
		tool, ok := cat.Tool(f.Tool)
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("fixture %s: no such tool in the catalog", f.Tool))
			continue
		case tool.Delivery != mt.DeliveryRealSync:
			errs = append(errs, fmt.Errorf("fixture %s: the tool is %s, not real-sync; only real-sync tools have an effect to read back", f.Tool, tool.Delivery))
			continue
		case f.Skip == "" && tool.Connector.Kind == mt.KindHTTP && f.Read == "":
			errs = append(errs, fmt.Errorf("fixture %s: an HTTP tool needs a read path, the only way to prove its effect", f.Tool))
			continue
		case f.Skip == "" && tool.Connector.Kind != mt.KindHTTP && (f.Read != "" || f.Expect != nil):
			errs = append(errs, fmt.Errorf("fixture %s: read and expect apply to HTTP tools only; %s effects are read back by their IDs", f.Tool, tool.Connector.Kind))
			continue
		}
		steps = append(steps, step{tool: tool, fixture: f})
	}
	for _, tool := range cat.Tools() {
		if tool.Delivery == mt.DeliveryRealSync && !covered[tool.Name] {
			steps = append(steps, step{tool: tool})
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return steps, nil
}
