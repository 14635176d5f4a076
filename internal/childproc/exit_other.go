//go:build !unix

package childproc

import "os"

// signalOf reports no signal where signals are not available.
func signalOf(*os.ProcessState) (string, int, bool) { return "", 0, false }
