//go:build !linux

package devtemporaltest

import "os/exec"

// dieWithParent does nothing where the kernel cannot tie the server's life
// to the test binary's; Stop still ends it when the tests finish.
func dieWithParent(*exec.Cmd) {}
