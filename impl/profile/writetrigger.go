package profile

import (
	"context"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/splashv5/conform/impl/journal"
	"github.com/splashv5/conform/impl/worker"
)

// ErrTriggeredWrite is the error of a journal write that the store fault trigger made fail.
var ErrTriggeredWrite = errors.New("profile: journal write failed on purpose (store fault trigger present)")

// maxTriggerBytes bounds what is read of a trigger file.
const maxTriggerBytes = 32

// WriteTrigger is the store fault trigger of the test profile (PRF-021): while the file at its
// path exists, journal writes fail. The file may hold a decimal count N (ASCII digits, with
// spaces, tabs and line ends around them ignored): the first N journal writes of the process
// then still succeed, and every later one fails. An empty file, or one holding only such white
// space, makes every write fail, and so does a file holding anything else. Only journal writes
// count: opening a session (admission and its fence) writes no journal. The trigger is a test fixture; a worker offers it only in its test mode.
// It serves one session and is not safe for concurrent use.
type WriteTrigger struct {
	path   string
	writes int // journal writes attempted by this process
}

// NewWriteTrigger returns the trigger watching path.
func NewWriteTrigger(path string) *WriteTrigger { return &WriteTrigger{path: path} }

// fails reports whether the next journal write must fail, counting it.
func (s *WriteTrigger) fails() (bool, error) {
	s.writes++
	f, err := os.Open(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return true, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxTriggerBytes))
	if err != nil {
		return true, err
	}
	text := strings.Trim(string(data), " \t\r\n")
	if text == "" {
		return true, nil
	}
	allowed, err := strconv.ParseUint(text, 10, 31)
	if err != nil || strings.TrimLeft(text, "0123456789") != "" {
		return true, errors.New("profile: store fault trigger holds neither nothing nor a decimal count")
	}
	return uint64(s.writes) > allowed, nil
}

// Wrap returns store with its journal writes (Persist) subject to the trigger; loading and
// fence reservation are unchanged.
func (s *WriteTrigger) Wrap(store worker.JournalStore) worker.JournalStore {
	return triggeredStore{store, s}
}

type triggeredStore struct {
	worker.JournalStore
	trigger *WriteTrigger
}

// Persist fails with ErrTriggeredWrite, committing nothing, while the trigger says so.
func (f triggeredStore) Persist(ctx context.Context, j *journal.Journal, expectedRevision uint64, lease worker.Lease) (uint64, error) {
	fail, err := f.trigger.fails()
	if err != nil {
		return 0, errors.Join(ErrTriggeredWrite, err)
	}
	if fail {
		return 0, ErrTriggeredWrite
	}
	return f.JournalStore.Persist(ctx, j, expectedRevision, lease)
}
