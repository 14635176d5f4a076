package workflow_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/host"
	"github.com/splashv5/conform/impl/journal"
	"github.com/splashv5/conform/impl/ledger"
	"github.com/splashv5/conform/impl/profile"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/storage"
	"github.com/splashv5/conform/impl/worker"
	"github.com/splashv5/conform/impl/workflow"
)

const (
	record  = profile.ToolDurableRecord
	tenant  = "tenant-a"
	planFP  = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	session = "session-1"
)

var testPlan = ledger.Plan{Fingerprint: planFP, Steps: []string{"publish", "notify"}}

var errInjected = errors.New("injected ledger write failure")

// faultStore is a ledger.Store over a memory backend that fails the next fail writes.
type faultStore struct {
	*ledger.Store
	fail   int
	writes int
}

func (s *faultStore) Persist(ctx context.Context, l *ledger.Ledger, expected, fence uint64) (uint64, error) {
	if s.fail > 0 {
		s.fail--
		return 0, errInjected
	}
	s.writes++
	return s.Store.Persist(ctx, l, expected, fence)
}

func newStore(t testing.TB) *faultStore {
	t.Helper()
	var k [32]byte
	for i := range k {
		k[i] = 9
	}
	ring, err := storage.NewKeyring("ledger-v1", storage.NewKey(k))
	if err != nil {
		t.Fatal(err)
	}
	key, err := storage.NewRecordKey("workflow", "run-42")
	if err != nil {
		t.Fatal(err)
	}
	return &faultStore{Store: ledger.NewStore(storage.NewAuthenticatedStore(storage.NewMemoryBackend(), ring), key)}
}

// recordGrant is the worker grant of the durable tool, with one compensation.
func recordGrant() protocol.CapabilityGrant {
	g := protocol.JSONGrant(record)
	g.MaxCalls, g.MaxCompensations = 8, 1
	return g
}

// newRuntime returns a runtime with the durable tool registered as an external JSON tool.
func newRuntime(t testing.TB) *host.Runtime {
	t.Helper()
	rt, err := host.New(host.Config{})
	if err != nil {
		t.Fatal(err)
	}
	p := host.JSONPolicy(record)
	p.MaxCalls = 8
	if err := rt.RegisterExternalJSONTool(p, host.Metadata{}); err != nil {
		t.Fatal(err)
	}
	return rt
}

// fixture is an engine over a fault store and runtime, and an in-process worker session of
// the conformance profile for its durable tool.
type fixture struct {
	t       *testing.T
	ctx     context.Context
	rt      *host.Runtime
	store   *faultStore
	e       *workflow.Engine
	effects *profile.EffectLog
	reg     *worker.Registry
	host    *protocol.Authenticator
	w       *worker.Session
	session string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{t: t, ctx: context.Background(), rt: newRuntime(t), store: newStore(t), effects: profile.NewEffectLog(nil, nil)}
	f.reg = worker.NewRegistry()
	if err := profile.Register(f.reg, profile.Options{Effects: f.effects}); err != nil {
		t.Fatal(err)
	}
	e, err := workflow.New(f.ctx, workflow.Config{Runtime: f.rt, Plan: testPlan, Store: f.store})
	if err != nil {
		t.Fatal(err)
	}
	f.e = e
	j, err := journal.New(tenant)
	if err != nil {
		t.Fatal(err)
	}
	f.openWorker(session, j, 0)
	return f
}

// openWorker opens a fresh worker session with its own key over the journal j at revision rev.
func (f *fixture) openWorker(id string, j *journal.Journal, rev uint64) {
	f.t.Helper()
	key, err := protocol.GenerateSessionKey()
	if err != nil {
		f.t.Fatal(err)
	}
	defer key.Close()
	h, err := protocol.NewAuthenticator(id, key, protocol.RoleHost, canonjson.Preserve)
	if err != nil {
		f.t.Fatal(err)
	}
	w, err := protocol.NewAuthenticator(id, key, protocol.RoleWorker, canonjson.Preserve)
	if err != nil {
		f.t.Fatal(err)
	}
	m, err := protocol.NewCapabilityManifest(id, []protocol.CapabilityGrant{recordGrant()})
	if err != nil {
		f.t.Fatal(err)
	}
	_, line, err := h.Seal(protocol.OpenSessionMessage{Manifest: m})
	if err != nil {
		f.t.Fatal(err)
	}
	s, err := worker.Open(f.ctx, w, line, worker.Config{Journal: j, Revision: rev, Registry: f.reg,
		Admission: worker.AdmissionFunc(func(context.Context, protocol.CapabilityManifest, string) (uint64, error) { return 1, nil })})
	if err != nil {
		f.t.Fatal(err)
	}
	f.host, f.w, f.session = h, s, id
}

// reopenWorker opens a fresh worker session, with a new key, over the current worker journal.
func (f *fixture) reopenWorker(id string) {
	f.t.Helper()
	f.openWorker(id, f.w.Journal(), f.w.Revision())
}

// workerRevision is a journal persister that only counts.
type workerRevision struct{}

func (workerRevision) Persist(_ context.Context, _ *journal.Journal, expected uint64, _ worker.Lease) (uint64, error) {
	return expected + 1, nil
}

// send hands a sealed host line to the worker and decodes its answer frame.
func (f *fixture) send(line []byte) protocol.Frame {
	f.t.Helper()
	answer, err := f.w.Handle(f.ctx, line, workerRevision{})
	if err != nil {
		f.t.Fatalf("worker: %v", err)
	}
	fr, err := protocol.DecodeFrame(answer, canonjson.Preserve)
	if err != nil {
		f.t.Fatal(err)
	}
	return fr
}

// start starts a durable call of the record tool in mode with value.
func (f *fixture) start(mode, value string) host.OperationID {
	f.t.Helper()
	id, err := f.rt.StartJSON(record, `{"mode":"`+mode+`","value":`+value+`}`)
	if err != nil {
		f.t.Fatal(err)
	}
	return id
}

// dispatch prepares, seals and sends the next queued operation and applies the answer.
func (f *fixture) dispatch(nonce string) (*ledger.ClaimedOperation, workflow.Resolution) {
	f.t.Helper()
	c, err := f.e.Prepare(f.ctx, []byte(nonce))
	if err != nil || c == nil {
		f.t.Fatalf("prepare: %v, %v", c, err)
	}
	d, err := f.e.SealDispatch("dispatch-"+nonce, f.host)
	if err != nil {
		f.t.Fatal(err)
	}
	res, err := f.e.ApplyDispatchAnswer(f.ctx, d.Request, f.host, f.send(d.Line))
	if err != nil {
		f.t.Fatal(err)
	}
	return c, res
}

// state returns the runtime state of id.
func (f *fixture) state(id host.OperationID) host.State {
	f.t.Helper()
	info, ok := f.rt.Operation(id)
	if !ok {
		return 0
	}
	return info.State
}

// verifiers are switchable grant and action verifiers that count their calls.
type verifiers struct {
	revoked, denyAction bool
	grantCalls          int
	actionCalls         int
	lastAction          workflow.Action
}

func (v *verifiers) VerifyCompensationGrant(tenantScope string, g protocol.CapabilityGrant) error {
	v.grantCalls++
	if v.revoked || tenantScope != tenant {
		return errors.New("grant revoked")
	}
	return nil
}

func (v *verifiers) VerifyCompensationAction(a workflow.Action) error {
	v.actionCalls++
	v.lastAction = a
	if v.denyAction || !strings.Contains(string(a.Input()), `"undo"`) {
		return errors.New("action not allowed")
	}
	return nil
}

// target returns a compensation target for key with v as both verifiers.
func target(t testing.TB, key string, v *verifiers) workflow.Target {
	t.Helper()
	p, err := workflow.NewCompensationPolicy(tenant, recordGrant())
	if err != nil {
		t.Fatal(err)
	}
	return workflow.Target{OperationKey: key, Policy: p, Grant: recordGrant(), GrantVerifier: v, ActionVerifier: v}
}

// undo is the inverse payload and its canonical input.
func undo(t testing.TB) (protocol.ToolPayload, []byte) {
	t.Helper()
	return undoValue(t, `{"mode":"succeed","value":"undo"}`)
}

// undoValue is a payload of JSON text and its canonical input.
func undoValue(t testing.TB, text string) (protocol.ToolPayload, []byte) {
	t.Helper()
	v, err := canonjson.ParseValue([]byte(text), canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	p := protocol.JSONPayload(v)
	in, err := protocol.CanonicalOperationInputBytes(p)
	if err != nil {
		t.Fatal(err)
	}
	return p, in
}

func wantKind(t testing.TB, err error, kind error) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("err = %v, want %v", err, kind)
	}
}
