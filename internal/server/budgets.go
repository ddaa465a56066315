package server

import (
	"time"

	"github.com/maestro-run/maestro/tools"
)

// defaultDrain is the drain window when none is set and no platform
// budget needs a longer one.
const defaultDrain = 30 * time.Second

// drainSetting names the drain window's setting in a refusal.
const drainSetting = "--drain-timeout (MAESTRO_DRAIN_TIMEOUT)"

// drainWindow is the drain window a process runs with: the one set, or
// else 30s, or the catalog's longest platform answer if that is longer, so
// a tool call in flight when the process stops is still answered.
func drainWindow(cfg Config, cat *tools.Catalog) time.Duration {
	if cfg.DrainTimeout > 0 {
		return cfg.DrainTimeout
	}
	if !cfg.Role.ServesAPI() {
		return defaultDrain
	}
	return max(defaultDrain, cat.LongestAnswer())
}

// checkBudgets refuses, in a process that serves the API, a platform
// budget whose answer is due after the drain window: a stop would cut its
// call off unanswered, possibly after the effect happened. The window is
// set at start, so a reload is held to the start's.
func checkBudgets(cfg Config, cat *tools.Catalog) error {
	if !cfg.Role.ServesAPI() {
		return nil
	}
	return cat.CheckAnswersWithin(cfg.DrainTimeout, drainSetting)
}
