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
	if err := os.WriteFile(path, []byte("many"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := persist(); !errors.Is(err, ErrTriggeredWrite) {
		t.Fatalf("with a file that holds no count: %v; want ErrTriggeredWrite", err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := persist(); err != nil {
		t.Fatalf("after the file is removed: %v", err)
	}
	if inner.persisted != 3 {
		t.Errorf("%d writes reached the store; want 3", inner.persisted)
	}
}
