//go:build failpoint

package failpoint

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"syscall"
)

// Enabled reports whether this binary was built with failpoints.
const Enabled = true

var (
	armed  = os.Getenv("MAESTRO_FAILPOINT")
	hits   = hitsFromEnv()
	bypass = os.Getenv("MAESTRO_UNSAFE_NO_LEDGER") == "1"

	mu      sync.Mutex
	reached int
)

func hitsFromEnv() int {
	v := os.Getenv("MAESTRO_FAILPOINT_HITS")
	if v == "" {
		return 1
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		// A typo must not silently disarm the test.
		panic(fmt.Sprintf("failpoint: MAESTRO_FAILPOINT_HITS=%q is not a positive integer", v))
	}
	return n
}

// Inject kills the process with SIGKILL when name is armed and this is the
// configured hit; earlier hits block here until then. SIGKILL cannot be
// caught, so no deferred function, shutdown hook or buffered write runs:
// the process stops as abruptly as a machine losing power.
func Inject(name string) {
	if name != armed {
		return
	}
	mu.Lock()
	reached++
	n := reached
	mu.Unlock()
	fmt.Fprintf(os.Stderr, "failpoint %s: hit %d of %d\n", name, n, hits)
	if n < hits {
		select {} // wait for the last hit to kill the process
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // the signal is delivered asynchronously
}

// LedgerBypassed reports whether MAESTRO_UNSAFE_NO_LEDGER=1 asked to skip
// reconciliation and idempotency keys.
func LedgerBypassed() bool { return bypass }
