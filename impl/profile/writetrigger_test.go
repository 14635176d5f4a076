package profile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/splashv5/conform/impl/journal"
	"github.com/splashv5/conform/impl/worker"
)

// countingStore is a journal store that counts the writes that reach it.
type countingStore struct {
	worker.JournalStore
	persisted int
}

func (c *countingStore) Persist(context.Context, *journal.Journal, uint64, worker.Lease) (uint64, error) {
	c.persisted++
	return uint64(c.persisted), nil
}

// Spec: PRF-021
// TestWriteTrigger checks the trigger's three states: no file (every write goes through), a
// count N (N more writes of the process go through, then none), an empty file (none).
func TestWriteTrigger(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trigger")
	inner := &countingStore{}
	store := NewWriteTrigger(path).Wrap(inner)
	persist := func() error {
		_, err := store.Persist(context.Background(), nil, 0, worker.Lease{})
		return err
	}
	if err := persist(); err != nil {
		t.Fatalf("without the file: %v", err)
	}
	if err := os.WriteFile(path, []byte("2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The process has written once; the count allows two writes in all.
	if err := persist(); err != nil {
		t.Fatalf("second write under a count of 2: %v", err)
	}
	if err := persist(); !errors.Is(err, ErrTriggeredWrite) {
		t.Fatalf("third write under a count of 2: %v; want ErrTriggeredWrite", err)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := persist(); !errors.Is(err, ErrTriggeredWrite) {
		t.Fatalf("with an empty file: %v; want ErrTriggeredWrite", err)
	}
	for _, content := range []string{"many", "+9", "-1", "9 9", "0x9", " \n\t"} {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := persist(); !errors.Is(err, ErrTriggeredWrite) {
			t.Fatalf("with a file holding %q: %v; want ErrTriggeredWrite", content, err)
		}
	}
	// White space around a count is ignored: 99 writes are allowed.
	if err := os.WriteFile(path, []byte(" \t99\r\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := persist(); err != nil {
		t.Fatalf("under a count of 99 written with white space: %v", err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := persist(); err != nil {
		t.Fatalf("after the file is removed: %v", err)
	}
	if inner.persisted != 4 {
		t.Errorf("%d writes reached the store; want 4", inner.persisted)
	}
}
