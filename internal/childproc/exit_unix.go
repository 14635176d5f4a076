//go:build unix

package childproc

import (
	"os"
	"syscall"
)

// signalOf reports the signal that ended the process of state, if one did.
func signalOf(state *os.ProcessState) (string, int, bool) {
	ws, ok := state.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return "", 0, false
	}
	return ws.Signal().String(), int(ws.Signal()), true
}
