package main

import (
	"context"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/host"
	"github.com/splashv5/conform/impl/ledger"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/storage"
	"github.com/splashv5/conform/impl/storage/boltstore"
	"github.com/splashv5/conform/impl/transport"
	"github.com/splashv5/conform/impl/workflow"
)

// ownPlan is the driver's workflow plan when start names none (HDR-049): every step command is
// an operation of its one step, so the plan and its fingerprint are the same in every driver
// process.
var ownPlan = []workflow.PlanStep{{ID: "conformance", Source: ""}}

// plan returns the plan a start names, or the driver's own when it names none, with the
// fingerprint derived from its steps (WFL-045, HDR-049).
func (p *planCommand) plan() (ledger.Plan, error) {
	if p == nil {
		return workflow.NewPlan(ownPlan), nil
	}
	if len(p.Steps) == 0 {
		return ledger.Plan{}, errors.New("BadCommand")
	}
	steps := make([]workflow.PlanStep, len(p.Steps))
	for i, st := range p.Steps {
		steps[i] = workflow.PlanStep{ID: st.ID, Source: st.Source}
	}
	return planFault(workflow.NewPlan(steps)), nil
}

// ledgerState is a session's durable state: the directory given with start, and the step engine,
// store and runtime restored from it on first use.
type ledgerState struct {
	state string
	// inputDir is the directory of the input store (HDR-056), or "" to keep it in state.
	inputDir string
	plan     ledger.Plan
	flow     *workflow.Engine
	store    *storage.AuthenticatedStore
	inputs   *storage.AuthenticatedStore // the input store (HDR-050), store itself without inputDir
	rt       *host.Runtime
}

// ledgerStore opens the durable state in dir (HDR-040): a bbolt file holding the workflow
// ledger (and, when start names no input directory, the inputs it names), authenticated with a
// storage key kept in the same directory.
func ledgerStore(dir string) (*storage.AuthenticatedStore, error) {
	return openStore(dir, dir, "ledger.db")
}

// openStore opens the bbolt file name in dbDir, authenticated with the storage key kept in
// keyDir, creating both directories when absent.
func openStore(keyDir, dbDir, name string) (*storage.AuthenticatedStore, error) {
	for _, dir := range []string{keyDir, dbDir} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, err
		}
	}
	key, err := storageKey(filepath.Join(keyDir, "ledger.key"))
	if err != nil {
		return nil, err
	}
	defer key.Wipe()
	ring, err := storage.NewKeyring("driver-ledger-v1", key)
	if err != nil {
		return nil, err
	}
	var backend storage.Backend = memory
	if fault != "memledger" {
		if backend, err = boltstore.Open(filepath.Join(dbDir, name), nil); err != nil {
			return nil, err
		}
	}
	return storage.NewAuthenticatedStore(backend, ring), nil
}

// storageKey reads the 32-byte storage key at path, or draws one and writes it atomically
// (temporary file, fsync, rename, fsync of the directory) when there is none yet.
func storageKey(path string) (storage.Key, error) {
	var raw [storage.KeyBytes]byte
	defer clear(raw[:])
	data, err := os.ReadFile(path)
	if err == nil && len(data) == storage.KeyBytes {
		copy(raw[:], data)
		clear(data)
		return storage.NewKey(raw), nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return storage.Key{}, errors.New("the ledger key file is unreadable or not 32 bytes")
	}
	if _, err := rand.Read(raw[:]); err != nil {
		return storage.Key{}, err
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return storage.Key{}, err
	}
	_, err = f.Write(raw[:])
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err == nil {
		err = syncDir(filepath.Dir(path))
	}
	return storage.NewKey(raw), err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// engine returns the session's step engine. The first use on a session rebuilds it from the
// durable ledger as a restarted host does (WFL-040): a new fence, the ledger validated against
// the plan, then running again only when nothing is uncertain, every operation accepted
// (WFL-042); otherwise it stays recovering until recover settles the ledger.
func (s *session) engine() (*workflow.Engine, error) {
	if s == nil || s.mux != nil {
		// A cancellable session has no one-shot transport: refuse before anything is sealed,
		// so that no sequence number is spent on a frame never sent.
		return nil, errors.New("NotStarted")
	}
	if s.flow != nil {
		return s.flow, nil
	}
	if s.state == "" {
		return nil, errors.New("NoState")
	}
	store, err := ledgerStore(s.state)
	if err != nil {
		return nil, err
	}
	inputs := store
	if s.inputDir != "" {
		if inputs, err = openStore(s.state, s.inputDir, "inputs.db"); err != nil {
			return nil, err
		}
	}
	rt, err := host.New(host.Config{})
	if err != nil {
		return nil, err
	}
	for _, g := range s.auth.Manifest().Grants {
		if g.Format == protocol.FormatJSON {
			if err := rt.RegisterExternalJSONTool(host.JSONPolicy(g.Tool), host.Metadata{}); err != nil {
				return nil, err
			}
		}
	}
	key, _ := storage.NewRecordKey("driver", "ledger")
	e, err := workflow.Restore(context.Background(), workflow.Config{Runtime: rt, Plan: s.plan, Store: ledger.NewStore(store, key)})
	if err != nil {
		return nil, err
	}
	s.flow, s.store, s.inputs, s.rt = e, store, inputs, rt
	resume(e)
	advance(e)
	return e, nil
}

// resume ends recovery once no operation is uncertain, accepting every recorded one.
func resume(e *workflow.Engine) {
	if e.Phase() == workflow.PhaseRecovering && len(e.Unsettled()) == 0 {
		_ = e.Resume(workflow.RecoveryPolicy{Decide: func(ledger.Operation) workflow.Decision { return workflow.DecisionAccept }})
	}
}

// saveInput durably keeps a payload under the fingerprint of its canonical input, so that a
// restarted driver can reconcile or redeliver what its ledger names (the ledger keeps only
// fingerprints, WFL-011).
func (s *session) saveInput(p protocol.ToolPayload) error {
	input, err := protocol.CanonicalOperationInputBytes(p)
	if err != nil {
		return denied{err}
	}
	key, err := storage.NewRecordKey("input", ledger.InputFingerprint(input))
	if err != nil {
		return err
	}
	ctx := context.Background()
	if rec, err := s.inputs.Load(ctx, key); err != nil || rec != nil {
		return err
	}
	_, err = s.inputs.Create(ctx, key, p.AppendJSON(nil))
	return err
}

// loadInput returns the payload kept under fingerprint and its canonical input, checked against
// the fingerprint before anything is sent (HDR-050): LostInput when none is kept,
// InputFingerprintMismatch when what is kept is not that input.
func (s *session) loadInput(fingerprint string) (protocol.ToolPayload, []byte, error) {
	key, err := storage.NewRecordKey("input", fingerprint)
	if err != nil {
		return protocol.ToolPayload{}, nil, err
	}
	rec, err := s.inputs.Load(context.Background(), key)
	if err != nil || rec == nil {
		return protocol.ToolPayload{}, nil, errors.New("LostInput")
	}
	p, err := protocol.DecodeToolPayload(rec.Payload, canonjson.Preserve)
	if err != nil {
		return p, nil, errors.New("InputFingerprintMismatch")
	}
	input, err := protocol.CanonicalOperationInputBytes(p)
	if err != nil || ledger.InputFingerprint(input) != fingerprint {
		return p, nil, errors.New("InputFingerprintMismatch")
	}
	return p, input, nil
}

// oneShot returns the session's one-shot operation transport: one durable exchange per session
// (TRN-113). It shares the worker's stream with the invocation transport, so an invocation that
// poisoned the stream refuses it too (FRM-036, TRN-003).
func (s *session) oneShot() (*transport.OperationTransport, error) {
	if s.mux != nil {
		return nil, errors.New("NotStarted") // the multiplexed transport owns a cancellable session's stream
	}
	if s.frames != nil && s.frames.Poisoned() {
		return nil, errors.New("Poisoned")
	}
	if s.ops == nil || fault == "reuse" {
		ops, err := transport.NewSupervisedOperationTransport(s.auth.Manifest(), s.proc.HostAuthenticator(), s.ch, s.proc)
		if err != nil {
			return nil, err
		}
		s.ops = ops
		_ = s.ops.SetDeadline(s.deadline)
	}
	return s.ops, nil
}
