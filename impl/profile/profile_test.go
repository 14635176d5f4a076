package profile_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/profile"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/worker"
	"github.com/splashv5/conform/impl/worker/workertest"
)

// syncWriter counts writes and syncs.
type syncWriter struct {
	strings.Builder
	writes, syncs int
	fail          bool
}

func (w *syncWriter) Write(p []byte) (int, error) {
	if w.fail {
		return 0, errors.New("disk full")
	}
	w.writes++
	return w.Builder.Write(p)
}

func (w *syncWriter) Sync() error { w.syncs++; return nil }

func registry(t *testing.T, opts profile.Options) *worker.Registry {
	t.Helper()
	reg := worker.NewRegistry()
	if err := profile.Register(reg, opts); err != nil {
		t.Fatal(err)
	}
	return reg
}

func adapter(t *testing.T, reg *worker.Registry, tool string) worker.Adapter {
	t.Helper()
	a, ok := reg.Adapter(tool)
	if !ok {
		t.Fatalf("%s not registered", tool)
	}
	return a
}

// Spec: PRF-001, PRF-002, PRF-031
func TestRegistration(t *testing.T) {
	reg := registry(t, profile.Options{})
	want := []struct {
		tool        string
		cancellable bool
		safety      worker.InvocationSafety
		contract    worker.DurableContract
		format      protocol.EnvelopeFormat
	}{
		{"conf.text.echo", false, worker.ReadOnly, worker.ContractUndeclared, protocol.FormatText},
		{"conf.json.echo", false, worker.ReadOnly, worker.ContractUndeclared, protocol.FormatJSON},
		{"conf.text.fail", false, worker.ReadOnly, worker.ContractUndeclared, protocol.FormatText},
		{"conf.text.undeclared", false, worker.SafetyUndeclared, worker.ContractUndeclared, protocol.FormatText},
		{"conf.durable.record", false, worker.SafetyUndeclared, worker.Reconciliation, protocol.FormatJSON},
		{"conf.slow.cancellable", true, worker.ReadOnly, worker.ContractUndeclared, protocol.FormatText},
		{"conf.slow.uncooperative", true, worker.ReadOnly, worker.ContractUndeclared, protocol.FormatText},
		{"conf.json.typed", false, worker.ReadOnly, worker.ContractUndeclared, protocol.FormatJSON},
		{"conf.secret.sign", false, worker.ReadOnly, worker.ContractUndeclared, protocol.FormatText},
	}
	if got := strings.Join(reg.Tools(), " "); got != "conf.durable.record conf.json.echo conf.json.typed conf.secret.sign conf.slow.cancellable conf.slow.uncooperative conf.text.echo conf.text.fail conf.text.undeclared" {
		t.Fatalf("registered %s", got)
	}
	for i, w := range want {
		a := adapter(t, reg, w.tool)
		if reg.IsCancellable(w.tool) != w.cancellable || a.InvocationSafety() != w.safety || a.DurableContract() != w.contract ||
			profile.Formats[w.tool] != w.format || profile.Tools[i] != w.tool {
			t.Errorf("%s: cancellable %v safety %v contract %v format %v", w.tool, reg.IsCancellable(w.tool), a.InvocationSafety(), a.DurableContract(), profile.Formats[w.tool])
		}
	}
	// Registering twice collides on the first name.
	if err := profile.Register(reg, profile.Options{}); !errors.Is(err, worker.ErrDuplicateTool) {
		t.Fatalf("second registration: %v", err)
	}
}

func invoke(a worker.Adapter, tool string, p protocol.ToolPayload) (protocol.ToolPayload, error) {
	return a.Invoke(protocol.ToolInvocation{SessionID: "s", RequestID: "r", Tool: tool, Payload: p}, protocol.CapabilityGrant{})
}

// Spec: PRF-003, PRF-004, PRF-005, PRF-006
func TestOrdinaryTools(t *testing.T) {
	reg := registry(t, profile.Options{})
	out, err := invoke(adapter(t, reg, profile.ToolTextEcho), profile.ToolTextEcho, protocol.TextPayload("héllo\n"))
	if err != nil || out.Text != "héllo\n" || out.Format != protocol.FormatText {
		t.Fatalf("text echo: %+v %v", out, err)
	}
	in := workertest.JSON(`{"z":[1,2.5,{"b":null,"a":true}],"a":"x"}`)
	out, err = invoke(adapter(t, reg, profile.ToolJSONEcho), profile.ToolJSONEcho, in)
	if err != nil || string(out.AppendJSON(nil)) != `{"format":"json","value":{"a":"x","z":[1,2.5,{"a":true,"b":null}]}}` {
		t.Fatalf("json echo: %s %v", out.AppendJSON(nil), err)
	}
	if _, err := invoke(adapter(t, reg, profile.ToolTextFail), profile.ToolTextFail, protocol.TextPayload("x")); worker.AdapterKindOf(err) != worker.AdapterFailed {
		t.Fatalf("fail: %v", err)
	}
	out, err = invoke(adapter(t, reg, profile.ToolTextUndeclared), profile.ToolTextUndeclared, protocol.TextPayload("x"))
	if err != nil || out.Text != "x" {
		t.Fatalf("undeclared: %v", err)
	}
}

func dispatch(a worker.Adapter, key string, p protocol.ToolPayload) (protocol.OperationStatus, error) {
	return a.DispatchOperation(protocol.OperationDispatchRequest{SessionID: "s", RequestID: "r", Tool: profile.ToolDurableRecord, OperationKey: key, Payload: p}, protocol.CapabilityGrant{})
}

func reconcile(a worker.Adapter, key string) (protocol.OperationStatus, error) {
	return a.ReconcileOperation(protocol.OperationReconcileRequest{SessionID: "s", RequestID: "r", Tool: profile.ToolDurableRecord, OperationKey: key}, protocol.CapabilityGrant{})
}

func statusText(s protocol.OperationStatus) string { return string(s.AppendJSON(nil)) }

// Spec: PRF-007, PRF-008, PRF-009, PRF-010, PRF-011, PRF-012, PRF-013, PRF-014, PRF-018, PRF-019
func TestDurableTool(t *testing.T) {
	w := &syncWriter{}
	effects := profile.NewEffectLog(w, nil)
	a := adapter(t, registry(t, profile.Options{Effects: effects}), profile.ToolDurableRecord)
	absent := `{"state":"failed","message":"conformance: no effect recorded"}`
	steps := []struct {
		key, input, status string
		err                worker.AdapterErrorKind
		lines              int
	}{
		{"op-1", `{"value":{"n":1}}`, `{"state":"succeeded","payload":{"format":"json","value":{"operation_key":"op-1","value":{"n":1}}}}`, 0, 1},
		{"op-2", `{"mode":"succeed","other":7}`, `{"state":"succeeded","payload":{"format":"json","value":{"operation_key":"op-2","value":null}}}`, 0, 2},
		{"op-3", `{"mode":"running","value":3}`, `{"state":"running"}`, 0, 3},
		{"op-4", `{"mode":"fail","value":4}`, absent, 0, 3},
		{"op-5", `{"mode":"indeterminate","value":5}`, "", worker.AdapterIndeterminate, 4},
		{"op-6", `{"mode":"error","value":6}`, "", worker.AdapterFailed, 4},
		{"op-7", `{"mode":"sideways"}`, "", worker.AdapterInvalidJSONInput, 4},
		{"op-8", `{"mode":1}`, "", worker.AdapterInvalidJSONInput, 4},
		{"op-9", `[1]`, "", worker.AdapterInvalidJSONInput, 4},
		// No deduplication in the adapter: a second dispatch of op-1 is a second effect.
		{"op-1", `{"value":{"n":1}}`, `{"state":"succeeded","payload":{"format":"json","value":{"operation_key":"op-1","value":{"n":1}}}}`, 0, 5},
	}
	for _, s := range steps {
		st, err := dispatch(a, s.key, workertest.JSON(s.input))
		if s.err != 0 {
			if err == nil || worker.AdapterKindOf(err) != s.err {
				t.Fatalf("%s %s: %v, want %v", s.key, s.input, err, s.err)
			}
		} else if err != nil || statusText(st) != s.status {
			t.Fatalf("%s %s: %s %v, want %s", s.key, s.input, statusText(st), err, s.status)
		}
		if n := len(effects.Lines()); n != s.lines {
			t.Fatalf("%s: %d effect lines, want %d", s.key, n, s.lines)
		}
	}
	if w.writes != 5 || w.syncs != 5 {
		t.Fatalf("%d writes, %d syncs for 5 lines", w.writes, w.syncs)
	}
	wantLog := `{"kind":"effect","tool":"conf.durable.record","operation_key":"op-1","value":{"n":1}}
{"kind":"effect","tool":"conf.durable.record","operation_key":"op-2","value":null}
{"kind":"effect","tool":"conf.durable.record","operation_key":"op-3","value":3}
{"kind":"effect","tool":"conf.durable.record","operation_key":"op-5","value":5}
{"kind":"effect","tool":"conf.durable.record","operation_key":"op-1","value":{"n":1}}
`
	if w.String() != wantLog {
		t.Fatalf("effect log:\n%s\nwant:\n%s", w.String(), wantLog)
	}
	// Reconciliation reports the effect record and performs nothing.
	for key, want := range map[string]string{
		"op-3": `{"state":"succeeded","payload":{"format":"json","value":{"operation_key":"op-3","value":3}}}`,
		"op-5": `{"state":"succeeded","payload":{"format":"json","value":{"operation_key":"op-5","value":5}}}`,
		"op-4": absent, "op-6": absent, "op-none": absent,
	} {
		st, err := reconcile(a, key)
		if err != nil || statusText(st) != want {
			t.Fatalf("reconcile %s: %s %v, want %s", key, statusText(st), err, want)
		}
	}
	if w.writes != 5 {
		t.Fatal("reconciliation wrote to the effect log")
	}
	// A failed write makes the outcome indeterminate (the line may or may not be there).
	w.fail = true
	if _, err := dispatch(a, "op-10", workertest.JSON(`{}`)); worker.AdapterKindOf(err) != worker.AdapterIndeterminate {
		t.Fatalf("failed effect write: %v", err)
	}
	if _, ok := effects.Effect(profile.ToolDurableRecord, "op-10"); ok {
		t.Fatal("a failed write entered the effect record")
	}
}

// Spec: PRF-015, PRF-018
func TestDurableToolCompensation(t *testing.T) {
	w := &syncWriter{}
	effects := profile.NewEffectLog(w, nil)
	a := adapter(t, registry(t, profile.Options{Effects: effects}), profile.ToolDurableRecord)
	compensate := func(cmp, input string) (protocol.OperationStatus, error) {
		return a.CompensateOperation(protocol.OperationCompensationRequest{SessionID: "s", RequestID: "r", Tool: profile.ToolDurableRecord,
			OperationKey: "op-1", CompensationKey: cmp, TenantScope: "t", Payload: workertest.JSON(input)}, protocol.CapabilityGrant{})
	}
	st, err := compensate("cmp-1", `{"value":"undo"}`)
	if err != nil || statusText(st) != `{"state":"succeeded","payload":{"format":"json","value":{"compensation_key":"cmp-1","operation_key":"op-1","value":"undo"}}}` {
		t.Fatalf("compensate: %s %v", statusText(st), err)
	}
	st, err = compensate("cmp-2", `{"mode":"running"}`)
	if err != nil || st.State != protocol.StateSucceeded {
		t.Fatalf("running compensation: %s %v", statusText(st), err)
	}
	if st, err = compensate("cmp-3", `{"mode":"fail"}`); err != nil || st.Message != profile.AbsenceMessage {
		t.Fatalf("failed compensation: %s %v", statusText(st), err)
	}
	if _, err = compensate("cmp-4", `{"mode":"indeterminate","value":4}`); worker.AdapterKindOf(err) != worker.AdapterIndeterminate {
		t.Fatal(err)
	}
	if _, err = compensate("cmp-5", `{"mode":"error"}`); worker.AdapterKindOf(err) != worker.AdapterFailed {
		t.Fatal(err)
	}
	if _, err = compensate("cmp-6", `"x"`); worker.AdapterKindOf(err) != worker.AdapterInvalidJSONInput {
		t.Fatal(err)
	}
	want := `{"kind":"compensation","tool":"conf.durable.record","operation_key":"op-1","compensation_key":"cmp-1","value":"undo"}
{"kind":"compensation","tool":"conf.durable.record","operation_key":"op-1","compensation_key":"cmp-2","value":null}
{"kind":"compensation","tool":"conf.durable.record","operation_key":"op-1","compensation_key":"cmp-4","value":4}
`
	if w.String() != want {
		t.Fatalf("log:\n%s", w.String())
	}
	// A compensation line is not an effect of the operation.
	if _, ok := effects.Effect(profile.ToolDurableRecord, "op-1"); ok {
		t.Fatal("compensation counted as an effect")
	}
}

// Spec: PRF-016, PRF-017
func TestSlowTools(t *testing.T) {
	var waited []time.Duration
	// A fake clock: a wait ends at once, cancelled if the channel is already closed.
	wait := func(d time.Duration, cancel <-chan struct{}) bool {
		waited = append(waited, d)
		select {
		case <-cancel:
			return true
		default:
			return false
		}
	}
	reg := registry(t, profile.Options{Wait: wait})
	coop, _ := reg.Cancellable(profile.ToolSlowCancellable)
	unco, _ := reg.Cancellable(profile.ToolSlowUncooperative)
	run := func(a worker.CancellableAdapter, input string, cancelled bool) (worker.Completion, error) {
		tok, cancel := worker.NewCancelTokenForTest()
		if cancelled {
			cancel()
		}
		return a.InvokeCancellable(protocol.ToolInvocation{Tool: "t", Payload: protocol.TextPayload(input)}, protocol.CapabilityGrant{}, tok)
	}
	c, err := run(coop, "250", false)
	if err != nil || c.Acknowledged || c.Payload.Text != "done 250" {
		t.Fatalf("cooperative, not cancelled: %+v %v", c, err)
	}
	c, err = run(coop, "007", true)
	if err != nil || !c.Acknowledged {
		t.Fatalf("cooperative, cancelled: %+v %v", c, err)
	}
	c, err = run(unco, "60000", true)
	if err != nil || c.Acknowledged || c.Payload.Text != "done 60000" {
		t.Fatalf("uncooperative, cancelled: %+v %v", c, err)
	}
	out, err := invoke(coop, "t", protocol.TextPayload("0"))
	if err != nil || out.Text != "done 0" {
		t.Fatalf("baseline invoke: %+v %v", out, err)
	}
	if len(waited) != 4 || waited[0] != 250*time.Millisecond || waited[1] != 7*time.Millisecond || waited[2] != time.Minute || waited[3] != 0 {
		t.Fatalf("waits %v", waited)
	}
	for _, bad := range []string{"", "60001", "-1", "1.5", " 1", "123456", "abc"} {
		if _, err := run(coop, bad, false); worker.AdapterKindOf(err) != worker.AdapterFailed {
			t.Fatalf("input %q: %v", bad, err)
		}
	}
}

// Spec: PRF-020
func TestEffectLogFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "effects.log")
	complete := `{"kind":"effect","tool":"conf.durable.record","operation_key":"op-1","value":[1,"a"]}` + "\n"
	if err := os.WriteFile(path, []byte(complete+`{"kind":"effect","tool":"conf.dura`), 0o600); err != nil {
		t.Fatal(err)
	}
	log, f, err := profile.OpenEffectLogFile(path, canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := log.Effect("conf.durable.record", "op-1"); !ok || string(v.JSON()) != `[1,"a"]` {
		t.Fatalf("effect record from file: %v", ok)
	}
	line := profile.EffectLine{Kind: profile.KindEffect, Tool: "conf.durable.record", OperationKey: "op-2", Value: canonjson.Null()}
	if err := log.Append(line); err != nil {
		t.Fatal(err)
	}
	f.Close()
	data, _ := os.ReadFile(path)
	if string(data) != complete+`{"kind":"effect","tool":"conf.durable.record","operation_key":"op-2","value":null}`+"\n" {
		t.Fatalf("torn tail not cut:\n%s", data)
	}
	for _, bad := range []string{
		`{"kind":"effect","tool":"t","value":1}`,
		`{"kind":"other","tool":"t","operation_key":"k","value":1}`,
		`{"tool":"t","kind":"effect","operation_key":"k","value":1}`,
		`{"kind":"effect","tool":"t","operation_key":"k","value":1,"extra":2}`,
		`{"kind":"compensation","tool":"t","operation_key":"k","value":1}`,
		`[1]`,
	} {
		if err := os.WriteFile(path, []byte(complete+bad+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, _, err := profile.OpenEffectLogFile(path, canonjson.Preserve)
		var le *profile.EffectLogError
		if !errors.Is(err, profile.ErrEffectLog) || !errors.As(err, &le) || le.Line != 2 {
			t.Fatalf("malformed line %s: %v", bad, err)
		}
	}
}
