package daemon

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/maestro-run/maestro/connectors"
	"github.com/maestro-run/maestro/tools"
)

// checkHTTPServices refuses a catalog that names an HTTP service with no
// configured URL. Left to run, every call of such a tool would fail, and
// the agent would be told of a failure it did not cause and cannot fix.
func checkHTTPServices(cat *tools.Catalog, services map[string]connectors.HTTPService) error {
	users := map[string][]string{}
	for _, t := range cat.Tools() {
		name := t.Connector.HTTPService()
		if name == "" || services[name].BaseURL != "" {
			continue
		}
		users[name] = append(users[name], t.Name)
	}
	if len(users) == 0 {
		return nil
	}
	var problems []string
	for _, name := range slices.Sorted(maps.Keys(users)) {
		problems = append(problems, fmt.Sprintf("the catalog names HTTP service %q (tools %s), which has no configured URL: set MAESTRO_HTTP_SERVICE_%s_URL",
			name, strings.Join(users[name], ", "), strings.ToUpper(name)))
	}
	return errors.New(strings.Join(problems, "; "))
}
