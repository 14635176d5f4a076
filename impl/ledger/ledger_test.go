package ledger

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/host"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/storage"
)

var (
	planFP   = strings.Repeat("ab", 32)
	testPlan = Plan{Fingerprint: planFP, Steps: []string{"fetch", "publish"}}
)

// Spec: RUN-180, RUN-182
func TestLedgerEncodingAndRecord(t *testing.T) {
	l, err := New(planFP)
	wantNoError(t, err)
	if got, _ := l.Encode(); string(got) != `{"format_version":2,"revision":0,"plan_fingerprint":"`+planFP+`","operations":[]}` {
		t.Fatalf("empty ledger = %s", got)
	}
	input := []byte("text\x00\x00\x00\x00\x00\x00\x00\x02hi")
	wantNoError(t, l.Record("fetch", "remote", "op-1", input))
	fp := hashParts([]byte("splash-workflow-operation-input-v1"), lp(input))
	want := `{"format_version":2,"revision":1,"plan_fingerprint":"` + planFP + `","operations":[{"step_id":"fetch","tool":"remote","operation_key":"op-1","input_fingerprint":"` + fp + `","state":"pending","compensation":null}]}`
	got, err := l.Encode()
	wantNoError(t, err)
	if string(got) != want {
		t.Fatalf("ledger:\n got %s\nwant %s", got, want)
	}
	if InputFingerprint(input) != fp {
		t.Fatal("input fingerprint")
	}
	back, err := Decode(got)
	wantNoError(t, err)
	if again, _ := back.Encode(); !bytes.Equal(again, got) || back.Revision() != 1 {
		t.Fatalf("round trip = %s", again)
	}
	for _, c := range []struct {
		step, tool, key string
		input           []byte
		kind            error
	}{
		{"fetch", "remote", "op-1", input, ErrDuplicateOperationKey},
		{"Fetch", "remote", "op-2", input, ErrInvalidStepID},
		{"fetch", "Remote", "op-2", input, ErrInvalidTool},
		{"fetch", "remote", "cmp-2", input, ErrInvalidOperationKey},
		{"fetch", "remote", "op-2", make([]byte, MaxInputBytes+1), ErrInputTooLarge},
	} {
		wantKind(t, l.Record(c.step, c.tool, c.key, c.input), c.kind)
	}
	if l.Revision() != 1 {
		t.Fatal("a refused record changed the revision")
	}
	for i := 2; i <= MaxOperations; i++ {
		wantNoError(t, l.Record("fetch", "remote", "op-"+strings.Repeat("x", i), input))
	}
	wantKind(t, l.Record("fetch", "remote", "op-extra", input), ErrTooManyOperations)
	if l.Revision() != MaxOperations {
		t.Fatalf("revision = %d", l.Revision())
	}
	l.revision = ^uint64(0)
	l.operations = l.operations[:1]
	wantKind(t, l.Record("fetch", "remote", "op-last", input), ErrRevisionExhausted)
}

// Spec: RUN-180
func TestLedgerDecodeRejects(t *testing.T) {
	fp := strings.Repeat("cd", 32)
	op := `{"step_id":"fetch","tool":"remote","operation_key":"op-1","input_fingerprint":"` + fp + `","state":"pending"}`
	head := `{"format_version":2,"revision":3,"plan_fingerprint":"` + planFP + `","operations":[`
	ok := head + op + `]}`
	if l, err := Decode([]byte(ok)); err != nil || l.Revision() != 3 || l.Operations()[0].Compensation != nil {
		t.Fatalf("missing compensation defaults to null: %v", err)
	}
	positional := `[2,3,"` + planFP + `",[["fetch","remote","op-1","` + fp + `","running",null]]]`
	if l, err := Decode([]byte(positional)); err != nil || l.Operations()[0].State != Running {
		t.Fatalf("positional form: %v", err)
	}
	comp := `{"compensation_key":"cmp-1","input_fingerprint":"` + fp + `","tenant_scope":"tenant","grant_fingerprint":"` + fp + `","state":"pending"}`
	withComp := head + strings.Replace(op, `"pending"}`, `"succeeded","compensation":`+comp+`}`, 1) + `]}`
	l, err := Decode([]byte(withComp))
	wantNoError(t, err)
	enc, _ := l.Encode()
	if !strings.Contains(string(enc), `"compensation":`+comp) {
		t.Fatalf("compensation round trip = %s", enc)
	}
	cases := []struct {
		doc  string
		kind error
	}{
		{`{"format_version":2`, ErrInvalidEncoding},
		{strings.Replace(ok, `"revision":3`, `"revision":3,"extra":1`, 1), ErrInvalidEncoding},
		{strings.Replace(ok, `"revision":3`, `"revision":3,"revision":3`, 1), ErrInvalidEncoding},
		{strings.Replace(ok, `"state":"pending"`, `"state":"pending","x":1`, 1), ErrInvalidEncoding},
		{strings.Replace(ok, `"state":"pending"`, `"state":"done"`, 1), ErrInvalidEncoding},
		{strings.Replace(ok, `"format_version":2`, `"format_version":256`, 1), ErrInvalidEncoding},
		{strings.Replace(ok, `"format_version":2`, `"format_version":1`, 1), ErrUnsupportedVersion},
		{strings.Replace(ok, planFP, "AB", 1), ErrInvalidPlanFingerprint},
		{head + op + `,` + op + `]}`, ErrDuplicateOperationKey},
		{strings.Replace(ok, `"op-1"`, `"cmp-1"`, 1), ErrInvalidOperationKey},
		{strings.Replace(ok, `"fetch"`, `"fe tch"`, 1), ErrInvalidStepID},
		{strings.Replace(ok, fp, "00", 1), ErrInvalidInputFingerprint},
		{head + strings.Replace(op, `"pending"}`, `"pending","compensation":`+comp+`}`, 1) + `]}`, ErrCompensationRequiresSucceededOperation},
		{head + strings.Replace(op, `"pending"}`, `"succeeded","compensation":`+strings.Replace(comp, "cmp-1", "op-9", 1)+`}`, 1) + `]}`, ErrInvalidCompensationKey},
		{`{"format_version":2,"revision":0,"plan_fingerprint":"` + planFP + `","operations":[],"pad":"` + strings.Repeat("x", MaxBytes) + `"}`, ErrTooLarge},
	}
	for i, c := range cases {
		_, err := Decode([]byte(c.doc))
		if err == nil {
			t.Fatalf("case %d decoded", i)
		}
		wantKind(t, err, c.kind)
	}
}

// Spec: RUN-180
func TestLedgerEncodeSizeEstimate(t *testing.T) {
	fp := strings.Repeat("cd", 32)
	l, _ := New(planFP)
	for i := 0; i < 48; i++ {
		l.operations = append(l.operations, Operation{StepID: "fetch", Tool: "remote",
			OperationKey:     "op-" + strings.Repeat("k", 100) + string(rune('a'+i%26)) + string(rune('a'+i/26)),
			InputFingerprint: fp, State: Succeeded,
			Compensation: &Compensation{CompensationKey: "cmp-1", InputFingerprint: fp, TenantScope: "t", GrantFingerprint: fp, State: Pending}})
	}
	// 224 + 48 × (256 + 5 + 6 + 105 + 64 + 320 + 5 + 64 + 1 + 64) = 42,944 fits.
	if _, err := l.Encode(); err != nil {
		t.Fatal(err)
	}
	for i := 48; i < 64; i++ {
		l.operations = append(l.operations, l.operations[0])
		l.operations[i].OperationKey = "op-" + strings.Repeat("z", 100) + string(rune('a'+i%26)) + string(rune('a'+i/26))
	}
	// 224 + 64 × 890 = 57,184 fits too. With 128-byte step IDs and tenant scopes the estimate is
	// 224 + 64 × (890 + 123 + 127) = 73,184 > 65,536 although the encoding itself would be
	// about 49,000 bytes: the estimate alone refuses it.
	if _, err := l.Encode(); err != nil {
		t.Fatal(err)
	}
	for i := range l.operations {
		c := *l.operations[i].Compensation
		c.TenantScope = strings.Repeat("t", 128)
		l.operations[i].Compensation = &c
		l.operations[i].StepID = strings.Repeat("s", 128)
	}
	_, err := l.Encode()
	wantKind(t, err, ErrTooLarge)
}

// Spec: RUN-182
func TestLedgerObservations(t *testing.T) {
	l, _ := New(planFP)
	input := []byte("in")
	wantNoError(t, l.Record("fetch", "remote", "op-1", input))
	req, err := l.ReconcileRequest("op-1", input, "session-1", "reconcile-1")
	wantNoError(t, err)
	if req.Tool != "remote" || req.OperationKey != "op-1" {
		t.Fatalf("request = %+v", req)
	}
	_, err = l.ReconcileRequest("op-1", []byte("other"), "session-1", "reconcile-1")
	wantKind(t, err, ErrInputFingerprintMismatch)
	_, err = l.ReconcileRequest("op-2", input, "session-1", "reconcile-1")
	wantKind(t, err, ErrUnknownOperation)
	observe := func(st protocol.OperationStatus) (State, error) {
		res, err := protocol.NewOperationReconcileResult("session-1", "reconcile-1", "remote", "op-1", st)
		wantNoError(t, err)
		return l.ApplyVerifiedReconciliation(req, res)
	}
	steps := []struct {
		st       protocol.OperationStatus
		want     State
		revision uint64
		kind     error
	}{
		{protocol.Running(), Running, 2, nil},
		{protocol.Running(), Running, 2, nil}, // identical: no revision bump
		{protocol.Succeeded(protocol.TextPayload("a")), Succeeded, 3, nil},
		{protocol.Succeeded(protocol.TextPayload("different payload")), Succeeded, 3, nil}, // kinds only
		{protocol.Failed("x"), 0, 3, ErrInvalidStateTransition},
		{protocol.Running(), 0, 3, ErrInvalidStateTransition},
	}
	for i, s := range steps {
		got, err := observe(s.st)
		if s.kind != nil {
			wantKind(t, err, s.kind)
		} else if err != nil || got != s.want {
			t.Fatalf("step %d: %v %v", i, got, err)
		}
		if l.Revision() != s.revision {
			t.Fatalf("step %d: revision %d, want %d", i, l.Revision(), s.revision)
		}
	}
	other, _ := protocol.NewOperationReconcileResult("session-1", "reconcile-2", "remote", "op-1", protocol.Running())
	_, err = l.ApplyVerifiedReconciliation(req, other)
	wantKind(t, err, ErrReconciliationMismatch)
	wantKind(t, l.ValidateMinimumRevision(4), ErrStaleRevision)
	wantNoError(t, l.ValidateMinimumRevision(3))
}

// ledgerRuntime has an external JSON tool "remote.json" and a text tool "remote".
// Spec: RUN-181, RUN-183
func TestPrepareNextExternalOperation(t *testing.T) {
	r := ledgerRuntime(t)
	l, _ := New(planFP)
	nonce := []byte("run-1/op-1")
	p, err := PrepareNextExternalOperation(r, testPlan, 0, l, nonce)
	if p != nil || err != nil || l.Revision() != 0 {
		t.Fatalf("nothing queued: %v %v", p, err)
	}
	id, err := r.StartJSON("remote.json", `{"b":2,"a":1}`)
	wantNoError(t, err)
	p, err = PrepareNextExternalOperation(r, testPlan, 1, l, nonce)
	wantNoError(t, err)
	canonical := []byte("json" + string(be64(13)) + `{"a":1,"b":2}`)
	wantKey := "op-" + hashParts([]byte("splash-workflow-operation-key-v1"), lp([]byte(planFP)), lp([]byte("publish")),
		lp([]byte("remote.json")), lp(canonical), lp(nonce))
	if p.ID() != id || p.StepID() != "publish" || p.CompletedSteps() != 1 || p.OperationKey() != wantKey {
		t.Fatalf("prepared = %v", p)
	}
	if strings.Contains(p.String(), `"a"`) || strings.Contains(p.String(), "json") {
		t.Fatalf("prepared prints its payload: %s", p)
	}
	if stateOf(r, id) != host.StateQueued || l.Revision() != 1 {
		t.Fatal("preparing claimed the operation or did not record it")
	}
	op, _ := l.Operation(wantKey)
	if op.StepID != "publish" || op.Tool != "remote.json" || op.State != Pending ||
		op.InputFingerprint != hashParts([]byte("splash-workflow-operation-input-v1"), lp(canonical)) {
		t.Fatalf("record = %+v", op)
	}
	// Preparing again with the same nonce verifies the existing record without a new revision.
	if _, err := PrepareNextExternalOperation(r, testPlan, 1, l, nonce); err != nil || l.Revision() != 1 {
		t.Fatalf("re-prepare: %v, revision %d", err, l.Revision())
	}
	// The key inputs are checked in order.
	for _, c := range []struct {
		completed int
		nonce     []byte
		kind      error
	}{
		{2, nonce, ErrNoSuspendedStep},
		{-1, nonce, ErrNoSuspendedStep},
		{0, nil, ErrEmptyOperationNonce},
		{0, make([]byte, 129), ErrOperationNonceTooLarge},
	} {
		_, err := PrepareNextExternalOperation(r, testPlan, c.completed, l, c.nonce)
		wantKind(t, err, c.kind)
	}
	if _, err := PrepareNextExternalOperation(r, testPlan, 0, l, make([]byte, 128)); err != nil {
		t.Fatal(err)
	}
	// A record bound to another step, or terminal, cannot be reused.
	l2, _ := New(planFP)
	wantNoError(t, l2.Record("fetch", "remote.json", wantKey, canonical))
	_, err = PrepareNextExternalOperation(r, testPlan, 1, l2, nonce)
	wantKind(t, err, ErrOperationBindingMismatch)
	l3, _ := New(planFP)
	wantNoError(t, l3.Record("publish", "remote.json", wantKey, []byte("other input")))
	_, err = PrepareNextExternalOperation(r, testPlan, 1, l3, nonce)
	wantKind(t, err, ErrInputFingerprintMismatch)
	l3.operations[0].InputFingerprint = InputFingerprint(canonical)
	l3.operations[0].State = Failed
	_, err = PrepareNextExternalOperation(r, testPlan, 1, l3, nonce)
	wantKind(t, err, ErrOperationAlreadyTerminal)
	// The ledger must belong to the plan.
	l4, _ := New(strings.Repeat("ef", 32))
	_, err = PrepareNextExternalOperation(r, testPlan, 1, l4, nonce)
	wantKind(t, err, ErrPlanMismatch)
	l5, _ := New(planFP)
	wantNoError(t, l5.Record("gone", "remote.json", "op-x", canonical))
	_, err = PrepareNextExternalOperation(r, testPlan, 1, l5, nonce)
	wantKind(t, err, ErrUnknownStep)
	// A JSON input beyond the protocol depth limit cannot be prepared.
	r2 := ledgerRuntime(t)
	_, _ = r2.StartJSON("remote.json", strings.Repeat("[", 33)+strings.Repeat("]", 33))
	_, err = PrepareNextExternalOperation(r2, testPlan, 0, l, nonce)
	wantKind(t, err, host.ErrInvalidPayload)
}

// Spec: RUN-184
func TestClaimPreparedExternalOperation(t *testing.T) {
	r := ledgerRuntime(t)
	l, _ := New(planFP)
	first, _ := r.StartJSON("remote.json", `{"n":1}`)
	second, _ := r.StartJSON("remote.json", `{"n":2}`)
	p, err := PrepareNextExternalOperation(r, testPlan, 0, l, []byte("n1"))
	wantNoError(t, err)
	if p.ID() != first {
		t.Fatalf("prepared %d", p.ID())
	}
	// Binding checks run before the claim and claim nothing on failure.
	_, err = ClaimPreparedExternalOperation(r, testPlan, 1, l, p)
	wantKind(t, err, ErrOperationBindingMismatch)
	_, err = ClaimPreparedExternalOperation(r, Plan{Fingerprint: strings.Repeat("ef", 32), Steps: testPlan.Steps}, 0, l, p)
	wantKind(t, err, ErrPreparedElsewhere)
	other := ledgerRuntime(t)
	_, err = ClaimPreparedExternalOperation(other, testPlan, 0, l, p)
	wantKind(t, err, ErrPreparedElsewhere)
	empty, _ := New(planFP)
	_, err = ClaimPreparedExternalOperation(r, testPlan, 0, empty, p)
	wantKind(t, err, ErrUnknownOperation)
	if stateOf(r, first) != host.StateQueued || stateOf(r, second) != host.StateQueued {
		t.Fatal("a refused claim changed the queue")
	}
	c, err := ClaimPreparedExternalOperation(r, testPlan, 0, l, p)
	wantNoError(t, err)
	if c.Invocation().ID != first || stateOf(r, first) != host.StateClaimed || c.OperationKey() != p.OperationKey() {
		t.Fatalf("claimed = %v", c)
	}
	// A stale preparation fails and does not claim the other queued operation.
	_, err = ClaimPreparedExternalOperation(r, testPlan, 0, l, p)
	wantKind(t, err, host.ErrAlreadyClaimed)
	if stateOf(r, second) != host.StateQueued {
		t.Fatal("a stale preparation claimed another operation")
	}
	// A collected operation leaves a stale preparation: Unknown, nothing else claimed.
	p2, err := PrepareNextExternalOperation(r, testPlan, 0, l, []byte("n2"))
	wantNoError(t, err)
	r.ReleasePromise(second)
	r.CollectGarbage()
	third, _ := r.StartJSON("remote.json", `{"n":2}`)
	_, err = ClaimPreparedExternalOperation(r, testPlan, 0, l, p2)
	wantKind(t, err, host.ErrUnknownOperation)
	if stateOf(r, third) != host.StateQueued {
		t.Fatal("a stale preparation claimed a replacement operation")
	}
}

func memoryLedgerStore(t testing.TB) (*Store, *storage.AuthenticatedStore, storage.RecordKey) {
	t.Helper()
	id, err := storage.ParseKeyID("k1")
	wantNoError(t, err)
	ring, err := storage.NewKeyring(id, storage.NewKey([32]byte{1, 2, 3}))
	wantNoError(t, err)
	store := storage.NewAuthenticatedStore(storage.NewMemoryBackend(), ring)
	key, err := storage.NewRecordKey("workflow-ledger", "plan-1")
	wantNoError(t, err)
	return NewStore(store, key), store, key
}

// Spec: RUN-185, RUN-186
func TestDurableDispatchFlow(t *testing.T) {
	ctx := context.Background()
	r := ledgerRuntime(t)
	ls, _, _ := memoryLedgerStore(t)
	l, rev, err := ls.Load(ctx, testPlan)
	if err != nil || rev != 0 || l.Revision() != 0 {
		t.Fatalf("fresh load = %v %d %v", l, rev, err)
	}
	fence, err := ls.ReserveFence(ctx)
	wantNoError(t, err)
	id, _ := r.StartJSON("remote.json", `{"q":"x"}`)
	p, err := PrepareNextExternalOperation(r, testPlan, 0, l, []byte("run-7"))
	wantNoError(t, err)
	rev, err = ls.Persist(ctx, l, rev, fence) // persist before the claim
	wantNoError(t, err)
	c, err := ClaimPreparedExternalOperation(r, testPlan, 0, l, p)
	wantNoError(t, err)

	hostAuth, worker := authPair(t, "worker-1")
	_, err = PrepareClaimedDispatch(r, testPlan, 0, l, c, "dispatch-1", worker)
	wantKind(t, err, ErrDispatchRequiresHostAuthenticator)
	d, err := PrepareClaimedDispatch(r, testPlan, 0, l, c, "dispatch-1", hostAuth)
	wantNoError(t, err)
	if d.Request.OperationKey != p.OperationKey() || d.Request.Tool != "remote.json" || !d.Request.Payload.Equal(p.Payload()) {
		t.Fatalf("dispatch request = %+v", d.Request)
	}
	// The worker answers succeeded.
	f, err := worker.Open(d.Line)
	wantNoError(t, err)
	dreq := f.Message.(protocol.DispatchOperationMessage).Request
	res, err := protocol.NewOperationReconcileResult(dreq.SessionID, dreq.RequestID, dreq.Tool, dreq.OperationKey,
		protocol.Succeeded(protocol.JSONPayload(jv(t, `{"z":1,"a":2}`))))
	wantNoError(t, err)
	frame, _, err := worker.Seal(protocol.OperationResultMessage{Result: res})
	wantNoError(t, err)
	state, got, err := ApplyDispatchResult(testPlan, l, d.Request, hostAuth, frame)
	if err != nil || state != Succeeded || got.Status.State != protocol.StateSucceeded {
		t.Fatalf("apply = %v %+v %v", state, got, err)
	}
	if stateOf(r, id) != host.StateClaimed {
		t.Fatal("applying the dispatch result touched the runtime")
	}
	rev, err = ls.Persist(ctx, l, rev, fence) // persist before resolving
	wantNoError(t, err)
	rec, err := r.ResolveOperationStatus(id, got.Status)
	if err != nil || rec.Settlement.Output != `{"a":2,"z":1}` {
		t.Fatalf("resolve = %+v %v", rec, err)
	}
	// The stored ledger is the succeeded one.
	back, backRev, err := ls.Load(ctx, testPlan)
	wantNoError(t, err)
	if backRev != rev || back.Operations()[0].State != Succeeded || back.Revision() != 2 {
		t.Fatalf("stored = %+v at %d", back.Operations(), backRev)
	}
	// A stale writer (old revision) and a fenced-out writer fail.
	_, err = ls.Persist(ctx, l, rev-1, fence)
	wantKind(t, err, ErrStore)
	wantKind(t, err, storage.ErrWriteConflict)
	newer, err := ls.ReserveFence(ctx)
	wantNoError(t, err)
	_, err = ls.Persist(ctx, l, rev, newer)
	wantNoError(t, err)
	_, err = ls.Persist(ctx, l, rev+1, fence)
	wantKind(t, err, ErrStore)
	// A dispatch of a settled operation is refused by the runtime's validation.
	_, err = PrepareClaimedDispatch(r, testPlan, 0, l, c, "dispatch-2", hostAuth)
	wantKind(t, err, host.ErrAlreadyCompleted)
}

// Spec: RUN-186
func TestApplyDispatchResultRejects(t *testing.T) {
	r := ledgerRuntime(t)
	l, _ := New(planFP)
	_, _ = r.StartJSON("remote.json", `{"q":1}`)
	p, _ := PrepareNextExternalOperation(r, testPlan, 0, l, []byte("n"))
	c, _ := ClaimPreparedExternalOperation(r, testPlan, 0, l, p)
	hostAuth, worker := authPair(t, "worker-1")
	d, err := PrepareClaimedDispatch(r, testPlan, 0, l, c, "dispatch-1", hostAuth)
	wantNoError(t, err)
	f, _ := worker.Open(d.Line)
	dreq := f.Message.(protocol.DispatchOperationMessage).Request
	answer := func(requestID string, st protocol.OperationStatus, reconciled bool) protocol.Frame {
		res, err := protocol.NewOperationReconcileResult(dreq.SessionID, requestID, dreq.Tool, dreq.OperationKey, st)
		wantNoError(t, err)
		var m protocol.Message = protocol.OperationResultMessage{Result: res}
		if reconciled {
			m = protocol.ReconciledOperationMessage{Result: res}
		}
		frame, _, err := worker.Seal(m)
		wantNoError(t, err)
		return frame
	}
	_, _, err = ApplyDispatchResult(testPlan, l, d.Request, hostAuth, answer("dispatch-1", protocol.Running(), true))
	wantKind(t, err, ErrUnexpectedDispatchMessage)
	_, _, err = ApplyDispatchResult(testPlan, l, d.Request, hostAuth, answer("dispatch-9", protocol.Running(), false))
	wantKind(t, err, ErrReconciliationMismatch)
	forged := d.Request
	forged.Payload = protocol.JSONPayload(jv(t, `{"q":2}`))
	_, _, err = ApplyDispatchResult(testPlan, l, forged, hostAuth, answer("dispatch-1", protocol.Running(), false))
	wantKind(t, err, ErrInputFingerprintMismatch)
	cancelled := answer("dispatch-1", protocol.Cancelled(), false)
	tampered := cancelled
	tampered.Tag[5] ^= 0x40
	_, _, err = ApplyDispatchResult(testPlan, l, d.Request, hostAuth, tampered)
	wantKind(t, err, ErrProtocol)
	if l.Revision() != 1 || l.Operations()[0].State != Pending {
		t.Fatal("a rejected result changed the ledger")
	}
	st, _, err := ApplyDispatchResult(testPlan, l, d.Request, hostAuth, cancelled) // the failed open consumed nothing
	if err != nil || st != Cancelled {
		t.Fatalf("cancelled = %v %v", st, err)
	}
	rec, err := r.ResolveOperationStatus(c.Invocation().ID, protocol.Cancelled())
	wantNoError(t, err)
	wantToolError(t, rec.Settlement.Err, host.ToolCancelled, "external operation was reported cancelled")
}

// Spec: RUN-181
func TestOperationKeyInputChecks(t *testing.T) {
	r := ledgerRuntime(t)
	l, _ := New(planFP)
	_, _ = r.StartJSON("remote.json", `{}`)
	plan := Plan{Fingerprint: planFP, Steps: []string{"fetch"}}
	if _, err := deriveOperationKey(plan, "other", "remote.json", nil, []byte("n")); !errors.Is(err, ErrUnknownStep) {
		t.Fatalf("unknown step: %v", err)
	}
	if _, err := deriveOperationKey(plan, "fetch", "Bad Tool", nil, []byte("n")); !errors.Is(err, ErrInvalidTool) {
		t.Fatalf("bad tool: %v", err)
	}
	if _, err := deriveOperationKey(plan, "fetch", "t", make([]byte, MaxInputBytes+1), []byte("n")); !errors.Is(err, ErrInputTooLarge) {
		t.Fatalf("input too large: %v", err)
	}
	if _, err := PrepareNextExternalOperation(r, plan, 0, l, []byte("n")); err != nil {
		t.Fatal(err)
	}
	wantNoError(t, plan.ValidateLedgerAtOrAfter(l, 1))
	wantKind(t, plan.ValidateLedgerAtOrAfter(l, 2), ErrStaleRevision)
	if c := l.Clone(); c.Revision() != 1 || c.PlanFingerprint() != planFP || len(c.Operations()) != 1 {
		t.Fatalf("clone = %+v", c)
	}
}
