//go:build !splashetcd

package main

import (
	"errors"
	"flag"
	"strings"

	"github.com/splashv5/conform/impl/storage/boltstore"
)

// journalFlags defines no flags: this build has no etcd journal or anchor.
func journalFlags(*flag.FlagSet) {}

// openJournal opens the bbolt journal file at path. An etcd:// journal needs the build with
// tag splashetcd.
func openJournal(path string) (durableBackend, error) {
	if strings.HasPrefix(path, etcdScheme) {
		return nil, errors.New("this build has no etcd journal; build with -tags splashetcd")
	}
	return boltstore.Open(path, nil)
}
