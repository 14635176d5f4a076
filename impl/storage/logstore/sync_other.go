//go:build !linux

package logstore

import "os"

// datasync makes the file durable.
func datasync(f *os.File) error { return f.Sync() }
