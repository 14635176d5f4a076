package storagetest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/splashv5/conform/impl/storage"
)

// Durable is a backend that persists to a file and can be closed.
type Durable interface {
	storage.Backend
	Close() error
}

// OpenDurable opens (creating if needed) a durable backend at path, configured by variant
// ("" for the default configuration).
type OpenDurable func(ctx context.Context, path, variant string) (Durable, error)

// Environment of the crash writer child process.
const (
	crashPathEnv  = "SPLASH_STORAGE_CRASH_PATH"
	crashTokenEnv = "SPLASH_STORAGE_CRASH_TOKEN"
	crashVarEnv   = "SPLASH_STORAGE_CRASH_VARIANT"
)

// crashWriterMain is the writer process of RunKilledWriter: it writes revision after
// revision under the fence given in its environment and prints each acknowledged revision,
// until it is killed. It returns an exit status.
func crashWriterMain(open OpenDurable) int {
	ctx := context.Background()
	token, err := strconv.ParseUint(os.Getenv(crashTokenEnv), 10, 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	b, err := open(ctx, os.Getenv(crashPathEnv), os.Getenv(crashVarEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ring, _ := storage.NewKeyring("storage-v1", vector10Key())
	s := storage.NewAuthenticatedStore(b, ring)
	out := bufio.NewWriter(os.Stdout)
	var expected *uint64
	for r := uint64(1); ; r++ {
		rec, err := s.CompareAndSwapFenced(ctx, TestKey, expected, crashPayload(r), token)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Fprintln(out, rec.Revision)
		_ = out.Flush()
		expected = storage.ExpectRevision(rec.Revision)
	}
}

// crashPayload is the payload of revision r: its size varies, so that a torn write shows.
func crashPayload(r uint64) []byte {
	return bytes.Repeat([]byte(fmt.Sprintf("rev-%d;", r)), 1+int(r%7)*500)
}

// RunKilledWriter starts a writer process (the test binary itself, whose TestMain must be
// Main), kills it with SIGKILL after a random number of
// acknowledged writes, and checks that the file then opens, passes check (when not nil) and
// holds a complete, verifiable record no older than the last acknowledged write: never a
// torn one.
func RunKilledWriter(t *testing.T, open OpenDurable, check func(t *testing.T, b Durable)) {
	RunKilledWriterVariant(t, open, "", check)
}

// RunKilledWriterVariant is RunKilledWriter with the backend configured by variant, which
// open receives in the test and in the writer process.
func RunKilledWriterVariant(t *testing.T, open OpenDurable, variant string, check func(t *testing.T, b Durable)) {
	rounds := 3
	if soak() {
		rounds = 40
	}
	for round := range rounds {
		path := filepath.Join(t.TempDir(), "crash.db")
		setup, err := open(ctxb(), path, variant)
		if err != nil {
			t.Fatal(err)
		}
		token, err := setup.ReserveFence(ctxb(), TestKey)
		if err != nil {
			t.Fatal(err)
		}
		if err := setup.Close(); err != nil {
			t.Fatal(err)
		}

		cmd := childCommand(t, crashPathEnv+"="+path, crashTokenEnv+"="+strconv.FormatUint(token, 10), crashVarEnv+"="+variant)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		killAfter := 2 + rand.IntN(25)
		var acked uint64
		lines := bufio.NewScanner(stdout)
		for lines.Scan() {
			acked, err = strconv.ParseUint(lines.Text(), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			if acked >= uint64(killAfter) {
				break
			}
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if acked < uint64(killAfter) {
			t.Fatalf("round %d: the writer stopped after %d revisions", round, acked)
		}

		b, err := open(ctxb(), path, variant)
		if err != nil {
			t.Fatalf("round %d: reopen after the kill: %v", round, err)
		}
		if check != nil {
			check(t, b)
		}
		rec, err := storage.NewAuthenticatedStore(b, Keyring(t)).Load(ctxb(), TestKey)
		_ = b.Close()
		if err != nil {
			t.Fatalf("round %d: load after the kill: %v", round, err)
		}
		if rec == nil || rec.Revision < acked {
			t.Fatalf("round %d: revision %v after %d acknowledged writes", round, rec, acked)
		}
		if !bytes.Equal(rec.Payload, crashPayload(rec.Revision)) {
			t.Fatalf("round %d: payload of revision %d is torn", round, rec.Revision)
		}
	}
}
