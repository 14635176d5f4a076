package worker_test

import (
	"context"
	"errors"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/journal"
	"github.com/splashv5/conform/impl/profile"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/worker"
	"github.com/splashv5/conform/impl/worker/workertest"
)

const scope = "tenant-a"

var errStoreDown = errors.New("test store: unavailable")

// memStore is a JournalPersister with injectable faults. It keeps the last durable journal.
type memStore struct {
	durable  *journal.Journal
	revision uint64
	calls    int
	faults   []string // consumed one per Persist: "" ok, "error", "stale"
	leases   []uint64
}

func newMemStore(t testing.TB) *memStore {
	j, err := journal.New(scope)
	if err != nil {
		t.Fatal(err)
	}
	return &memStore{durable: j}
}

func (m *memStore) Persist(_ context.Context, j *journal.Journal, expected uint64, lease worker.Lease) (uint64, error) {
	m.calls++
	m.leases = append(m.leases, lease.Token())
	fault := ""
	if len(m.faults) > 0 {
		fault, m.faults = m.faults[0], m.faults[1:]
	}
	switch fault {
	case "error":
		return 0, errStoreDown
	case "stale":
		return expected, nil
	}
	if expected != m.revision {
		return 0, errors.New("test store: revision conflict")
	}
	m.durable = j.Clone()
	m.revision++
	return m.revision, nil
}

// rig is one opened session with its host, store and effect record.
type rig struct {
	t       testing.TB
	host    *workertest.Host
	session *worker.Session
	store   *memStore
	effects *profile.EffectLog
	grants  map[string]protocol.CapabilityGrant
}

type rigOptions struct {
	grants   []protocol.CapabilityGrant
	register func(*worker.Registry)
	limits   worker.Limits
	journal  *journal.Journal
	effects  *profile.EffectLog // shared with an earlier rig, as a restarted worker would
	// configure, when set, adjusts the session's configuration (the faulty build's tests
	// inject faults with it).
	configure configure
}

// configure adjusts a session's configuration for a host.
type configure func(worker.Config, *workertest.Host) worker.Config

func profileGrant(tool string, calls, compensations uint32) protocol.CapabilityGrant {
	return workertest.Grant(tool, profile.Formats[tool], calls, compensations)
}

func newRig(t testing.TB, o rigOptions) *rig {
	t.Helper()
	host, err := workertest.NewHost("session-1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(host.Close)
	auth, err := host.WorkerAuthenticator(canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	effects := o.effects
	if effects == nil {
		effects = profile.NewEffectLog(nil, nil)
	}
	reg := worker.NewRegistry()
	if err := profile.Register(reg, profile.Options{Effects: effects}); err != nil {
		t.Fatal(err)
	}
	if o.register != nil {
		o.register(reg)
	}
	store := newMemStore(t)
	j := store.durable.Clone()
	if o.journal != nil {
		j = o.journal
	}
	cfg := worker.Config{
		Journal: j, Registry: reg, Limits: o.limits,
		Admission: worker.AdmissionFunc(func(context.Context, protocol.CapabilityManifest, string) (uint64, error) { return 7, nil }),
	}
	if o.configure != nil {
		cfg = o.configure(cfg, host)
	}
	s, err := worker.Open(context.Background(), auth, host.Seal(host.OpenSession(o.grants...)), cfg)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	grants := map[string]protocol.CapabilityGrant{}
	for _, g := range o.grants {
		grants[g.Tool] = g
	}
	return &rig{t: t, host: host, session: s, store: store, effects: effects, grants: grants}
}

// send seals m at the next host sequence, handles it and returns the answer description or
// the error.
func (r *rig) send(m protocol.Message) (string, error) {
	r.t.Helper()
	line, err := r.session.Handle(context.Background(), r.host.Seal(m), r.store)
	if err != nil {
		if line != nil {
			r.t.Fatalf("an error came with an answer line: %v", err)
		}
		return "", err
	}
	return r.host.MustOpen(line), nil
}

// want asserts that m is answered with the description want.
func (r *rig) want(m protocol.Message, want string) {
	r.t.Helper()
	got, err := r.send(m)
	if err != nil {
		r.t.Fatalf("%s: unexpected error %v", m.Type(), err)
	}
	if got != want {
		r.t.Fatalf("%s: answer %q, want %q", m.Type(), got, want)
	}
}

// fail asserts that m is rejected with worker kind k and, when pk is valid, protocol kind pk.
func (r *rig) fail(m protocol.Message, k worker.ErrorKind, pk protocol.ErrorKind) error {
	r.t.Helper()
	got, err := r.send(m)
	if err == nil {
		r.t.Fatalf("%s: answered %q, want error %v", m.Type(), got, k)
	}
	if !errors.Is(err, k) {
		r.t.Fatalf("%s: error %v, want kind %v", m.Type(), err, k)
	}
	if pk.Valid() && !errors.Is(err, pk) {
		r.t.Fatalf("%s: error %v, want protocol kind %v", m.Type(), err, pk)
	}
	return err
}

func (r *rig) durableState(key string) string {
	r.t.Helper()
	rec, ok := r.store.durable.Operation(key)
	if !ok {
		return "absent"
	}
	return rec.State.State.WireName()
}

func (r *rig) liveState(key string) string {
	r.t.Helper()
	rec, ok := r.session.Journal().Operation(key)
	if !ok {
		return "absent"
	}
	return rec.State.State.WireName()
}

func (r *rig) effectCount(kind profile.EffectKind) int {
	n := 0
	for _, l := range r.effects.Lines() {
		if l.Kind == kind {
			n++
		}
	}
	return n
}

// scripted is a test adapter whose behaviour is given by functions.
type scripted struct {
	worker.Unimplemented
	safety    worker.InvocationSafety
	contract  worker.DurableContract
	invoke    func(protocol.ToolInvocation) (protocol.ToolPayload, error)
	dispatch  func(protocol.OperationDispatchRequest) (protocol.OperationStatus, error)
	reconcile func(protocol.OperationReconcileRequest) (protocol.OperationStatus, error)
	calls     int
}

func (s *scripted) InvocationSafety() worker.InvocationSafety { return s.safety }
func (s *scripted) DurableContract() worker.DurableContract   { return s.contract }

func (s *scripted) Invoke(req protocol.ToolInvocation, g protocol.CapabilityGrant) (protocol.ToolPayload, error) {
	s.calls++
	if s.invoke == nil {
		return s.Unimplemented.Invoke(req, g)
	}
	return s.invoke(req)
}

func (s *scripted) DispatchOperation(req protocol.OperationDispatchRequest, g protocol.CapabilityGrant) (protocol.OperationStatus, error) {
	s.calls++
	if s.dispatch == nil {
		return s.Unimplemented.DispatchOperation(req, g)
	}
	return s.dispatch(req)
}

func (s *scripted) ReconcileOperation(req protocol.OperationReconcileRequest, g protocol.CapabilityGrant) (protocol.OperationStatus, error) {
	s.calls++
	if s.reconcile == nil {
		return s.Unimplemented.ReconcileOperation(req, g)
	}
	return s.reconcile(req)
}

const (
	echo       = profile.ToolTextEcho
	jsonEcho   = profile.ToolJSONEcho
	failTool   = profile.ToolTextFail
	undeclared = profile.ToolTextUndeclared
	record     = profile.ToolDurableRecord
	absence    = profile.AbsenceMessage
)

func text(s string) protocol.ToolPayload { return protocol.TextPayload(s) }
