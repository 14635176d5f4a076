//go:build splashfaults

package worker_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/storage"
	"github.com/splashv5/conform/impl/worker"
	"github.com/splashv5/conform/impl/worker/workertest"
)

// Every test here runs a scenario twice where that helps: without the fault, where the
// runtime refuses, and with it, where the deliberate bug shows.

func TestFaultRegistry(t *testing.T) {
	infos := worker.FaultInfos()
	// Every fault constant has its catalog entry: the constants run from 1 without a gap.
	if len(infos) == 0 || worker.Fault(len(infos)).String() == "fault?" || worker.Fault(len(infos)+1).String() != "fault?" {
		t.Fatalf("the catalog has %d entries for the fault constants", len(infos))
	}
	seen := map[string]bool{}
	for i, info := range infos {
		if info.Fault != worker.Fault(i+1) {
			t.Errorf("fault %d is listed at position %d", info.Fault, i+1)
		}
		if info.Name != info.Fault.String() || seen[info.Name] || info.Description == "" || strings.ContainsAny(info.Name, " \t,") {
			t.Errorf("bad entry %+v", info)
		}
		seen[info.Name] = true
		if f, ok := worker.ParseFault(info.Name); !ok || f != info.Fault {
			t.Errorf("ParseFault(%q) = %v, %v", info.Name, f, ok)
		}
	}
	if _, ok := worker.ParseFault("pause-after-admission"); ok {
		t.Error("a crash point parsed as a fault")
	}
	var set worker.FaultSet
	if set.Has(worker.FaultLeakKey) || set.String() != "" {
		t.Fatal("the zero set is not empty")
	}
	set = set.With(worker.FaultLeakKey).With(worker.FaultCancelInBaseline)
	if !set.Has(worker.FaultLeakKey) || !set.Has(worker.FaultCancelInBaseline) || set.Has(worker.FaultAcceptReplay) ||
		set.String() != "leak-key,cancel-in-baseline" || !set.Any(worker.FaultAcceptReplay, worker.FaultLeakKey) {
		t.Fatalf("set %q", set)
	}
	var none *worker.Faults
	if none.Has(worker.FaultLeakKey) || none.NeedsSessionKey() || (&worker.Faults{}).NeedsSessionKey() {
		t.Fatal("a nil or zero Faults enables something")
	}
	rule := regexp.MustCompile(`^[A-Z]+-[0-9]{3}$`)
	check := regexp.MustCompile(`^CNF-[A-Z]+-[0-9]{2}$`)
	for _, info := range infos {
		if !rule.MatchString(info.Rule) || len(info.Checks) == 0 {
			t.Errorf("%s: rule %q, checks %v: want a requirement ID and at least one check", info.Name, info.Rule, info.Checks)
		}
		for _, id := range info.Checks {
			if !check.MatchString(id) {
				t.Errorf("%s: check %q is not a check ID", info.Name, id)
			}
		}
	}
}

// A zero Faults behaves exactly like nil: the same script gets the same answers and errors.
func TestZeroFaultsChangeNothing(t *testing.T) {
	script := func(r *rig) []string {
		h := r.host
		var out []string
		for _, m := range []protocol.Message{
			h.Invoke("r1", echo, text("x")),
			h.Dispatch("d1", record, "op-1", workertest.Record("succeed", "1")),
			h.Dispatch("d2", record, "op-1", workertest.Record("succeed", "1")),
			h.Reconcile("q1", record, "op-1"),
			h.Invoke("r1", echo, text("again")),
			h.Invoke("r2", undeclared, text("x")),
		} {
			got, err := r.send(m)
			if err != nil {
				got = "error " + err.Error()
			}
			out = append(out, got)
		}
		return out
	}
	grants := []protocol.CapabilityGrant{profileGrant(echo, 5, 0), profileGrant(record, 5, 0), profileGrant(undeclared, 1, 0)}
	plain := newRig(t, rigOptions{grants: grants})
	zero := newRig(t, rigOptions{grants: grants, configure: func(cfg worker.Config, _ *workertest.Host) worker.Config {
		return worker.WithFaults(cfg, &worker.Faults{})
	}})
	a, b := script(plain), script(zero)
	if strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Fatalf("nil Faults:\n%s\nzero Faults:\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
	if !strings.Contains(a[4], "DuplicateRequest") || !strings.Contains(a[5], "InvocationSafetyNotDeclared") {
		t.Fatalf("the script did not reach its refusals: %q", a)
	}
}

// handleLine hands a raw frame line to the rig's session.
func (r *rig) handleLine(line []byte) (string, error) {
	r.t.Helper()
	answer, err := r.session.Handle(context.Background(), line, r.store)
	if err != nil {
		return "", err
	}
	return r.host.MustOpen(answer), nil
}

// wantStage asserts a protocol error raised at stage st with protocol kind pk.
func wantStage(t *testing.T, err error, st worker.Stage, pk protocol.ErrorKind) {
	t.Helper()
	var we *worker.Error
	if !errors.As(err, &we) || we.Kind != worker.ErrProtocol || we.Stage != st || !errors.Is(err, pk) {
		t.Fatalf("error %v, want %v at stage %v", err, pk, st)
	}
}

func faultRig(t *testing.T, fault worker.Fault, grants ...protocol.CapabilityGrant) *rig {
	t.Helper()
	return newRig(t, rigOptions{grants: grants, configure: faulty(t, nonZero(fault)...)})
}

// Spec: WRK-021
func TestFaultAcceptReplay(t *testing.T) {
	for _, fault := range []worker.Fault{0, worker.FaultAcceptReplay} {
		r := faultRig(t, fault, profileGrant(echo, 5, 0))
		gap := r.host.SealAt(5, r.host.Invoke("r1", echo, text("gap")))
		got, err := r.handleLine(gap)
		if fault == 0 {
			wantStage(t, err, worker.StageOpen, protocol.ErrUnexpectedSequence)
			continue
		}
		if err != nil || got != "result text:gap" {
			t.Fatalf("gap: %q %v", got, err)
		}
		// A replay of the same frame is opened again; the authorizer refuses its request id.
		_, err = r.handleLine(gap)
		wantStage(t, err, worker.StageAuthorize, protocol.ErrDuplicateRequest)
		// The tag is still checked.
		_, err = r.handleLine(r.host.Tampered(r.host.Invoke("r2", echo, text("x"))))
		wantStage(t, err, worker.StageOpen, protocol.ErrInvalidAuthenticationTag)
	}
}

// Spec: WRK-021
func TestFaultSkipTagCheck(t *testing.T) {
	for _, fault := range []worker.Fault{0, worker.FaultSkipTagCheck} {
		r := faultRig(t, fault, profileGrant(echo, 5, 0))
		got, err := r.handleLine(r.host.Tampered(r.host.Invoke("r1", echo, text("forged"))))
		if fault == 0 {
			wantStage(t, err, worker.StageOpen, protocol.ErrInvalidAuthenticationTag)
			continue
		}
		if err != nil || got != "result text:forged" {
			t.Fatalf("tampered: %q %v", got, err)
		}
		// The sequence is still checked: the tampered frame consumed sequence 2.
		_, err = r.handleLine(r.host.SealAt(2, r.host.Invoke("r2", echo, text("x"))))
		wantStage(t, err, worker.StageOpen, protocol.ErrUnexpectedSequence)
	}
}

// Spec: WRK-021
func TestFaultAcceptReflectedRole(t *testing.T) {
	for _, fault := range []worker.Fault{0, worker.FaultAcceptReflectedRole} {
		r := faultRig(t, fault, profileGrant(echo, 5, 0))
		m := r.host.Invoke("r1", echo, text("reflected"))
		tag, err := protocol.ComputeTag(hostKey(t, r.host), r.host.SessionID, protocol.RoleWorker, 2, m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.handleLine(protocol.Frame{Sequence: 2, Message: m, Tag: tag}.AppendJSON(nil))
		if fault == 0 {
			wantStage(t, err, worker.StageOpen, protocol.ErrInvalidAuthenticationTag)
			continue
		}
		if err != nil || got != "result text:reflected" {
			t.Fatalf("worker-tagged frame: %q %v", got, err)
		}
		// Other bad tags are still refused.
		r.host.Seal(m) // keep the host at sequence 3
		_, err = r.handleLine(r.host.Tampered(r.host.Invoke("r2", echo, text("x"))))
		wantStage(t, err, worker.StageOpen, protocol.ErrInvalidAuthenticationTag)
	}
}

// Spec: WRK-021
func TestFaultSkipSessionCheck(t *testing.T) {
	for _, fault := range []worker.Fault{0, worker.FaultSkipSessionCheck} {
		r := faultRig(t, fault, profileGrant(echo, 5, 0))
		inv := r.host.Invoke("r1", echo, text("x")).(protocol.InvokeMessage)
		inv.Invocation.SessionID = "other-session"
		_, err := r.handleLine(r.host.Seal(inv))
		if fault == 0 {
			wantStage(t, err, worker.StageOpen, protocol.ErrUnknownSession)
			continue
		}
		// The frame is opened; only the authorizer's own session check stops it.
		wantStage(t, err, worker.StageAuthorize, protocol.ErrUnknownSession)
	}
}

// Spec: WRK-011, WRK-021
func TestFaultAcceptVersion4(t *testing.T) {
	for _, fault := range []worker.Fault{0, worker.FaultAcceptVersion4} {
		host, err := workertest.NewHost("session-1")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(host.Close)
		auth, err := host.WorkerAuthenticator(canonjson.Preserve)
		if err != nil {
			t.Fatal(err)
		}
		reg := worker.NewRegistry()
		if err := reg.Register(echo, &scripted{safety: worker.ReadOnly, invoke: func(inv protocol.ToolInvocation) (protocol.ToolPayload, error) {
			return inv.Payload, nil
		}}); err != nil {
			t.Fatal(err)
		}
		open := host.OpenSession(profileGrant(echo, 5, 0)).(protocol.OpenSessionMessage)
		open.Manifest.ProtocolVersion = 4
		s, err := worker.Open(context.Background(), auth, host.Seal(open), worker.WithFaults(worker.Config{
			Journal: newMemStore(t).durable, Registry: reg,
			Admission: worker.AdmissionFunc(func(context.Context, protocol.CapabilityManifest, string) (uint64, error) { return 1, nil }),
		}, faultsFor(t, host, nonZero(fault)...)))
		if fault == 0 {
			wantStage(t, err, worker.StageOpen, protocol.ErrUnsupportedVersion)
			continue
		}
		if err != nil {
			t.Fatalf("version-4 manifest: %v", err)
		}
		inv := host.Invoke("r1", echo, text("v4")).(protocol.InvokeMessage)
		inv.Invocation.ProtocolVersion = 4
		answer, err := s.Handle(context.Background(), host.Seal(inv), nil)
		if err != nil || host.MustOpen(answer) != "result text:v4" {
			t.Fatalf("version-4 invoke: %q %v", answer, err)
		}
		// Version 3 is still refused, and so is a version-4 frame with a bad tag.
		inv.Invocation.ProtocolVersion = 3
		_, err = s.Handle(context.Background(), host.Seal(inv), nil)
		if !errors.Is(err, protocol.ErrUnsupportedVersion) {
			t.Fatalf("version 3: %v", err)
		}
		inv.Invocation.ProtocolVersion = 4
		_, err = s.Handle(context.Background(), host.Tampered(inv), nil)
		if !errors.Is(err, protocol.ErrInvalidAuthenticationTag) {
			t.Fatalf("tampered version 4: %v", err)
		}
	}
}

// Spec: WRK-023
func TestFaultReuseOutgoingSequence(t *testing.T) {
	r := faultRig(t, worker.FaultReuseOutgoingSequence, profileGrant(echo, 5, 0))
	for i, s := range []string{"a", "b"} {
		answer, err := r.session.Handle(context.Background(), r.host.Seal(r.host.Invoke("r"+s, echo, text(s))), r.store)
		if err != nil {
			t.Fatal(err)
		}
		f, err := protocol.DecodeFrame(answer, canonjson.Preserve)
		if err != nil || f.Sequence != 1 {
			t.Fatalf("answer %d at sequence %d (%v), want 1", i+1, f.Sequence, err)
		}
		got := r.host.MustOpen(answer)
		if i == 0 && got != "result text:a" {
			t.Fatalf("first answer %q", got)
		}
		if i == 1 && !strings.Contains(got, "UnexpectedSequence") {
			t.Fatalf("the host opened a second answer at sequence 1: %q", got)
		}
	}
}

// Spec: WRK-030
func TestFaultIgnoreInputLimit(t *testing.T) {
	small := profileGrant(echo, 5, 0)
	small.MaxInputBytes = 4
	durable := profileGrant(record, 5, 0)
	durable.MaxInputBytes = 8
	for _, fault := range []worker.Fault{0, worker.FaultIgnoreInputLimit} {
		r := faultRig(t, fault, small, durable)
		got, err := r.send(r.host.Invoke("r1", echo, text("12345")))
		if fault == 0 {
			wantStage(t, err, worker.StageAuthorize, protocol.ErrInputTooLarge)
			continue
		}
		if err != nil || got != "result text:12345" {
			t.Fatalf("over-long input: %q %v", got, err)
		}
		in := workertest.Record("succeed", `"long value"`)
		r.want(r.host.Dispatch("d1", record, "op-1", in), `operation_result succeeded json:{"operation_key":"op-1","value":"long value"}`)
		rec, _ := r.session.Journal().Operation("op-1")
		if fp, _ := protocol.OperationInputFingerprint(in); rec.InputFingerprint != fp {
			t.Fatal("the journal did not record the input as sent")
		}
		// The other checks still run: the request id was reserved.
		r.fail(r.host.Invoke("r1", echo, text("1")), worker.ErrProtocol, protocol.ErrDuplicateRequest)
	}
}

// Spec: WRK-030, WRK-040
func TestFaultIgnoreCallBudget(t *testing.T) {
	for _, fault := range []worker.Fault{0, worker.FaultIgnoreCallBudget} {
		r := faultRig(t, fault, profileGrant(echo, 1, 0), profileGrant(record, 1, 0))
		r.want(r.host.Invoke("r1", echo, text("1")), "result text:1")
		got, err := r.send(r.host.Invoke("r2", echo, text("2")))
		if fault == 0 {
			wantStage(t, err, worker.StageAuthorize, protocol.ErrCallBudgetExhausted)
			continue
		}
		if err != nil || got != "result text:2" {
			t.Fatalf("second call under max_calls 1: %q %v", got, err)
		}
		r.want(r.host.Dispatch("d1", record, "op-1", workertest.Record("fail", "1")), "operation_result failed "+absence)
		r.want(r.host.Dispatch("d2", record, "op-2", workertest.Record("fail", "2")), "operation_result failed "+absence)
		// Request ids of calls beyond the budget are still reserved.
		r.fail(r.host.Invoke("r2", echo, text("3")), worker.ErrProtocol, protocol.ErrDuplicateRequest)
		r.fail(r.host.Invoke("d2", echo, text("3")), worker.ErrProtocol, protocol.ErrDuplicateRequest)
	}
}

// Spec: WRK-030, WRK-040
func TestFaultForgetRequestID(t *testing.T) {
	for _, fault := range []worker.Fault{0, worker.FaultForgetRequestID} {
		r := faultRig(t, fault, profileGrant(echo, 3, 0), profileGrant(record, 3, 0))
		r.want(r.host.Invoke("same", echo, text("1")), "result text:1")
		got, err := r.send(r.host.Invoke("same", echo, text("2")))
		if fault == 0 {
			wantStage(t, err, worker.StageAuthorize, protocol.ErrDuplicateRequest)
			continue
		}
		if err != nil || got != "result text:2" {
			t.Fatalf("reused request id: %q %v", got, err)
		}
		r.want(r.host.Dispatch("same", record, "op-1", workertest.Record("fail", "1")), "operation_result failed "+absence)
		r.want(r.host.Reconcile("same", record, "op-1"), "reconciled_operation failed "+absence)
		// The call budget still counts every call: the fourth is refused.
		r.want(r.host.Invoke("same", echo, text("3")), "result text:3")
		r.fail(r.host.Invoke("same", echo, text("4")), worker.ErrProtocol, protocol.ErrCallBudgetExhausted)
	}
}

// Spec: WRK-030
func TestFaultIgnoreGrant(t *testing.T) {
	for _, fault := range []worker.Fault{0, worker.FaultIgnoreGrant} {
		r := faultRig(t, fault, profileGrant(echo, 1, 0))
		got, err := r.send(r.host.Invoke("r1", jsonEcho, workertest.JSON(`{"a":1}`)))
		if fault == 0 {
			wantStage(t, err, worker.StageAuthorize, protocol.ErrUnknownTool)
			continue
		}
		if err != nil || got != `result json:{"a":1}` {
			t.Fatalf("ungranted tool: %q %v", got, err)
		}
		// A tool without an adapter still fails, and request ids stay unique.
		r.fail(r.host.Invoke("r2", "conf.not.registered", text("x")), worker.ErrMissingAdapter, noProtocol)
		r.fail(r.host.Invoke("r1", jsonEcho, workertest.JSON(`{}`)), worker.ErrProtocol, protocol.ErrDuplicateRequest)
	}
}

// Spec: WRK-030
func TestFaultAcceptScalarJSON(t *testing.T) {
	object := func(protocol.ToolInvocation) (protocol.ToolPayload, error) {
		return workertest.JSON(`{"ok":true}`), nil
	}
	for _, fault := range []worker.Fault{0, worker.FaultAcceptScalarJSON} {
		r := newRig(t, rigOptions{
			grants: []protocol.CapabilityGrant{profileGrant(jsonEcho, 5, 0), workertest.Grant("t.json", protocol.FormatJSON, 5, 0)},
			register: func(reg *worker.Registry) {
				_ = reg.Register("t.json", &scripted{safety: worker.ReadOnly, invoke: object})
			},
			configure: faulty(t, nonZero(fault)...),
		})
		deep := workertest.JSON(strings.Repeat("[", 33) + strings.Repeat("]", 33))
		got, err := r.send(r.host.Invoke("r1", "t.json", deep))
		if fault == 0 {
			wantStage(t, err, worker.StageAuthorize, protocol.ErrJsonPayloadTooDeep)
			continue
		}
		if err != nil || got != `result json:{"ok":true}` {
			t.Fatalf("33 levels: %q %v", got, err)
		}
		r.want(r.host.Invoke("r2", "t.json", workertest.JSON(`5`)), `result json:{"ok":true}`)
		// The echo of a scalar reaches the adapter and is refused as output.
		_, err = r.send(r.host.Invoke("r3", jsonEcho, workertest.JSON(`"s"`)))
		wantStage(t, err, worker.StageResult, protocol.ErrInvalidJsonEnvelope)
	}
}

func nonZero(f worker.Fault) []worker.Fault {
	if f == 0 {
		return nil
	}
	return []worker.Fault{f}
}

// Spec: WRK-030
func TestFaultLimitOffByOne(t *testing.T) {
	in := profileGrant(echo, 5, 0)
	in.MaxInputBytes = 4
	out := profileGrant(jsonEcho, 5, 0)
	out.MaxOutputBytes = 7 // {"a":1} has 7 bytes
	for _, fault := range []worker.Fault{0, worker.FaultLimitOffByOne} {
		r := faultRig(t, fault, in, out)
		atInput, errIn := r.send(r.host.Invoke("r1", echo, text("1234")))
		atOutput, errOut := r.send(r.host.Invoke("r2", jsonEcho, workertest.JSON(`{"a":1}`)))
		if fault == 0 {
			if errIn != nil || errOut != nil || atInput != "result text:1234" || atOutput != `result json:{"a":1}` {
				t.Fatalf("sizes at the limit refused: %q %v, %q %v", atInput, errIn, atOutput, errOut)
			}
			continue
		}
		wantStage(t, errIn, worker.StageAuthorize, protocol.ErrInputTooLarge)
		wantStage(t, errOut, worker.StageResult, protocol.ErrOutputTooLarge)
		r.want(r.host.Invoke("r3", echo, text("123")), "result text:123")
	}
}

// Spec: WRK-030
func TestFaultSkipOutputValidation(t *testing.T) {
	small := profileGrant(echo, 5, 0)
	small.MaxOutputBytes = 4
	for _, fault := range []worker.Fault{0, worker.FaultSkipOutputValidation} {
		r := faultRig(t, fault, small)
		got, err := r.send(r.host.Invoke("r1", echo, text("12345")))
		if fault == 0 {
			wantStage(t, err, worker.StageResult, protocol.ErrOutputTooLarge)
			continue
		}
		if err != nil || got != "result text:12345" {
			t.Fatalf("over-long output: %q %v", got, err)
		}
		r.fail(r.host.Invoke("r1", echo, text("1")), worker.ErrProtocol, protocol.ErrDuplicateRequest)
	}
}

// Spec: WRK-030
func TestFaultUndeclaredSafetyOK(t *testing.T) {
	for _, fault := range []worker.Fault{0, worker.FaultUndeclaredSafetyOK} {
		r := faultRig(t, fault, profileGrant(undeclared, 5, 0))
		got, err := r.send(r.host.Invoke("r1", undeclared, text("x")))
		if fault == 0 {
			if !errors.Is(err, worker.ErrInvocationSafetyNotDeclared) {
				t.Fatalf("undeclared: %q %v", got, err)
			}
			continue
		}
		if err != nil || got != "result text:x" {
			t.Fatalf("undeclared: %q %v", got, err)
		}
	}
}

// Spec: WRK-041, WRK-051
func TestFaultRerunDuplicates(t *testing.T) {
	g := profileGrant(record, 5, 2)
	for _, fault := range []worker.Fault{0, worker.FaultRerunDuplicateDispatch, worker.FaultRerunDuplicateCompensation} {
		r := faultRig(t, fault, g)
		h := r.host
		want := `operation_result succeeded json:{"operation_key":"op-1","value":1}`
		r.want(h.Dispatch("d1", record, "op-1", workertest.Record("succeed", "1")), want)
		r.want(h.Dispatch("d2", record, "op-1", workertest.Record("succeed", "1")), want)
		cmp := `compensation_result succeeded json:{"compensation_key":"cmp-1","operation_key":"op-1","value":"u"}`
		r.want(h.Compensate("c1", record, "op-1", "cmp-1", scope, g, workertest.Record("succeed", `"u"`)), cmp)
		r.want(h.Compensate("c2", record, "op-1", "cmp-1", scope, g, workertest.Record("succeed", `"u"`)), cmp)
		effects, compensations := r.effectCount("effect"), r.effectCount("compensation")
		wantEffects, wantCompensations := 1, 1
		switch fault {
		case worker.FaultRerunDuplicateDispatch:
			wantEffects = 2
		case worker.FaultRerunDuplicateCompensation:
			wantCompensations = 2
		}
		if effects != wantEffects || compensations != wantCompensations {
			t.Fatalf("%v: %d effects and %d compensations, want %d and %d", fault, effects, compensations, wantEffects, wantCompensations)
		}
	}
}

// Spec: WRK-041, WRK-051
func TestFaultPendingAsSuccess(t *testing.T) {
	for _, fault := range []worker.Fault{0, worker.FaultPendingAsSuccess} {
		r := faultRig(t, fault, profileGrant(record, 5, 0))
		in := workertest.Record("indeterminate", "1")
		r.fail(r.host.Dispatch("d1", record, "op-1", in), worker.ErrIndeterminateOperation, noProtocol)
		got, err := r.send(r.host.Dispatch("d2", record, "op-1", in))
		if fault == 0 {
			if !errors.Is(err, worker.ErrPendingOperation) {
				t.Fatalf("pending duplicate: %q %v", got, err)
			}
			continue
		}
		if err != nil || got != "operation_result succeeded json:{}" {
			t.Fatalf("pending duplicate: %q %v", got, err)
		}
		if r.durableState("op-1") != "pending" {
			t.Fatal("the journal changed")
		}
	}
}

// Spec: WRK-042
func TestFaultPersistAfterEffect(t *testing.T) {
	for _, fault := range []worker.Fault{0, worker.FaultPersistAfterEffect} {
		r := faultRig(t, fault, profileGrant(record, 5, 0))
		r.store.faults = []string{"error"}
		r.fail(r.host.Dispatch("d1", record, "op-1", workertest.Record("succeed", "1")), worker.ErrJournal, noProtocol)
		want := 0
		if fault != 0 {
			want = 1
		}
		if got := r.effectCount("effect"); got != want || !r.session.Poisoned() || r.durableState("op-1") != "absent" {
			t.Fatalf("%v: %d effects (want %d), poisoned %v, durable %s", fault, got, want, r.session.Poisoned(), r.durableState("op-1"))
		}
	}
}

// Spec: WRK-061
func TestFaultNoReconcileBudget(t *testing.T) {
	limits, err := worker.NewLimits(1, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, fault := range []worker.Fault{0, worker.FaultNoReconcileBudget} {
		r := newRig(t, rigOptions{grants: []protocol.CapabilityGrant{profileGrant(record, 5, 0)}, limits: limits, configure: faulty(t, nonZero(fault)...)})
		r.want(r.host.Dispatch("d1", record, "op-1", workertest.Record("fail", "1")), "operation_result failed "+absence)
		r.want(r.host.Reconcile("q1", record, "op-1"), "reconciled_operation failed "+absence)
		got, err := r.send(r.host.Reconcile("q2", record, "op-1"))
		if fault == 0 {
			if !errors.Is(err, worker.ErrReconciliationSessionBudgetExhausted) {
				t.Fatalf("second reconciliation: %q %v", got, err)
			}
			continue
		}
		if err != nil || got != "reconciled_operation failed "+absence {
			t.Fatalf("second reconciliation: %q %v", got, err)
		}
	}
}

// sendMessage hands m to the session and returns the opened answer message.
func (r *rig) sendMessage(m protocol.Message) (protocol.Message, error) {
	r.t.Helper()
	answer, err := r.session.Handle(context.Background(), r.host.Seal(m), r.store)
	if err != nil {
		return nil, err
	}
	return r.host.Open(answer)
}

// compensateAs sends a compensation and checks that an answer repeats the request's binding.
func (r *rig) compensateAs(req protocol.CompensateOperationMessage) (string, error) {
	r.t.Helper()
	m, err := r.sendMessage(req)
	if err != nil {
		return "", err
	}
	res, ok := m.(protocol.CompensationResultMessage)
	if !ok || !res.Result.MatchesRequest(req.Request) {
		r.t.Fatalf("answer %s does not repeat the binding of %s", m.AppendJSON(nil), req.AppendJSON(nil))
	}
	return workertest.Describe(m), nil
}

// Spec: WRK-050, WRK-052
func TestFaultCompensationChecks(t *testing.T) {
	undo := workertest.Record("succeed", `"u"`)
	succeeded := `compensation_result succeeded json:{"compensation_key":"cmp-1","operation_key":"op-1","value":"u"}`
	cases := []struct {
		fault   worker.Fault
		grant   func() protocol.CapabilityGrant
		prepare func(r *rig, g protocol.CapabilityGrant)
		request func(r *rig, g protocol.CapabilityGrant) protocol.Message
		refusal protocol.ErrorKind
		stage   worker.Stage
	}{
		{worker.FaultNoCompensationBudget, func() protocol.CapabilityGrant { return profileGrant(record, 5, 0) }, nil,
			func(r *rig, g protocol.CapabilityGrant) protocol.Message {
				return r.host.Compensate("c1", record, "op-1", "cmp-1", scope, g, undo)
			}, protocol.ErrCompensationNotGranted, worker.StageAuthorize},
		{worker.FaultNoCompensationBudget, func() protocol.CapabilityGrant { return profileGrant(record, 5, 1) },
			func(r *rig, g protocol.CapabilityGrant) {
				r.want(r.host.Dispatch("d0", record, "op-0", workertest.Record("succeed", "0")), `operation_result succeeded json:{"operation_key":"op-0","value":0}`)
				if _, err := r.send(r.host.Compensate("c0", record, "op-0", "cmp-0", scope, g, undo)); err != nil {
					r.t.Fatal(err)
				}
			},
			func(r *rig, g protocol.CapabilityGrant) protocol.Message {
				return r.host.Compensate("c1", record, "op-1", "cmp-1", scope, g, undo)
			}, protocol.ErrCompensationBudgetExhausted, worker.StageAuthorize},
		{worker.FaultSkipFingerprintCheck, func() protocol.CapabilityGrant { return profileGrant(record, 5, 1) }, nil,
			func(r *rig, g protocol.CapabilityGrant) protocol.Message {
				other := g
				other.MaxCalls++
				return r.host.Compensate("c1", record, "op-1", "cmp-1", scope, other, undo)
			}, protocol.ErrCompensationGrantMismatch, worker.StageAuthorize},
		{worker.FaultSkipScopeCheck, func() protocol.CapabilityGrant { return profileGrant(record, 5, 1) }, nil,
			func(r *rig, g protocol.CapabilityGrant) protocol.Message {
				return r.host.Compensate("c1", record, "op-1", "cmp-1", "other-tenant", g, undo)
			}, protocol.ErrOperationJournalScopeMismatch, worker.StageJournal},
		// The dispatch input {"mode":"succeed","value":1} is 28 bytes and fits; the
		// compensation input {"mode":"succeed","value":"u"} is 30 bytes, one over the limit.
		{worker.FaultIgnoreInputLimit, func() protocol.CapabilityGrant {
			g := profileGrant(record, 5, 1)
			g.MaxInputBytes = 29
			return g
		}, nil,
			func(r *rig, g protocol.CapabilityGrant) protocol.Message {
				return r.host.Compensate("c1", record, "op-1", "cmp-1", scope, g, undo)
			}, protocol.ErrInputTooLarge, worker.StageAuthorize},
	}
	for _, tc := range cases {
		for _, fault := range []worker.Fault{0, tc.fault} {
			g := tc.grant()
			r := faultRig(t, fault, g)
			r.want(r.host.Dispatch("d1", record, "op-1", workertest.Record("succeed", "1")), `operation_result succeeded json:{"operation_key":"op-1","value":1}`)
			if tc.prepare != nil {
				tc.prepare(r, g)
			}
			req := tc.request(r, g)
			if fault == 0 {
				_, err := r.send(req)
				wantStage(t, err, tc.stage, tc.refusal)
				continue
			}
			got, err := r.compensateAs(req.(protocol.CompensateOperationMessage))
			if err != nil || got != succeeded {
				t.Fatalf("%v: %q %v", fault, got, err)
			}
			rec, _ := r.session.Journal().Operation("op-1")
			if rec.Compensation == nil || rec.Compensation.State.State != protocol.StateSucceeded {
				t.Fatalf("%v: journal record %+v", fault, rec)
			}
			// An exact duplicate is answered from the journal.
			dup := req.(protocol.CompensateOperationMessage)
			dup.Request.RequestID = "c-dup"
			if got, err := r.compensateAs(dup); err != nil || got != succeeded {
				t.Fatalf("%v duplicate: %q %v", fault, got, err)
			}
		}
	}
}

// Spec: WRK-050
func TestFaultAcceptSecondCompensationKey(t *testing.T) {
	g := profileGrant(record, 5, 3)
	for _, fault := range []worker.Fault{0, worker.FaultAcceptSecondCompensationKey} {
		r := faultRig(t, fault, g)
		h := r.host
		r.want(h.Dispatch("d1", record, "op-1", workertest.Record("succeed", "1")), `operation_result succeeded json:{"operation_key":"op-1","value":1}`)
		r.want(h.Compensate("c1", record, "op-1", "cmp-1", scope, g, workertest.Record("succeed", "1")),
			`compensation_result succeeded json:{"compensation_key":"cmp-1","operation_key":"op-1","value":1}`)
		second := h.Compensate("c2", record, "op-1", "cmp-2", scope, g, workertest.Record("succeed", "2"))
		got, err := r.send(second)
		if fault == 0 {
			wantStage(t, err, worker.StageJournal, protocol.ErrCompensationIdentityMismatch)
			continue
		}
		if err != nil || got != `compensation_result succeeded json:{"compensation_key":"cmp-2","operation_key":"op-1","value":2}` {
			t.Fatalf("second key: %q %v", got, err)
		}
		if rec, _ := r.store.durable.Operation("op-1"); rec.Compensation == nil || rec.Compensation.CompensationKey != "cmp-2" {
			t.Fatalf("durable record %+v", rec)
		}
		if r.effectCount("compensation") != 2 {
			t.Fatalf("%d compensation lines", r.effectCount("compensation"))
		}
		// A new input under the key in place is still refused.
		_, err = r.send(h.Compensate("c3", record, "op-1", "cmp-2", scope, g, workertest.Record("succeed", "3")))
		wantStage(t, err, worker.StageJournal, protocol.ErrCompensationIdentityMismatch)
	}
}

// Spec: WRK-022, CAN-022
func TestFaultCancelInBaseline(t *testing.T) {
	for _, fault := range []worker.Fault{0, worker.FaultCancelInBaseline} {
		r := faultRig(t, fault, profileGrant(echo, 5, 0))
		h := r.host
		_, err := r.send(h.Cancel("c0", "r1", echo))
		if fault == 0 {
			if !errors.Is(err, worker.ErrUnexpectedMessage) {
				t.Fatalf("cancel: %v", err)
			}
			continue
		}
		if !errors.Is(err, worker.ErrCancellationWithoutTarget) {
			t.Fatalf("cancel before any invocation: %v", err)
		}
		r.want(h.Invoke("r1", echo, text("x")), "result text:x")
		r.want(h.Cancel("c1", "r1", echo), "cancellation_result too_late")
		r.fail(h.Cancel("c2", "r1", echo), worker.ErrProtocol, protocol.ErrCancellationAlreadyRequested)
		_, err = r.send(h.CloseSession())
		if worker.ExitCode(err) != worker.ExitClean {
			t.Fatalf("close_session: %v (exit %d)", err, worker.ExitCode(err))
		}
	}
}

// storageRig is a journal store and admission over one in-memory authenticated store.
func storageRig(t *testing.T) (*worker.StorageJournalStore, *worker.StoreAdmission) {
	t.Helper()
	store := authStore(t, storage.NewMemoryBackend())
	js, err := worker.NewStorageJournalStore(store, "worker-journal", scope, canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	adm, err := worker.NewStoreAdmission(store, js, "worker-admission")
	if err != nil {
		t.Fatal(err)
	}
	return js, adm
}

// openStored opens a session on js with faults, in the way openWith does.
func openStored(t *testing.T, js *worker.StorageJournalStore, adm worker.Admission, session string, faults ...worker.Fault) (*worker.Session, *workertest.Host, error) {
	t.Helper()
	host, err := workertest.NewHost(session)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(host.Close)
	auth, err := host.WorkerAuthenticator(canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	j, rev, err := js.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	reg := worker.NewRegistry()
	if err := reg.Register(record, &scripted{contract: worker.Reconciliation, dispatch: func(protocol.OperationDispatchRequest) (protocol.OperationStatus, error) {
		return protocol.Succeeded(text("done")), nil
	}}); err != nil {
		t.Fatal(err)
	}
	s, err := worker.Open(context.Background(), auth, host.Seal(host.OpenSession(workertest.Grant(record, protocol.FormatText, 5, 0))),
		worker.WithFaults(worker.Config{Journal: j, Revision: rev, Registry: reg, Admission: adm}, faultsFor(t, host, faults...)))
	return s, host, err
}

// Spec: WRK-015, WRK-094
func TestFaultAdmitReplayedSession(t *testing.T) {
	for _, fault := range []worker.Fault{0, worker.FaultAdmitReplayedSession} {
		js, adm := storageRig(t)
		if _, _, err := openStored(t, js, adm, "session-1", nonZero(fault)...); err != nil {
			t.Fatal(err)
		}
		_, _, err := openStored(t, js, adm, "session-1", nonZero(fault)...)
		if fault == 0 {
			if !errors.Is(err, worker.ErrAdmission) || !errors.Is(err, worker.ErrReplayedSession) {
				t.Fatalf("replayed session: %v", err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("replayed session refused: %v", err)
		}
		if fence, _ := js.CurrentFence(context.Background()); fence != 2 {
			t.Fatalf("fence %d, want 2", fence)
		}
	}
}

// Spec: WRK-083
func TestFaultIgnoreFence(t *testing.T) {
	ctx := context.Background()
	for _, fault := range []worker.Fault{0, worker.FaultIgnoreFence} {
		js, adm := storageRig(t)
		older, oh, err := openStored(t, js, adm, "older", nonZero(fault)...)
		if err != nil {
			t.Fatal(err)
		}
		newer, nh, err := openStored(t, js, adm, "newer")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := newer.Handle(ctx, nh.Seal(nh.Dispatch("d1", record, "op-new", text("n"))), js); err != nil {
			t.Fatal(err)
		}
		var olderStore worker.JournalPersister = js
		if fault != 0 {
			olderStore = (&worker.Faults{Enabled: worker.FaultSet{}.With(fault)}).Persister(js)
		}
		answer, err := older.Handle(ctx, oh.Seal(oh.Dispatch("d1", record, "op-old", text("o"))), olderStore)
		if fault == 0 {
			if !errors.Is(err, worker.ErrJournal) || !older.Poisoned() {
				t.Fatalf("superseded persist: %v", err)
			}
			continue
		}
		if err != nil || oh.MustOpen(answer) != "operation_result succeeded text:done" {
			t.Fatalf("superseded persist: %q %v", answer, err)
		}
		// The superseded session overwrote the newer one's journal.
		j, _, err := js.Load(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := j.Operation("op-new"); ok {
			t.Fatal("the newer session's record survived")
		}
		if _, ok := j.Operation("op-old"); !ok {
			t.Fatal("the older session's record is missing")
		}
	}
}

// Spec: WRK-091
func TestFaultContinueAfterReject(t *testing.T) {
	for _, fault := range []worker.Fault{0, worker.FaultContinueAfterReject} {
		js, adm := storageRig(t)
		host, err := workertest.NewHost("session-1")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(host.Close)
		auth, err := host.WorkerAuthenticator(canonjson.Preserve)
		if err != nil {
			t.Fatal(err)
		}
		reg := worker.NewRegistry()
		if err := reg.Register(echo, &scripted{safety: worker.ReadOnly, invoke: func(inv protocol.ToolInvocation) (protocol.ToolPayload, error) {
			return inv.Payload, nil
		}}); err != nil {
			t.Fatal(err)
		}
		var in bytes.Buffer
		in.Write(append(host.Seal(host.OpenSession(profileGrant(echo, 5, 0))), '\n'))
		in.Write(append(host.Tampered(host.Invoke("r1", echo, text("bad"))), '\n'))
		in.WriteString("not a frame\n")
		in.Write(append(host.Seal(host.Invoke("r1", echo, text("good"))), '\n'))
		var out bytes.Buffer
		err = worker.Serve(context.Background(), worker.WithServeFaults(worker.ServeConfig{
			Auth: auth, Lines: worker.NewFrameReader(&in), Output: &out, Store: js, Registry: reg,
			Admission: adm,
		}, faultsFor(t, host, nonZero(fault)...)))
		if fault == 0 {
			if worker.ExitCode(err) != worker.ExitTransport || out.Len() != 0 {
				t.Fatalf("tampered frame: %v, output %q", err, out.String())
			}
			continue
		}
		if worker.ExitCode(err) != worker.ExitClean || host.MustOpen(bytes.TrimSuffix(out.Bytes(), []byte("\n"))) != "result text:good" {
			t.Fatalf("after two rejected frames: %v, output %q", err, out.String())
		}
	}
}

// Spec: WRK-090
func TestFaultNoLineCap(t *testing.T) {
	long := append(bytes.Repeat([]byte("x"), 2<<20), '\n')
	var none *worker.Faults
	if _, err := none.FrameReader(bytes.NewReader(long)).ReadLine(); !errors.Is(err, worker.ErrFrame) {
		t.Fatalf("capped reader: %v", err)
	}
	uncapped := &worker.Faults{Enabled: worker.FaultSet{}.With(worker.FaultNoLineCap)}
	input := append(append([]byte(nil), long...), "second\nthird"...)
	lr := uncapped.FrameReader(bytes.NewReader(input))
	if line, err := lr.ReadLine(); err != nil || len(line) != 2<<20 {
		t.Fatalf("2 MiB line: %d bytes, %v", len(line), err)
	}
	if line, err := lr.ReadLine(); err != nil || string(line) != "second" {
		t.Fatalf("second line: %q %v", line, err)
	}
	if _, err := lr.ReadLine(); !errors.Is(err, worker.ErrFrame) || worker.ExitCode(err) != worker.ExitTransport {
		t.Fatalf("torn last line: %v", err)
	}
	if _, err := uncapped.FrameReader(bytes.NewReader(nil)).ReadLine(); !errors.Is(err, worker.ErrEndOfInput) {
		t.Fatalf("end of input: %v", err)
	}
	if _, err := uncapped.FrameReader(bytes.NewReader([]byte("\xff\n"))).ReadLine(); !errors.Is(err, worker.ErrFrame) {
		t.Fatalf("not UTF-8: %v", err)
	}
	// The fault is still bounded.
	huge := io.MultiReader(bytes.NewReader(bytes.Repeat([]byte("x"), 9<<20)), strings.NewReader("\n"))
	if _, err := uncapped.FrameReader(huge).ReadLine(); !errors.Is(err, worker.ErrFrame) {
		t.Fatalf("9 MiB line: %v", err)
	}
}

// Spec: CAN-006, CAN-016
func TestFaultIgnoreCancel(t *testing.T) {
	r := newDriverRig(t, faulty(t, worker.FaultIgnoreCancel))
	h := r.host
	r.send(h.Invoke("r1", gateTool, text("wait")))
	r.started()
	r.send(h.Cancel("c1", "r1", gateTool))
	r.stillRunning(50 * time.Millisecond)
	r.gate.release <- struct{}{}
	r.expect("result text:done wait")
	r.expect("cancellation_result too_late")
	if r.gate.sawToken.Load() {
		t.Fatal("the adapter saw a token the fault never sets")
	}
	r.send(h.CloseSession())
	if err := r.end(); err != nil {
		t.Fatal(err)
	}
}

// Spec: CAN-016, CAN-020
func TestFaultResultAfterAck(t *testing.T) {
	r := newDriverRig(t, faulty(t, worker.FaultResultAfterAck))
	h := r.host
	r.send(h.Invoke("r1", gateTool, text("wait")))
	r.started()
	r.send(h.Cancel("c1", "r1", gateTool))
	r.expect("cancellation_result acknowledged")
	if r.gate.returned.Load() != 0 {
		t.Fatal("the adapter returned before the acknowledgement")
	}
	r.gate.release <- struct{}{}
	r.expect("result text:done wait")
	r.send(h.Invoke("r2", gateTool, text("now")))
	r.started()
	r.expect("result text:done now")
	r.send(h.CloseSession())
	if err := r.end(); err != nil {
		t.Fatal(err)
	}
}

// Spec: CAN-015
func TestFaultTooLateBeforeResult(t *testing.T) {
	r := newDriverRig(t, faulty(t, worker.FaultTooLateBeforeResult))
	h := r.host
	// "hold" completes only after the cancel has set the token, so the fault's misordering is
	// what the test sees, not a race between the cancel frame and the adapter.
	r.send(h.Invoke("r1", gateTool, text("hold")))
	r.started()
	r.send(h.Cancel("c1", "r1", gateTool))
	r.gate.release <- struct{}{}
	r.expect("cancellation_result too_late")
	r.expect("result text:done hold")
	r.send(h.CloseSession())
	if err := r.end(); err != nil {
		t.Fatal(err)
	}
}

// Spec: CAN-019
func TestFaultDetachOnFatal(t *testing.T) {
	r := newDriverRig(t, faulty(t, worker.FaultDetachOnFatal))
	r.send(r.host.Invoke("r1", gateTool, text("ignore")))
	r.started()
	r.sendLine([]byte("garbage"))
	wantFatal(t, r.end(), worker.ErrProtocol, protocol.ErrSerialization)
	if r.gate.returned.Load() != 0 {
		t.Fatal("the driver waited for the adapter")
	}
	r.gate.release <- struct{}{}
}

func TestFrameFaultsNeedTheKey(t *testing.T) {
	host, err := workertest.NewHost("session-1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(host.Close)
	auth, err := host.WorkerAuthenticator(canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []worker.Fault{worker.FaultAcceptReplay, worker.FaultReuseOutgoingSequence} {
		faults := &worker.Faults{Enabled: worker.FaultSet{}.With(f)}
		_, err = worker.Open(context.Background(), auth, host.Seal(host.OpenSession()), worker.WithFaults(worker.Config{
			Journal: newMemStore(t).durable, Registry: worker.NewRegistry(),
			Admission: worker.AdmissionFunc(func(context.Context, protocol.CapabilityManifest, string) (uint64, error) { return 1, nil }),
		}, faults))
		if err == nil || !faults.NeedsSessionKey() {
			t.Fatalf("%v without a key: %v", f, err)
		}
	}
}

// faulty configures a session with faults.
func faulty(t testing.TB, faults ...worker.Fault) configure {
	return func(cfg worker.Config, host *workertest.Host) worker.Config {
		return worker.WithFaults(cfg, faultsFor(t, host, faults...))
	}
}

// faultsFor returns the Faults enabling faults, with the host's session key when they need
// it; nil when faults is empty.
func faultsFor(t testing.TB, host *workertest.Host, faults ...worker.Fault) *worker.Faults {
	t.Helper()
	if len(faults) == 0 {
		return nil
	}
	f := &worker.Faults{}
	for _, x := range faults {
		f.Enabled = f.Enabled.With(x)
	}
	if f.NeedsSessionKey() {
		f.SessionKey = hostKey(t, host)
	}
	return f
}

// hostKey returns a copy of the host's session key, taken from its bootstrap bytes.
func hostKey(t testing.TB, host *workertest.Host) *protocol.SessionKey {
	t.Helper()
	boot := host.Bootstrap()
	key, err := protocol.NewSessionKey(boot[len(boot)-protocol.SessionKeyBytes:])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { key.Close() })
	return key
}
