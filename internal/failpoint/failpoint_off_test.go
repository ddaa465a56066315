//go:build !failpoint

package failpoint

import "testing"

// TestNormalBuildsIgnoreTheEnvironment: without the build tag, no
// environment can kill the process or bypass the ledger.
func TestNormalBuildsIgnoreTheEnvironment(t *testing.T) {
	t.Setenv("MAESTRO_FAILPOINT", AfterProvider)
	t.Setenv("MAESTRO_UNSAFE_NO_LEDGER", "1")
	if Enabled {
		t.Fatal("failpoints are compiled in without the failpoint tag")
	}
	Inject(AfterProvider) // returns: this process is still here
	if LedgerBypassed() {
		t.Fatal("the ledger can be bypassed without the failpoint tag")
	}
}
