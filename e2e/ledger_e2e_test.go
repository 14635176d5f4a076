package e2e_test

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"lukechampine.com/blake3"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/host"
	"github.com/splashv5/conform/impl/jsonline"
	"github.com/splashv5/conform/impl/ledger"
	"github.com/splashv5/conform/impl/profile"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/script"
	"github.com/splashv5/conform/impl/storage"
	"github.com/splashv5/conform/impl/transport"
	"github.com/splashv5/conform/internal/childproc"
)

// ledgerPlan is the trusted plan of the ledger tests: one step that records a durable value.
var ledgerPlan = ledger.Plan{Fingerprint: strings.Repeat("5a", 32), Steps: []string{"record"}}

// ledgerNonce is the host-owned nonce of the one logical effect.
var ledgerNonce = []byte("e2e-ledger-run-1/record")

// lengthPrefixed is the 8-byte big-endian length followed by b.
func lengthPrefixed(b []byte) []byte {
	return append(binary.BigEndian.AppendUint64(nil, uint64(len(b))), b...)
}

// ledgerOperationKey computes the ledger's operation key independently of package host
// (RUN-181) for the one step, the durable tool and its canonical JSON input.
func ledgerOperationKey(canonicalJSON string) string {
	canonical := append([]byte("json"), lengthPrefixed([]byte(canonicalJSON))...)
	h := blake3.New(32, nil)
	for _, part := range [][]byte{[]byte("splash-workflow-operation-key-v1"), lengthPrefixed([]byte(ledgerPlan.Fingerprint)),
		lengthPrefixed([]byte("record")), lengthPrefixed([]byte(profile.ToolDurableRecord)), lengthPrefixed(canonical),
		lengthPrefixed(ledgerNonce)} {
		h.Write(part)
	}
	return "op-" + hex.EncodeToString(h.Sum(nil))
}

// ledgerStore is a fenced ledger store on an in-memory authenticated record store.
func ledgerStore(t testing.TB) *ledger.Store {
	t.Helper()
	id, err := storage.ParseKeyID("e2e")
	if err != nil {
		t.Fatal(err)
	}
	ring, err := storage.NewKeyring(id, storage.NewKey([32]byte{7, 7, 7}))
	if err != nil {
		t.Fatal(err)
	}
	key, err := storage.NewRecordKey("workflow-ledger", "e2e-plan")
	if err != nil {
		t.Fatal(err)
	}
	return ledger.NewStore(storage.NewAuthenticatedStore(storage.NewMemoryBackend(), ring), key)
}

// ledgerRun is the host state of one ledger-path run up to the claim.
type ledgerRun struct {
	rt      *host.Runtime
	sess    *host.ScriptSession
	id      host.OperationID
	store   *ledger.Store
	ledger  *ledger.Ledger
	rev     uint64
	fence   uint64
	claimed *ledger.ClaimedOperation
	key     string
}

// prepareAndClaim suspends a script on the durable tool, prepares its operation in a fresh
// ledger, persists the ledger and only then claims the prepared operation (RUN-183 to RUN-185).
func prepareAndClaim(t *testing.T) *ledgerRun {
	t.Helper()
	ctx := context.Background()
	rt, sess := scriptSession(t, host.Config{})
	if err := rt.RegisterValidatedExternalJSONTool(host.JSONPolicy(profile.ToolDurableRecord), host.Metadata{},
		durableContract(t, "integer")); err != nil {
		t.Fatal(err)
	}
	id := evalSuspended(t, sess, `use mod.tool
let receipt = tool.start_json("conf.durable.record", {value: {n: 7}, mode: "succeed"})
receipt.await().parse_json().value.n
`)
	r := &ledgerRun{rt: rt, sess: sess, id: id, store: ledgerStore(t)}
	var err error
	if r.ledger, r.rev, err = r.store.Load(ctx, ledgerPlan); err != nil || r.rev != 0 {
		t.Fatalf("load: revision %d, %v", r.rev, err)
	}
	if r.fence, err = r.store.ReserveFence(ctx); err != nil {
		t.Fatal(err)
	}
	p, err := ledger.PrepareNextExternalOperation(rt, ledgerPlan, 0, r.ledger, ledgerNonce)
	if err != nil || p == nil || p.ID() != id {
		t.Fatalf("prepare: %v, %v", p, err)
	}
	r.key = ledgerOperationKey(`{"mode":"succeed","value":{"n":7}}`)
	if p.OperationKey() != r.key || p.StepID() != "record" {
		t.Fatalf("prepared key %s step %s, want %s", p.OperationKey(), p.StepID(), r.key)
	}
	if info, _ := rt.Operation(id); info.State != host.StateQueued {
		t.Fatalf("preparing claimed the operation: %+v", info)
	}
	if r.rev, err = r.store.Persist(ctx, r.ledger, r.rev, r.fence); err != nil {
		t.Fatal(err)
	}
	if r.claimed, err = ledger.ClaimPreparedExternalOperation(rt, ledgerPlan, 0, r.ledger, p); err != nil {
		t.Fatal(err)
	}
	if info, _ := rt.Operation(id); info.State != host.StateClaimed {
		t.Fatalf("after the claim: %+v", info)
	}
	return r
}

// wantStoredLedger loads the persisted ledger and requires the one operation in state.
func (r *ledgerRun) wantStoredLedger(t *testing.T, state ledger.State) {
	t.Helper()
	back, _, err := r.store.Load(context.Background(), ledgerPlan)
	if err != nil {
		t.Fatal(err)
	}
	ops := back.Operations()
	if len(ops) != 1 || ops[0].OperationKey != r.key || ops[0].State != state || ops[0].Tool != profile.ToolDurableRecord {
		t.Fatalf("stored ledger %+v, want %s in %v", ops, r.key, state)
	}
}

// wantScriptSeven requires the script to have read the recorded value 7.
func wantScriptSeven(t *testing.T, ev *script.Evaluation) {
	t.Helper()
	if ev == nil || !ev.Completed() || len(ev.Diagnostics) != 0 || !script.Equal(ev.Value, script.Number(7)) {
		t.Fatalf("script ended with %v", ev)
	}
}

// The durable ledger path end to end against the reference worker: the host prepares the
// operation in its plan-bound ledger, persists the ledger, claims the prepared operation, seals
// its dispatch_operation itself, sends that very line through the one-shot transport, records
// the raw answer in the ledger (authenticated there), persists again and only then resolves the
// runtime operation; the script reads the worker's answer. The worker session ends at end of
// input with a clean exit.
//
// Spec: RUN-180, RUN-181, RUN-183, RUN-184, RUN-185, RUN-186, RUN-161
// Spec: TRN-011, TRN-022, TRN-093, TRN-097, TRN-098, TRN-099, TRN-100
func TestLedgerDurableDispatchThroughPreSealedExchange(t *testing.T) {
	r := prepareAndClaim(t)
	dir := t.TempDir()
	effects := filepath.Join(dir, "effects.log")
	const session = "e2e-ledger-1"
	p, stderr := startWorker(t, session, nil, "--journal", filepath.Join(dir, "journal.db"), "--effect-log", effects)
	tr := operationChannel(t, p, session)
	auth := p.HostAuthenticator()

	d, err := ledger.PrepareClaimedDispatch(r.rt, ledgerPlan, 0, r.ledger, r.claimed, "dispatch-1", auth)
	if err != nil || d.Request.OperationKey != r.key || d.Request.SessionID != session {
		t.Fatalf("prepare dispatch: %+v, %v", d.Request, err)
	}
	answer, err := tr.ExchangeSealed(d.Line)
	if err != nil || !tr.Consumed() || tr.Poisoned() {
		t.Fatalf("exchange: %v (worker: %s)", err, stderr)
	}
	if _, err := tr.ExchangeSealed(d.Line); !errors.Is(err, transport.ErrConsumed) {
		t.Fatalf("a second exchange: %v", err)
	}
	frame, err := protocol.DecodeFrame(answer, canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	state, res, err := ledger.ApplyDispatchResult(ledgerPlan, r.ledger, d.Request, auth, frame)
	if err != nil || state != ledger.Succeeded || res.OperationKey != r.key || res.RequestID != "dispatch-1" {
		t.Fatalf("apply: %v %+v %v", state, res, err)
	}
	if info, _ := r.rt.Operation(r.id); info.State != host.StateClaimed {
		t.Fatalf("applying the answer touched the runtime: %+v", info)
	}
	if r.rev, err = r.store.Persist(context.Background(), r.ledger, r.rev, r.fence); err != nil {
		t.Fatal(err)
	}
	r.wantStoredLedger(t, ledger.Succeeded)
	rec, err := r.rt.ResolveOperationStatus(r.id, res.Status)
	wantOutput := `{"operation_key":"` + r.key + `","value":{"n":7}}`
	if err != nil || rec.Running || rec.Settlement.Output != wantOutput {
		t.Fatalf("resolve: %+v, %v", rec, err)
	}
	ev, err := r.sess.Resume(rec.Settlement)
	if err != nil {
		t.Fatal(err)
	}
	wantScriptSeven(t, ev)
	endBaselineSession(t, p, stderr)
	wantEffects(t, effects, true, `{"kind":"effect","tool":"conf.durable.record","operation_key":"`+r.key+`","value":{"n":7}}`+"\n")
}

// The ledger path across a broken connection: the worker is killed after its effect and before
// its answer, so the pre-sealed exchange fails and poisons the transport, and neither the
// ledger nor the runtime learns anything. A fresh worker session on the same journal answers a
// reconciliation the runtime seals for the claimed operation under its ledger operation key and
// the host sends as a pre-sealed line; applying the raw answer authenticates it, records the
// observation in the ledger, persists the ledger, and only then settles the runtime operation
// with the effect the first session performed. No second effect happens.
//
// Spec: RUN-161, RUN-182, RUN-185, RUN-186, RUN-187, RUN-188
// Spec: TRN-023, TRN-097, TRN-098, TRN-099, TRN-100
func TestLedgerReconciliationAfterBrokenConnection(t *testing.T) {
	r := prepareAndClaim(t)
	dir := t.TempDir()
	effects := filepath.Join(dir, "effects.log")
	args := []string{"--journal", filepath.Join(dir, "journal.db"), "--effect-log", effects}

	const session1 = "e2e-ledger-broken"
	p1, stderr1 := pausedWorker(t, session1, "after-adapter", args...)
	tr1 := operationChannel(t, p1, session1)
	d, err := ledger.PrepareClaimedDispatch(r.rt, ledgerPlan, 0, r.ledger, r.claimed, "dispatch-1", p1.HostAuthenticator())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := tr1.ExchangeSealed(d.Line)
		done <- err
	}()
	stderr1.WaitFor(t, "fault: paused after-adapter")
	if err := childproc.KillGroup(p1.Pid()); err != nil {
		t.Fatal(err)
	}
	err = <-done
	var le *jsonline.Error
	if !errors.Is(err, transport.ErrChannel) || !errors.As(err, &le) ||
		(le.Kind != jsonline.ErrUnexpectedEndOfStream && le.Kind != jsonline.ErrIO) || !tr1.Poisoned() {
		t.Fatalf("exchange on a killed worker: %v", err)
	}
	if _, err := tr1.ExchangeSealed(d.Line); !errors.Is(err, transport.ErrPoisoned) {
		t.Fatalf("the broken transport was reused: %v", err)
	}
	if term, _ := p1.Terminate(); term.Signal != "killed" {
		t.Fatalf("first worker ended with %s", term)
	}
	if op, _ := r.ledger.Operation(r.key); op.State != ledger.Pending {
		t.Fatalf("ledger after the broken connection: %+v", op)
	}
	if info, _ := r.rt.Operation(r.id); info.State != host.StateClaimed {
		t.Fatalf("runtime after the broken connection: %+v", info)
	}

	const session2 = "e2e-ledger-recover"
	p2, stderr2 := startWorker(t, session2, nil, args...)
	tr2 := operationChannel(t, p2, session2)
	auth2 := p2.HostAuthenticator()
	// The reconciliation is bound to the claimed operation and its ledger operation key, the key
	// the operation was dispatched under (not the runtime's idempotency key).
	a, err := ledger.PrepareClaimedReconciliation(r.rt, ledgerPlan, 0, r.ledger, r.claimed, "reconcile-1", auth2)
	if err != nil || a.Request.OperationKey != r.key || a.Request.Tool != profile.ToolDurableRecord || a.Request.SessionID != session2 {
		t.Fatalf("prepare reconciliation: %+v, %v", a.Request, err)
	}
	answer, err := tr2.ExchangeSealed(a.Line)
	if err != nil || !tr2.Consumed() {
		t.Fatalf("exchange: %v (worker: %s)", err, stderr2)
	}
	frame, err := protocol.DecodeFrame(answer, canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	// The ledger is persisted after recording the observation and before the runtime settles.
	persisted := false
	persist := func(l *ledger.Ledger) error {
		if info, _ := r.rt.Operation(r.id); info.State != host.StateClaimed {
			t.Errorf("the runtime settled before the ledger was persisted: %+v", info)
		}
		rev, err := r.store.Persist(context.Background(), l, r.rev, r.fence)
		if err == nil {
			r.rev, persisted = rev, true
		}
		return err
	}
	state, got, err := ledger.ApplyClaimedReconciliation(r.rt, ledgerPlan, 0, r.ledger, r.claimed, a.Request, auth2, frame, persist)
	wantOutput := `{"operation_key":"` + r.key + `","value":{"n":7}}`
	if err != nil || state != ledger.Succeeded || !persisted || got.Running || got.Settlement.Err != nil || got.Settlement.Output != wantOutput {
		t.Fatalf("apply reconciliation: %v %+v %v (persisted %v)", state, got, err, persisted)
	}
	r.wantStoredLedger(t, ledger.Succeeded)
	ev, err := r.sess.Resume(got.Settlement)
	if err != nil {
		t.Fatal(err)
	}
	wantScriptSeven(t, ev)
	endBaselineSession(t, p2, stderr2)
	wantEffects(t, effects, true, `{"kind":"effect","tool":"conf.durable.record","operation_key":"`+r.key+`","value":{"n":7}}`+"\n")
}
