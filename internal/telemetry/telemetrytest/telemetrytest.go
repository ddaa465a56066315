// Package telemetrytest holds the documentation and the metrics a
// process serves to each other in tests.
package telemetrytest

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
)

// metricsSection is the README section that lists every series.
const metricsSection = "## Metrics and traces\n"

// DocumentedMetrics returns the maestro_* and temporal_* metric names the
// README at path names in its metrics section, as Prometheus shows them.
func DocumentedMetrics(path string) (map[string]bool, error) {
	readme, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("error reading %s: %w", path, err)
	}
	_, section, ok := bytes.Cut(readme, []byte(metricsSection))
	if !ok {
		return nil, fmt.Errorf("%s has no %q section", path, metricsSection)
	}
	if end := bytes.Index(section, []byte("\n## ")); end >= 0 {
		section = section[:end]
	}
	names := map[string]bool{}
	for _, m := range regexp.MustCompile("`((?:maestro|temporal)_[a-z0-9_]+)`").FindAllSubmatch(section, -1) {
		names[string(m[1])] = true
	}
	return names, nil
}
