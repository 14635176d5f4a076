package main

import (
	"bytes"
	"errors"
	"io"
	"os"

	"github.com/splashv5/conform/impl/storage"
	"github.com/splashv5/conform/impl/storage/boltstore"
	"github.com/splashv5/conform/impl/storage/logstore"
	"github.com/splashv5/conform/impl/worker"
)

// etcdScheme starts a --journal value that names an etcd cluster.
const etcdScheme = "etcd://"

// durableBackend is a journal backend that holds resources until closed.
type durableBackend interface {
	storage.Backend
	Close() error
}

// subcommands are the operator commands: splash-worker NAME ARGS... runs subcommands[NAME]
// instead of a session and exits with the status it returns.
var subcommands = map[string]func(args []string, stdout, stderr io.Writer) int{}

// usageError is a journal setting the worker refuses before it reads anything (exit status 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// openFailure is the exit status of a journal that did not open: usage for a refused setting,
// else the class of the store's failure (persistence, or integrity for a store below its
// witness).
func openFailure(err error) int {
	if errors.As(err, new(usageError)) {
		return worker.ExitUsage
	}
	if code := worker.ExitCode(err); code == worker.ExitIntegrity {
		return code
	}
	return worker.ExitPersistence
}

// openJournalFile opens the journal file at path: a storage log (logstore) when the file is
// new, empty or a log, else the bbolt database an earlier release created there.
func openJournalFile(path string) (durableBackend, error) {
	head := make([]byte, len(logstore.Magic))
	f, err := os.Open(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return logstore.Open(path, nil)
	case err != nil:
		return nil, &storage.Error{Kind: storage.ErrLogFile, Err: err}
	}
	n, _ := io.ReadFull(f, head)
	f.Close()
	if n == 0 || bytes.Equal(head[:n], []byte(logstore.Magic)) {
		return logstore.Open(path, nil)
	}
	return boltstore.Open(path, nil)
}
