package model_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/journal"
	"github.com/splashv5/conform/impl/profile"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/worker"
	"github.com/splashv5/conform/impl/worker/workertest"
	"github.com/splashv5/conform/model"
	"pgregory.net/rapid"
)

const (
	sessScope   = "tenant-a"
	sessSession = "session-1"
)

// sessStore is a journal persister with injected faults: "error" fails and writes nothing,
// "stale" writes nothing and returns the expected revision.
type sessStore struct {
	durable  *journal.Journal
	revision uint64
	calls    int
	faults   []string
}

func (s *sessStore) Persist(_ context.Context, j *journal.Journal, expected uint64, _ worker.Lease) (uint64, error) {
	s.calls++
	fault := ""
	if len(s.faults) > 0 {
		fault, s.faults = s.faults[0], s.faults[1:]
	}
	switch fault {
	case model.SessionPersistError:
		return 0, errors.New("injected store failure")
	case model.SessionPersistStale:
		return expected, nil
	}
	if expected != s.revision {
		return 0, errors.New("revision conflict")
	}
	s.durable, s.revision = j.Clone(), s.revision+1
	return s.revision, nil
}

// sessImpl is the implementation under test: a worker session over the profile adapters.
type sessImpl struct {
	grants  []protocol.CapabilityGrant
	store   *sessStore
	effects *profile.EffectLog
	host    *workertest.Host
	session *worker.Session
	leases  uint64
	// reconciliation budgets
	perTool, perSession uint32
}

func (w *sessImpl) restart(t *rapid.T) {
	if w.host != nil {
		w.host.Close()
	}
	host, err := workertest.NewHost(sessSession)
	if err != nil {
		t.Fatal(err)
	}
	auth, err := host.WorkerAuthenticator(canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	reg := worker.NewRegistry()
	if err := profile.Register(reg, profile.Options{Effects: w.effects}); err != nil {
		t.Fatal(err)
	}
	limits, _ := worker.NewLimits(w.perTool, w.perSession)
	w.leases++
	lease := w.leases
	s, err := worker.Open(context.Background(), auth, host.Seal(host.OpenSession(w.grants...)), worker.Config{
		Journal: w.store.durable.Clone(), Revision: w.store.revision, Registry: reg, Limits: limits,
		Admission: worker.AdmissionFunc(func(context.Context, protocol.CapabilityManifest, string) (uint64, error) { return lease, nil }),
	})
	if err != nil {
		t.Fatal(err)
	}
	w.host, w.session = host, s
}

func sessGrants() ([]protocol.CapabilityGrant, []model.Grant) {
	mk := func(tool string, format protocol.EnvelopeFormat, calls, in, out, comps uint32) protocol.CapabilityGrant {
		g := workertest.Grant(tool, format, calls, comps)
		g.MaxInputBytes, g.MaxOutputBytes = in, out
		return g
	}
	real := []protocol.CapabilityGrant{
		mk(model.SessionToolEcho, protocol.FormatText, 8, 48, 24, 0),
		mk(model.SessionToolFail, protocol.FormatText, 3, 48, 24, 0),
		mk(model.SessionToolUndeclared, protocol.FormatText, 2, 48, 24, 0),
		mk(model.SessionToolRecord, protocol.FormatJSON, 40, 16384, 70, 3),
	}
	var abstract []model.Grant
	for _, g := range real {
		fp, err := g.CompensationFingerprint()
		if err != nil {
			panic(err)
		}
		abstract = append(abstract, model.Grant{Tool: g.Tool, Format: g.Format.String(), MaxCalls: g.MaxCalls,
			MaxInput: int(g.MaxInputBytes), MaxOutput: int(g.MaxOutputBytes), MaxCompensations: g.MaxCompensations, Fingerprint: fp})
	}
	return real, abstract
}

// sessMessage builds the real message of an abstract frame.
func sessMessage(h *workertest.Host, f model.SessionFrame, formats map[string]protocol.EnvelopeFormat) protocol.Message {
	input := protocol.TextPayload(f.Text)
	if formats[f.Tool] == protocol.FormatJSON {
		input = workertest.Record(f.Mode, f.Value)
	}
	switch f.Kind {
	case model.SessionInvoke:
		return h.Invoke(f.RequestID, f.Tool, input)
	case model.SessionDispatch:
		return h.Dispatch(f.RequestID, f.Tool, f.OperationKey, input)
	case model.SessionReconcile:
		return h.Reconcile(f.RequestID, f.Tool, f.OperationKey)
	case model.SessionCompensate:
		return h.CompensateWithFingerprint(f.RequestID, f.Tool, f.OperationKey, f.CompensationKey, f.TenantScope, f.GrantFingerprint, input)
	}
	// Messages a worker never accepts from a host: results arriving out of turn, a cancel, a
	// second open, a close.
	status := protocol.Succeeded(workertest.JSON(`{"operation_key":"` + f.OperationKey + `","value":1}`))
	switch f.Message {
	case "result":
		return protocol.ResultMessage{Result: protocol.ToolResult{ProtocolVersion: protocol.ProtocolVersion,
			SessionID: h.SessionID, RequestID: f.RequestID, Payload: input}}
	case "operation_result":
		return protocol.OperationResultMessage{Result: protocol.OperationReconcileResult{ProtocolVersion: protocol.ProtocolVersion,
			SessionID: h.SessionID, RequestID: f.RequestID, Tool: f.Tool, OperationKey: f.OperationKey, Status: status}}
	case "reconciled_operation":
		return protocol.ReconciledOperationMessage{Result: protocol.OperationReconcileResult{ProtocolVersion: protocol.ProtocolVersion,
			SessionID: h.SessionID, RequestID: f.RequestID, Tool: f.Tool, OperationKey: f.OperationKey, Status: status}}
	case "cancel":
		return h.Cancel("x"+f.RequestID, f.RequestID, f.Tool)
	case "open_session":
		return h.OpenSession()
	}
	return h.CloseSession()
}

// sessErrorName names an implementation error as the model does.
func sessErrorName(err error) (name, cause string) {
	var we *worker.Error
	if !errors.As(err, &we) {
		return "untyped: " + err.Error(), ""
	}
	switch we.Kind {
	case worker.ErrProtocol:
		k, _ := protocol.KindOf(we.Err)
		return k.String(), ""
	case worker.ErrIndeterminateOperation, worker.ErrIndeterminateCompensation:
		var inner *worker.Error
		switch {
		case errors.As(we.Err, &inner) && inner.Kind == worker.ErrProtocol:
			k, _ := protocol.KindOf(inner.Err)
			cause = k.String()
		case errors.As(we.Err, &inner):
			cause = inner.Kind.String()
		default:
			cause = "Adapter"
		}
		return we.Kind.String(), cause
	}
	return we.Kind.String(), ""
}

func sessStatus(s model.Status) string {
	switch s.State {
	case "succeeded":
		return "succeeded json:" + s.Payload.Value
	case "failed":
		return "failed " + s.Message
	}
	return s.State
}

func sessReply(o model.SessionOutcome) string {
	if o.Reply == "result" {
		return "result text:" + o.Result.Value
	}
	return o.Reply + " " + sessStatus(o.Status)
}

func sessModelState(s model.JournalState) string {
	switch s.State {
	case "succeeded":
		return "succeeded:" + s.Payload.Value
	case "failed":
		return "failed:" + s.Message
	}
	return s.State
}

func sessImplState(s protocol.OperationStatus) string {
	switch s.State {
	case protocol.StateSucceeded:
		return "succeeded:" + string(s.Payload.JSON.JSON())
	case protocol.StateFailed:
		return "failed:" + s.Message
	}
	return s.State.WireName()
}

func sessDescribeModel(j *model.Journal) string {
	var b strings.Builder
	for _, r := range j.Records {
		fmt.Fprintf(&b, "%s %s %s", r.Key, r.Tool, sessModelState(r.State))
		if c := r.Compensation; c != nil {
			fmt.Fprintf(&b, " +%s %s", c.Key, sessModelState(c.State))
		}
		b.WriteString("; ")
	}
	return b.String()
}

func sessDescribeImpl(j *journal.Journal) string {
	var b strings.Builder
	for _, r := range j.Records() {
		fmt.Fprintf(&b, "%s %s %s", r.OperationKey, r.Tool, sessImplState(r.State))
		if c := r.Compensation; c != nil {
			fmt.Fprintf(&b, " +%s %s", c.CompensationKey, sessImplState(c.State))
		}
		b.WriteString("; ")
	}
	return b.String()
}

func sessDraw(t *rapid.T, fresh *int, grants []model.Grant) model.SessionStep {
	if r := rapid.IntRange(0, 99).Draw(t, "restart"); r >= 50 && r < 55 {
		return model.SessionStep{Restart: true}
	}
	kind := rapid.SampledFrom([]string{model.SessionInvoke, model.SessionDispatch, model.SessionDispatch,
		model.SessionDispatch, model.SessionReconcile, model.SessionReconcile, model.SessionCompensate,
		model.SessionCompensate}).Draw(t, "kind")
	// rapid favours the ends of a range, so rare events use values in the middle.
	if rapid.IntRange(0, 29).Draw(t, "other") == 15 {
		kind = model.SessionOther
	}
	tool := model.SessionToolRecord
	if kind == model.SessionInvoke || rapid.IntRange(0, 5).Draw(t, "other tool") == 0 {
		tool = rapid.SampledFrom([]string{model.SessionToolEcho, model.SessionToolEcho, model.SessionToolFail,
			model.SessionToolUndeclared, model.SessionToolRecord, "conf.json.echo"}).Draw(t, "tool")
	}
	f := model.SessionFrame{Kind: kind, Tool: tool}
	if kind == model.SessionOther {
		f.Message = rapid.SampledFrom([]string{"result", "operation_result", "reconciled_operation", "cancel",
			"open_session", "close_session"}).Draw(t, "message")
	}
	if rapid.IntRange(0, 3).Draw(t, "reuse id") == 0 {
		f.RequestID = "r" + strconv.Itoa(rapid.IntRange(0, 3).Draw(t, "id"))
	} else {
		*fresh++
		f.RequestID = "n" + strconv.Itoa(*fresh)
	}
	key := rapid.IntRange(0, 3).Draw(t, "key")
	f.OperationKey = "op-" + strconv.Itoa(key)
	f.CompensationKey = "cmp-" + strconv.Itoa(rapid.IntRange(0, 1).Draw(t, "cmp"))
	// Mostly the key's usual input, so that duplicates are exact; sometimes drift.
	f.Mode = []string{"succeed", "running", "succeed", "indeterminate"}[key]
	f.Value = `"v` + strconv.Itoa(key) + `"`
	if rapid.IntRange(0, 3).Draw(t, "drift") == 2 {
		f.Mode = rapid.SampledFrom([]string{"succeed", "running", "fail", "indeterminate", "error"}).Draw(t, "mode")
		// Up to 40 bytes: the success payload of a long value exceeds the 70-byte output limit.
		f.Value = `"` + strings.Repeat("v", rapid.SampledFrom([]int{0, 1, 2, 40}).Draw(t, "value")) + `"`
	}
	f.Text = strings.Repeat("t", rapid.SampledFrom([]int{0, 5, 30, 50}).Draw(t, "text"))
	f.TenantScope = sessScope
	if rapid.IntRange(0, 19).Draw(t, "tenant drift") == 10 {
		f.TenantScope = "tenant-b"
	}
	f.GrantFingerprint = grants[3].Fingerprint
	if rapid.IntRange(0, 19).Draw(t, "grant drift") == 10 {
		f.GrantFingerprint = strings.Repeat("ab", 32)
	}
	switch rapid.IntRange(0, 49).Draw(t, "auth") {
	case 24:
		f.Auth = model.SessionAuthBadTag
	case 25:
		f.Auth = model.SessionAuthSequence
	}
	var faults []string
	for i := 0; i < 2; i++ {
		fault := ""
		switch rapid.IntRange(0, 39).Draw(t, "fault") {
		case 20:
			fault = model.SessionPersistError
		case 21:
			fault = model.SessionPersistStale
		}
		faults = append(faults, fault)
	}
	return model.SessionStep{Frame: f, Faults: faults}
}

// The session model and the worker session agree on every answer, error, persist, effect,
// in-memory and durable journal, and poisoning, over random frames with duplicates, input and
// tenant drift, bad tags and sequences, persistence faults and restarts.
//
// Spec: WRK-020, WRK-021, WRK-022, WRK-023, WRK-030, WRK-040, WRK-041, WRK-042, WRK-043, WRK-044
// Spec: WRK-045, WRK-046, WRK-050, WRK-051, WRK-052, WRK-060, WRK-061, WRK-062, WRK-070, WRK-071
// Spec: WRK-072, WRK-073, PRF-013, PRF-014
func TestSessionMatchesModel(t *testing.T) {
	if os.Getenv("SPLASH_SOAK") != "" {
		f := flag.Lookup("rapid.checks")
		old := f.Value.String()
		_ = f.Value.Set("3000")
		defer func() { _ = f.Value.Set(old) }()
	}
	rapid.Check(t, func(t *rapid.T) {
		grants, abstract := sessGrants()
		formats := map[string]protocol.EnvelopeFormat{}
		for _, g := range grants {
			formats[g.Tool] = g.Format
		}
		empty, _ := journal.New(sessScope)
		perTool := rapid.IntRange(1, 4).Draw(t, "per-tool budget")
		perSession := rapid.IntRange(1, 5).Draw(t, "per-session budget")
		impl := &sessImpl{grants: grants, store: &sessStore{durable: empty}, effects: profile.NewEffectLog(nil, nil),
			perTool: uint32(perTool), perSession: uint32(perSession)}
		impl.restart(t)
		defer impl.host.Close()
		m := model.NewSessionModel(sessSession, sessScope, abstract, model.SessionLimits{PerTool: perTool, PerSession: perSession})
		fresh := 0
		steps := rapid.IntRange(1, 80).Draw(t, "steps")
		for i := 0; i < steps; i++ {
			step := sessDraw(t, &fresh, abstract)
			want := m.Step(step)
			if step.Restart {
				impl.restart(t)
				continue
			}
			msg := sessMessage(impl.host, step.Frame, formats)
			var line []byte
			switch step.Frame.Auth {
			case model.SessionAuthBadTag:
				line = impl.host.Tampered(msg)
			case model.SessionAuthSequence:
				line = impl.host.SealAt(impl.host.NextSequence()+1, msg)
			default:
				line = impl.host.SealAt(impl.host.NextSequence(), msg)
			}
			impl.store.faults = append([]string(nil), step.Faults...)
			persists := impl.store.calls
			answer, err := impl.session.Handle(context.Background(), line, impl.store)
			if want.Consumed {
				// Keep the host's sequence in step with what the worker consumed.
				impl.host.Seal(msg)
			}
			label := fmt.Sprintf("step %d %+v", i, step.Frame)
			if want.Err != "" {
				if err == nil {
					t.Fatalf("%s: answered %s, model says %s (%s)", label, impl.host.MustOpen(answer), want.Err, want.Cause)
				}
				name, cause := sessErrorName(err)
				if name != want.Err || cause != want.Cause {
					t.Fatalf("%s: error %s (%s) [%v], model says %s (%s)", label, name, cause, err, want.Err, want.Cause)
				}
				if answer != nil {
					t.Fatalf("%s: an error came with an answer", label)
				}
			} else {
				if err != nil {
					t.Fatalf("%s: error %v, model answers %s", label, err, sessReply(want))
				}
				if got := impl.host.MustOpen(answer); got != sessReply(want) {
					t.Fatalf("%s: answer %s, model answers %s", label, got, sessReply(want))
				}
			}
			if got := impl.store.calls - persists; got != want.Persists {
				t.Fatalf("%s: %d persists, model %d", label, got, want.Persists)
			}
			if impl.session.Poisoned() != m.Poisoned() {
				t.Fatalf("%s: poisoned %v, model %v", label, impl.session.Poisoned(), m.Poisoned())
			}
			if got, w := sessDescribeImpl(impl.session.Journal()), sessDescribeModel(m.Journal()); got != w {
				t.Fatalf("%s: journal\n  %s\nmodel\n  %s", label, got, w)
			}
			if got, w := sessDescribeImpl(impl.store.durable), sessDescribeModel(m.Durable()); got != w {
				t.Fatalf("%s: durable journal\n  %s\nmodel\n  %s", label, got, w)
			}
			if impl.store.revision != m.Revision() {
				t.Fatalf("%s: revision %d, model %d", label, impl.store.revision, m.Revision())
			}
			for k := 0; k < 5; k++ {
				key := "op-" + strconv.Itoa(k)
				if got, w := sessEffectsFor(impl.effects, profile.KindEffect, key), m.Effects(model.SessionToolRecord, key); got != w {
					t.Fatalf("%s: %d effects for %s, model %d", label, got, key, w)
				}
				if got, w := sessEffectsFor(impl.effects, profile.KindCompensation, key), m.CompensationEffects(model.SessionToolRecord, key); got != w {
					t.Fatalf("%s: %d compensations for %s, model %d", label, got, key, w)
				}
			}
		}
	})
}

func sessEffectsFor(l *profile.EffectLog, kind profile.EffectKind, key string) int {
	n := 0
	for _, line := range l.Lines() {
		if line.Kind == kind && line.OperationKey == key {
			n++
		}
	}
	return n
}
