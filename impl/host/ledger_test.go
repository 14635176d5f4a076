package host

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/storage"
)

var (
	planFP   = strings.Repeat("ab", 32)
	testPlan = Plan{Fingerprint: planFP, Steps: []string{"fetch", "publish"}}
)

// Spec: RUN-180, RUN-182
func TestLedgerEncodingAndRecord(t *testing.T) {
	l, err := NewLedger(planFP)
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
	if LedgerInputFingerprint(input) != fp {
		t.Fatal("input fingerprint")
	}
	back, err := DecodeLedger(got)
	wantNoError(t, err)
	if again, _ := back.Encode(); !bytes.Equal(again, got) || back.Revision() != 1 {
		t.Fatalf("round trip = %s", again)
	}
	for _, c := range []struct {
		step, tool, key string
		input           []byte
		kind            error
	}{
		{"fetch", "remote", "op-1", input, ErrLedgerDuplicateOperationKey},
		{"Fetch", "remote", "op-2", input, ErrLedgerInvalidStepID},
		{"fetch", "Remote", "op-2", input, ErrLedgerInvalidTool},
		{"fetch", "remote", "cmp-2", input, ErrLedgerInvalidOperationKey},
		{"fetch", "remote", "op-2", make([]byte, MaxLedgerInputBytes+1), ErrLedgerInputTooLarge},
	} {
		wantKind(t, l.Record(c.step, c.tool, c.key, c.input), c.kind)
	}
	if l.Revision() != 1 {
		t.Fatal("a refused record changed the revision")
	}
	for i := 2; i <= MaxLedgerOperations; i++ {
		wantNoError(t, l.Record("fetch", "remote", "op-"+strings.Repeat("x", i), input))
	}
	wantKind(t, l.Record("fetch", "remote", "op-extra", input), ErrLedgerTooManyOperations)
	if l.Revision() != MaxLedgerOperations {
		t.Fatalf("revision = %d", l.Revision())
	}
	l.revision = ^uint64(0)
	l.operations = l.operations[:1]
	wantKind(t, l.Record("fetch", "remote", "op-last", input), ErrLedgerRevisionExhausted)
}

// Spec: RUN-180
func TestLedgerDecodeRejects(t *testing.T) {
	fp := strings.Repeat("cd", 32)
	op := `{"step_id":"fetch","tool":"remote","operation_key":"op-1","input_fingerprint":"` + fp + `","state":"pending"}`
	head := `{"format_version":2,"revision":3,"plan_fingerprint":"` + planFP + `","operations":[`
	ok := head + op + `]}`
	if l, err := DecodeLedger([]byte(ok)); err != nil || l.Revision() != 3 || l.Operations()[0].Compensation != nil {
		t.Fatalf("missing compensation defaults to null: %v", err)
	}
	positional := `[2,3,"` + planFP + `",[["fetch","remote","op-1","` + fp + `","running",null]]]`
	if l, err := DecodeLedger([]byte(positional)); err != nil || l.Operations()[0].State != LedgerRunning {
		t.Fatalf("positional form: %v", err)
	}
	comp := `{"compensation_key":"cmp-1","input_fingerprint":"` + fp + `","tenant_scope":"tenant","grant_fingerprint":"` + fp + `","state":"pending"}`
	withComp := head + strings.Replace(op, `"pending"}`, `"succeeded","compensation":`+comp+`}`, 1) + `]}`
	l, err := DecodeLedger([]byte(withComp))
	wantNoError(t, err)
	enc, _ := l.Encode()
	if !strings.Contains(string(enc), `"compensation":`+comp) {
		t.Fatalf("compensation round trip = %s", enc)
	}
	cases := []struct {
		doc  string
		kind error
	}{
		{`{"format_version":2`, ErrLedgerInvalidEncoding},
		{strings.Replace(ok, `"revision":3`, `"revision":3,"extra":1`, 1), ErrLedgerInvalidEncoding},
		{strings.Replace(ok, `"revision":3`, `"revision":3,"revision":3`, 1), ErrLedgerInvalidEncoding},
		{strings.Replace(ok, `"state":"pending"`, `"state":"pending","x":1`, 1), ErrLedgerInvalidEncoding},
		{strings.Replace(ok, `"state":"pending"`, `"state":"done"`, 1), ErrLedgerInvalidEncoding},
		{strings.Replace(ok, `"format_version":2`, `"format_version":256`, 1), ErrLedgerInvalidEncoding},
		{strings.Replace(ok, `"format_version":2`, `"format_version":1`, 1), ErrLedgerUnsupportedVersion},
		{strings.Replace(ok, planFP, "AB", 1), ErrLedgerInvalidPlanFingerprint},
		{head + op + `,` + op + `]}`, ErrLedgerDuplicateOperationKey},
		{strings.Replace(ok, `"op-1"`, `"cmp-1"`, 1), ErrLedgerInvalidOperationKey},
		{strings.Replace(ok, `"fetch"`, `"fe tch"`, 1), ErrLedgerInvalidStepID},
		{strings.Replace(ok, fp, "00", 1), ErrLedgerInvalidInputFingerprint},
		{head + strings.Replace(op, `"pending"}`, `"pending","compensation":`+comp+`}`, 1) + `]}`, ErrLedgerCompensationRequiresSucceededOperation},
		{head + strings.Replace(op, `"pending"}`, `"succeeded","compensation":`+strings.Replace(comp, "cmp-1", "op-9", 1)+`}`, 1) + `]}`, ErrLedgerInvalidCompensationKey},
		{`{"format_version":2,"revision":0,"plan_fingerprint":"` + planFP + `","operations":[],"pad":"` + strings.Repeat("x", MaxLedgerBytes) + `"}`, ErrLedgerTooLarge},
	}
	for i, c := range cases {
		_, err := DecodeLedger([]byte(c.doc))
		if err == nil {
			t.Fatalf("case %d decoded", i)
		}
		wantKind(t, err, c.kind)
	}
}

// Spec: RUN-180
func TestLedgerEncodeSizeEstimate(t *testing.T) {
	fp := strings.Repeat("cd", 32)
	l, _ := NewLedger(planFP)
	for i := 0; i < 48; i++ {
		l.operations = append(l.operations, LedgerOperation{StepID: "fetch", Tool: "remote",
			OperationKey:     "op-" + strings.Repeat("k", 100) + string(rune('a'+i%26)) + string(rune('a'+i/26)),
			InputFingerprint: fp, State: LedgerSucceeded,
			Compensation: &LedgerCompensation{CompensationKey: "cmp-1", InputFingerprint: fp, TenantScope: "t", GrantFingerprint: fp, State: LedgerPending}})
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
	wantKind(t, err, ErrLedgerTooLarge)
}

// Spec: RUN-182
func TestLedgerObservations(t *testing.T) {
	l, _ := NewLedger(planFP)
	input := []byte("in")
	wantNoError(t, l.Record("fetch", "remote", "op-1", input))
	req, err := l.ReconcileRequest("op-1", input, "session-1", "reconcile-1")
	wantNoError(t, err)
	if req.Tool != "remote" || req.OperationKey != "op-1" {
		t.Fatalf("request = %+v", req)
	}
	_, err = l.ReconcileRequest("op-1", []byte("other"), "session-1", "reconcile-1")
	wantKind(t, err, ErrLedgerInputFingerprintMismatch)
	_, err = l.ReconcileRequest("op-2", input, "session-1", "reconcile-1")
	wantKind(t, err, ErrLedgerUnknownOperation)
	observe := func(st protocol.OperationStatus) (LedgerState, error) {
		res, err := protocol.NewOperationReconcileResult("session-1", "reconcile-1", "remote", "op-1", st)
		wantNoError(t, err)
		return l.ApplyVerifiedReconciliation(req, res)
	}
	steps := []struct {
		st       protocol.OperationStatus
		want     LedgerState
		revision uint64
		kind     error
	}{
		{protocol.Running(), LedgerRunning, 2, nil},
		{protocol.Running(), LedgerRunning, 2, nil}, // identical: no revision bump
		{protocol.Succeeded(protocol.TextPayload("a")), LedgerSucceeded, 3, nil},
		{protocol.Succeeded(protocol.TextPayload("different payload")), LedgerSucceeded, 3, nil}, // kinds only
		{protocol.Failed("x"), 0, 3, ErrLedgerInvalidStateTransition},
		{protocol.Running(), 0, 3, ErrLedgerInvalidStateTransition},
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
	wantKind(t, err, ErrLedgerReconciliationMismatch)
	wantKind(t, l.ValidateMinimumRevision(4), ErrLedgerStaleRevision)
	wantNoError(t, l.ValidateMinimumRevision(3))
}

// ledgerRuntime has an external JSON tool "remote.json" and a text tool "remote".
func ledgerRuntime(t testing.TB) *Runtime {
	r, _ := lifecycleRuntime(t)
	return r
}

// Spec: RUN-181, RUN-183
func TestPrepareNextExternalOperation(t *testing.T) {
	r := ledgerRuntime(t)
	l, _ := NewLedger(planFP)
	nonce := []byte("run-1/op-1")
	p, err := r.PrepareNextExternalOperation(testPlan, 0, l, nonce)
	if p != nil || err != nil || l.Revision() != 0 {
		t.Fatalf("nothing queued: %v %v", p, err)
	}
	id, err := r.StartJSON("remote.json", `{"b":2,"a":1}`)
	wantNoError(t, err)
	p, err = r.PrepareNextExternalOperation(testPlan, 1, l, nonce)
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
	if stateOf(r, id) != StateQueued || l.Revision() != 1 {
		t.Fatal("preparing claimed the operation or did not record it")
	}
	op, _ := l.Operation(wantKey)
	if op.StepID != "publish" || op.Tool != "remote.json" || op.State != LedgerPending ||
		op.InputFingerprint != hashParts([]byte("splash-workflow-operation-input-v1"), lp(canonical)) {
		t.Fatalf("record = %+v", op)
	}
	// Preparing again with the same nonce verifies the existing record without a new revision.
	if _, err := r.PrepareNextExternalOperation(testPlan, 1, l, nonce); err != nil || l.Revision() != 1 {
		t.Fatalf("re-prepare: %v, revision %d", err, l.Revision())
	}
	// The key inputs are checked in order.
	for _, c := range []struct {
		completed int
		nonce     []byte
		kind      error
	}{
		{2, nonce, ErrLedgerNoSuspendedStep},
		{-1, nonce, ErrLedgerNoSuspendedStep},
		{0, nil, ErrLedgerEmptyOperationNonce},
		{0, make([]byte, 129), ErrLedgerOperationNonceTooLarge},
	} {
		_, err := r.PrepareNextExternalOperation(testPlan, c.completed, l, c.nonce)
		wantKind(t, err, c.kind)
	}
	if _, err := r.PrepareNextExternalOperation(testPlan, 0, l, make([]byte, 128)); err != nil {
		t.Fatal(err)
	}
	// A record bound to another step, or terminal, cannot be reused.
	l2, _ := NewLedger(planFP)
	wantNoError(t, l2.Record("fetch", "remote.json", wantKey, canonical))
	_, err = r.PrepareNextExternalOperation(testPlan, 1, l2, nonce)
	wantKind(t, err, ErrLedgerOperationBindingMismatch)
	l3, _ := NewLedger(planFP)
	wantNoError(t, l3.Record("publish", "remote.json", wantKey, []byte("other input")))
	_, err = r.PrepareNextExternalOperation(testPlan, 1, l3, nonce)
	wantKind(t, err, ErrLedgerInputFingerprintMismatch)
	l3.operations[0].InputFingerprint = LedgerInputFingerprint(canonical)
	l3.operations[0].State = LedgerFailed
	_, err = r.PrepareNextExternalOperation(testPlan, 1, l3, nonce)
	wantKind(t, err, ErrLedgerOperationAlreadyTerminal)
	// The ledger must belong to the plan.
	l4, _ := NewLedger(strings.Repeat("ef", 32))
	_, err = r.PrepareNextExternalOperation(testPlan, 1, l4, nonce)
	wantKind(t, err, ErrLedgerPlanMismatch)
	l5, _ := NewLedger(planFP)
	wantNoError(t, l5.Record("gone", "remote.json", "op-x", canonical))
	_, err = r.PrepareNextExternalOperation(testPlan, 1, l5, nonce)
	wantKind(t, err, ErrLedgerUnknownStep)
	// A JSON input beyond the protocol depth limit cannot be prepared.
	r2 := ledgerRuntime(t)
	_, _ = r2.StartJSON("remote.json", strings.Repeat("[", 33)+strings.Repeat("]", 33))
	_, err = r2.PrepareNextExternalOperation(testPlan, 0, l, nonce)
	wantKind(t, err, ErrInvalidPayload)
}

// Spec: RUN-184
func TestClaimPreparedExternalOperation(t *testing.T) {
	r := ledgerRuntime(t)
	l, _ := NewLedger(planFP)
	first, _ := r.StartJSON("remote.json", `{"n":1}`)
	second, _ := r.StartJSON("remote.json", `{"n":2}`)
	p, err := r.PrepareNextExternalOperation(testPlan, 0, l, []byte("n1"))
	wantNoError(t, err)
	if p.ID() != first {
		t.Fatalf("prepared %d", p.ID())
	}
	// Binding checks run before the claim and claim nothing on failure.
	_, err = r.ClaimPreparedExternalOperation(testPlan, 1, l, p)
	wantKind(t, err, ErrLedgerOperationBindingMismatch)
	_, err = r.ClaimPreparedExternalOperation(Plan{Fingerprint: strings.Repeat("ef", 32), Steps: testPlan.Steps}, 0, l, p)
	wantKind(t, err, ErrLedgerPreparedElsewhere)
	other := ledgerRuntime(t)
	_, err = other.ClaimPreparedExternalOperation(testPlan, 0, l, p)
	wantKind(t, err, ErrLedgerPreparedElsewhere)
	empty, _ := NewLedger(planFP)
	_, err = r.ClaimPreparedExternalOperation(testPlan, 0, empty, p)
	wantKind(t, err, ErrLedgerUnknownOperation)
	if stateOf(r, first) != StateQueued || stateOf(r, second) != StateQueued {
		t.Fatal("a refused claim changed the queue")
	}
	c, err := r.ClaimPreparedExternalOperation(testPlan, 0, l, p)
	wantNoError(t, err)
	if c.Invocation().ID != first || stateOf(r, first) != StateClaimed || c.OperationKey() != p.OperationKey() {
		t.Fatalf("claimed = %v", c)
	}
	// A stale preparation fails and does not claim the other queued operation.
	_, err = r.ClaimPreparedExternalOperation(testPlan, 0, l, p)
	wantKind(t, err, ErrAlreadyClaimed)
	if stateOf(r, second) != StateQueued {
		t.Fatal("a stale preparation claimed another operation")
	}
	// A collected operation leaves a stale preparation: Unknown, nothing else claimed.
	p2, err := r.PrepareNextExternalOperation(testPlan, 0, l, []byte("n2"))
	wantNoError(t, err)
	r.ReleasePromise(second)
	r.CollectGarbage()
	third, _ := r.StartJSON("remote.json", `{"n":2}`)
	_, err = r.ClaimPreparedExternalOperation(testPlan, 0, l, p2)
	wantKind(t, err, ErrUnknownOperation)
	if stateOf(r, third) != StateQueued {
		t.Fatal("a stale preparation claimed a replacement operation")
	}
}

func memoryLedgerStore(t testing.TB) (*LedgerStore, *storage.AuthenticatedStore, storage.RecordKey) {
	t.Helper()
	id, err := storage.ParseKeyID("k1")
	wantNoError(t, err)
	ring, err := storage.NewKeyring(id, storage.NewKey([32]byte{1, 2, 3}))
	wantNoError(t, err)
	store := storage.NewAuthenticatedStore(storage.NewMemoryBackend(), ring)
	key, err := storage.NewRecordKey("workflow-ledger", "plan-1")
	wantNoError(t, err)
	return NewLedgerStore(store, key), store, key
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
	p, err := r.PrepareNextExternalOperation(testPlan, 0, l, []byte("run-7"))
	wantNoError(t, err)
	rev, err = ls.Persist(ctx, l, rev, fence) // persist before the claim
	wantNoError(t, err)
	c, err := r.ClaimPreparedExternalOperation(testPlan, 0, l, p)
	wantNoError(t, err)

	host, worker := authPair(t, "worker-1")
	_, err = r.PrepareClaimedDispatch(testPlan, 0, l, c, "dispatch-1", worker)
	wantKind(t, err, ErrLedgerDispatchRequiresHostAuthenticator)
	d, err := r.PrepareClaimedDispatch(testPlan, 0, l, c, "dispatch-1", host)
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
	state, got, err := ApplyDispatchResult(testPlan, l, d.Request, host, frame)
	if err != nil || state != LedgerSucceeded || got.Status.State != protocol.StateSucceeded {
		t.Fatalf("apply = %v %+v %v", state, got, err)
	}
	if stateOf(r, id) != StateClaimed {
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
	if backRev != rev || back.Operations()[0].State != LedgerSucceeded || back.Revision() != 2 {
		t.Fatalf("stored = %+v at %d", back.Operations(), backRev)
	}
	// A stale writer (old revision) and a fenced-out writer fail.
	_, err = ls.Persist(ctx, l, rev-1, fence)
	wantKind(t, err, ErrLedgerStore)
	wantKind(t, err, storage.ErrWriteConflict)
	newer, err := ls.ReserveFence(ctx)
	wantNoError(t, err)
	_, err = ls.Persist(ctx, l, rev, newer)
	wantNoError(t, err)
	_, err = ls.Persist(ctx, l, rev+1, fence)
	wantKind(t, err, ErrLedgerStore)
	// A dispatch of a settled operation is refused by the runtime's validation.
	_, err = r.PrepareClaimedDispatch(testPlan, 0, l, c, "dispatch-2", host)
	wantKind(t, err, ErrAlreadyCompleted)
}

// Spec: RUN-186
func TestApplyDispatchResultRejects(t *testing.T) {
	r := ledgerRuntime(t)
	l, _ := NewLedger(planFP)
	_, _ = r.StartJSON("remote.json", `{"q":1}`)
	p, _ := r.PrepareNextExternalOperation(testPlan, 0, l, []byte("n"))
	c, _ := r.ClaimPreparedExternalOperation(testPlan, 0, l, p)
	host, worker := authPair(t, "worker-1")
	d, err := r.PrepareClaimedDispatch(testPlan, 0, l, c, "dispatch-1", host)
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
	_, _, err = ApplyDispatchResult(testPlan, l, d.Request, host, answer("dispatch-1", protocol.Running(), true))
	wantKind(t, err, ErrLedgerUnexpectedDispatchMessage)
	_, _, err = ApplyDispatchResult(testPlan, l, d.Request, host, answer("dispatch-9", protocol.Running(), false))
	wantKind(t, err, ErrLedgerReconciliationMismatch)
	forged := d.Request
	forged.Payload = protocol.JSONPayload(jv(t, `{"q":2}`))
	_, _, err = ApplyDispatchResult(testPlan, l, forged, host, answer("dispatch-1", protocol.Running(), false))
	wantKind(t, err, ErrLedgerInputFingerprintMismatch)
	cancelled := answer("dispatch-1", protocol.Cancelled(), false)
	tampered := cancelled
	tampered.Tag[5] ^= 0x40
	_, _, err = ApplyDispatchResult(testPlan, l, d.Request, host, tampered)
	wantKind(t, err, ErrLedgerProtocol)
	if l.Revision() != 1 || l.Operations()[0].State != LedgerPending {
		t.Fatal("a rejected result changed the ledger")
	}
	st, _, err := ApplyDispatchResult(testPlan, l, d.Request, host, cancelled) // the failed open consumed nothing
	if err != nil || st != LedgerCancelled {
		t.Fatalf("cancelled = %v %v", st, err)
	}
	rec, err := r.ResolveOperationStatus(c.Invocation().ID, protocol.Cancelled())
	wantNoError(t, err)
	wantToolError(t, rec.Settlement.Err, ToolCancelled, "external operation was reported cancelled")
}
