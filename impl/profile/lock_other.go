//go:build !unix

package profile

import "os"

// lockFile does nothing where the profile has no cross-process lock: fenced calls are then
// serialized within one process only.
func lockFile(*os.File) (unlock func(), err error) { return func() {}, nil }
