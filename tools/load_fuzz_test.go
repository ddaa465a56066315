package tools_test

import (
	"testing"

	"github.com/maestro-run/maestro/tools"
)

// FuzzLoad feeds arbitrary bytes to the catalog loader. A catalog is
// operator input read at startup: any refusal is fine, a panic is not, and
// whatever loads must be usable, so an accepted catalog is walked as the
// gate would walk it.
func FuzzLoad(f *testing.F) {
	// The demo catalog exercises every section; the small seeds under
	// testdata/fuzz/FuzzLoad reach the error paths quickly.
	f.Add(tools.DemoCatalogYAML)
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := tools.Load(data)
		if err != nil {
			return
		}
		if c.Hash() == "" {
			t.Fatal("a loaded catalog has no hash")
		}
		for _, tool := range c.Tools() {
			if got, ok := c.Tool(tool.Name); !ok || got != tool {
				t.Fatalf("tool %q is listed but not found by name", tool.Name)
			}
		}
		for _, a := range c.Agents() {
			_ = a.Allowed()
		}
	})
}
