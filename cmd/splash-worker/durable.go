package main

import (
	"errors"
	"io"

	"github.com/splashv5/conform/impl/storage"
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
