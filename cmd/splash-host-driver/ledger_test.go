package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/splashv5/conform/impl/authorizer"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/ledger"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/storage"
	"github.com/splashv5/conform/impl/workflow"
)

// Spec: HDR-040
// The ledger key is drawn once, kept with mode 0600 and reused; a damaged key file is refused
// instead of being replaced (which would make the stored ledger unreadable).
func TestStorageKeyIsKeptAndReused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ledger.key")
	if _, err := storageKey(path); err != nil {
		t.Fatal(err)
	}
	first, err := os.ReadFile(path)
	if err != nil || len(first) != 32 {
		t.Fatalf("key file: %d bytes, %v", len(first), err)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v", info.Mode().Perm())
	}
	if _, err := storageKey(path); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(path); !bytes.Equal(again, first) {
		t.Fatal("the key file was replaced")
	}
	if _, err := os.Stat(path + ".tmp"); !os.IsNotExist(err) {
		t.Fatal("a temporary key file was left behind")
	}
	if err := os.WriteFile(path, []byte("short"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := storageKey(path); err == nil {
		t.Fatal("a 5-byte key file was accepted")
	}
}

// ledgerSession is a session without a worker whose host keeps its state in dir.
func ledgerSession(t *testing.T, dir string) *session {
	t.Helper()
	g := protocol.JSONGrant("conf.durable.record")
	g.MaxCalls, g.MaxCompensations = 8, 1
	m, err := protocol.NewCapabilityManifest("ledger-test", []protocol.CapabilityGrant{g})
	if err != nil {
		t.Fatal(err)
	}
	auth, err := authorizer.New(m)
	if err != nil {
		t.Fatal(err)
	}
	s := &session{auth: auth}
	s.state, s.plan = dir, workflow.NewPlan(ownPlan)
	return s
}

// Spec: HDR-040, WFL-040
// What one session records in the state directory, a later session (as after a driver
// restart) restores: the prepared operation is uncertain, so the engine stays recovering, and
// its input is there to reconcile it with.
func TestLedgerSurvivesARestart(t *testing.T) {
	dir := t.TempDir()
	s := ledgerSession(t, dir)
	e, err := s.engine()
	if err != nil {
		t.Fatal(err)
	}
	if e.Phase() != workflow.PhaseRunning {
		t.Fatalf("an empty ledger restores to %v", e.Phase())
	}
	v, _ := canonjson.ParseValue([]byte(`{"value":1}`), canonjson.Preserve)
	p := protocol.JSONPayload(v)
	if err := s.saveInput(p); err != nil {
		t.Fatal(err)
	}
	if _, err := s.rt.StartJSON("conf.durable.record", `{"value":1}`); err != nil {
		t.Fatal(err)
	}
	c, err := e.Prepare(context.Background(), []byte("req-1"))
	if err != nil {
		t.Fatal(err)
	}

	later := ledgerSession(t, dir)
	e2, err := later.engine()
	if err != nil {
		t.Fatal(err)
	}
	u := e2.Unsettled()
	if e2.Phase() != workflow.PhaseRecovering || len(u) != 1 || u[0].OperationKey != c.OperationKey() || u[0].State != ledger.Pending {
		t.Fatalf("restored phase %v, unsettled %+v", e2.Phase(), u)
	}
	got, input, err := later.loadInput(u[0].InputFingerprint)
	if err != nil || !got.Equal(p) || ledger.InputFingerprint(input) != u[0].InputFingerprint {
		t.Fatalf("restored input %s, %v", got.AppendJSON(nil), err)
	}
	if _, _, err := later.loadInput(ledger.InputFingerprint([]byte("other"))); err == nil {
		t.Fatal("an input that was never kept was found")
	}
}

// Spec: HDR-041, WFL-042
// A step refused while the ledger holds an uncertain operation leaves nothing queued: the
// runtime a later command works with is restored from the ledger alone.
func TestRefusedStepLeavesNothingQueued(t *testing.T) {
	dir := t.TempDir()
	s := ledgerSession(t, dir)
	e, err := s.engine()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.rt.StartJSON("conf.durable.record", `{"value":1}`); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Prepare(context.Background(), []byte("req-1")); err != nil {
		t.Fatal(err)
	}
	later := ledgerSession(t, dir)
	_, _, err = later.step(command{RequestID: "req-2", Tool: "conf.durable.record", Payload: []byte(`{"format":"json","value":{"value":2}}`)})
	if kind(err) != "Denied" {
		t.Fatalf("a step on a recovering ledger: %v", err)
	}
	if _, err := later.engine(); err != nil {
		t.Fatal(err)
	}
	if inv, queued := later.rt.PeekNextExternal(); queued {
		t.Fatalf("the refused step's operation %v is still queued", inv.ID)
	}
}

// Spec: HDR-050
// A kept input that no longer matches the fingerprint it is kept under is refused with
// InputFingerprintMismatch, distinct from a lost one (LostInput); nothing is returned to send.
func TestSubstitutedInputIsRefused(t *testing.T) {
	dir := t.TempDir()
	s := ledgerSession(t, dir)
	if _, err := s.engine(); err != nil {
		t.Fatal(err)
	}
	v, _ := canonjson.ParseValue([]byte(`{"value":1}`), canonjson.Preserve)
	input, _ := protocol.CanonicalOperationInputBytes(protocol.JSONPayload(v))
	fp := ledger.InputFingerprint(input)
	key, _ := storage.NewRecordKey("input", fp)
	if _, err := s.store.Create(context.Background(), key, []byte(`{"format":"json","value":{"value":2}}`)); err != nil {
		t.Fatal(err)
	}
	if _, got, err := s.loadInput(fp); err == nil || err.Error() != "InputFingerprintMismatch" || got != nil {
		t.Fatalf("a substituted input: %v", err)
	}
	if _, _, err := s.loadInput(ledger.InputFingerprint([]byte("jsonother"))); err == nil || err.Error() != "LostInput" {
		t.Fatalf("a lost input: %v", err)
	}
}
