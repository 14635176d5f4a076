//go:build !linux

package etcdstore

import "os"

// datasync makes the witness file durable.
func datasync(f *os.File) error { return f.Sync() }
