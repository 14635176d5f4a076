package main

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
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

// A journal scope or namespace that makes no record key is refused at start, with status 2,
// before the journal file is created or standard input read.
//
// Spec: WRK-080
func TestInvalidJournalScopeCreatesNoJournal(t *testing.T) {
	for _, args := range [][]string{{"--scope", "two words"}, {"--scope", ""}, {"--namespace", "bad namespace"}} {
		journal := filepath.Join(t.TempDir(), "journal")
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(workerBinary, append([]string{"--journal", journal}, args...)...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 || stdout.Len() != 0 {
			t.Errorf("%v: %v, stdout %q, stderr %q; want status 2", args, err, stdout.String(), stderr.String())
		}
		if _, err := os.Stat(journal); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%v: the refused start left a journal file (stat: %v)", args, err)
		}
	}
}
