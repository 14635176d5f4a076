package main

import (
	"path/filepath"
	"testing"

	"github.com/splashv5/conform/impl/storage/boltstore"
	"github.com/splashv5/conform/impl/storage/logstore"
)

// A new journal file is a storage log; a bbolt journal an earlier release wrote is still
// opened as bbolt, and a log as a log.
func TestJournalFileFormatIsChosenByContent(t *testing.T) {
	dir := t.TempDir()
	fresh := filepath.Join(dir, "new.journal")
	j, err := openJournalFile(fresh)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := j.(*logstore.Backend); !ok {
		t.Fatalf("a new journal opened as %T, want a storage log", j)
	}
	j.Close()
	if j, err = openJournalFile(fresh); err != nil {
		t.Fatal(err)
	}
	if _, ok := j.(*logstore.Backend); !ok {
		t.Fatalf("an existing log opened as %T", j)
	}
	j.Close()

	old := filepath.Join(dir, "old.db")
	b, err := boltstore.Open(old, nil)
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	if j, err = openJournalFile(old); err != nil {
		t.Fatal(err)
	}
	if _, ok := j.(*boltstore.Backend); !ok {
		t.Fatalf("a bbolt journal opened as %T", j)
	}
	j.Close()
}
