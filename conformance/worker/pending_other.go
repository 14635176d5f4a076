//go:build !linux

package worker

import "os"

// unreadInput is not available here; callers fall back to waiting.
func unreadInput(*os.File) (int, bool) { return 0, false }
