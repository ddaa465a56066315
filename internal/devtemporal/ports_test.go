package devtemporal

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The ports found free lie outside the range the kernel hands outgoing
// connections, so no connection can take one before the server binds.
func TestFindFreePortAvoidsTheEphemeralRange(t *testing.T) {
	t.Parallel()
	lo, hi := quietPorts()
	for range 20 {
		port, err := FindFreePort()
		require.NoError(t, err)
		require.GreaterOrEqual(t, port, lo)
		require.Less(t, port+portsUsed-1, hi)
	}
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		t.Skip("the kernel does not say where its ephemeral range starts")
	}
	first, err := strconv.Atoi(strings.Fields(string(b))[0])
	require.NoError(t, err)
	if first-quietPortsLow >= minQuietPorts {
		require.LessOrEqual(t, hi, first)
	}
}
