//go:build !splashetcd

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/splashv5/conform/impl/worker"
)

func init() {
	for _, name := range []string{"etcd-witness", "recovery-fence"} {
		subcommands[name] = func(_ []string, _, stderr io.Writer) int {
			fmt.Fprintf(stderr, "splash-worker %s: usage: this build has no etcd support; build with -tags splashetcd\n", name)
			return worker.ExitUsage
		}
	}
}

// journalFlags defines no flags: this build has no etcd journal or anchor.
func journalFlags(*flag.FlagSet) {}

// openJournal opens the journal file at path (openJournalFile). An etcd:// journal needs
// the build with tag splashetcd; a malformed one is a usage error in this build too.
func openJournal(path string) (durableBackend, error) {
	if strings.HasPrefix(path, etcdScheme) {
		if _, _, err := parseEtcdJournal(path, false); err != nil {
			return nil, usageError{err}
		}
		return nil, errors.New("this build has no etcd journal; build with -tags splashetcd")
	}
	return openJournalFile(path)
}
