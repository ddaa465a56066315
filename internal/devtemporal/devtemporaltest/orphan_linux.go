package devtemporaltest

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel kill the server when the test binary dies,
// as it does when a test times out, so no server outlives its tests.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
