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
)

// openLog opens the effect log at path as a worker process would.
func openLog(t *testing.T, path string) *profile.EffectLog {
	t.Helper()
	l, f, err := profile.OpenEffectLogFile(path, canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return l
}

// Spec: PRF-035, STO-073
func TestEffectLogFencesAcrossOpenings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "effects.jsonl")
	older, newer := openLog(t, path), openLog(t, path) // two processes on one file
	effect := profile.EffectLine{Kind: profile.KindEffect, Tool: "conf.durable.record", OperationKey: "op-1", Value: canonjson.Uint(1)}
	// The newer worker's reconciliation shows token 2 before it reads.
	if err := newer.Fenced("conf.durable.record", "op-1", 2); err != nil {
		t.Fatal(err)
	}
	// The older worker, which read the file before, is refused and writes nothing.
	if err := older.Fenced("conf.durable.record", "op-1", 1, effect); !errors.Is(err, profile.ErrSuperseded) {
		t.Fatalf("a lower token: %v; want ErrSuperseded", err)
	}
	// Another key, and an equal or higher token, act.
	other := effect
	other.OperationKey = "op-2"
	if err := older.Fenced("conf.durable.record", "op-2", 1, other); err != nil {
		t.Fatal(err)
	}
	if err := newer.Fenced("conf.durable.record", "op-1", 2, effect); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"kind":"fence","tool":"conf.durable.record","operation_key":"op-1","token":2}
{"kind":"fence","tool":"conf.durable.record","operation_key":"op-2","token":1}
{"kind":"effect","tool":"conf.durable.record","operation_key":"op-2","value":1}
{"kind":"effect","tool":"conf.durable.record","operation_key":"op-1","value":1}
`
	if string(data) != want {
		t.Errorf("effect log:\n%s\nwant:\n%s", data, want)
	}
	// A restarted worker rebuilds the fences and refuses the old token too.
	again := openLog(t, path)
	if err := again.Fenced("conf.durable.record", "op-1", 1, effect); !errors.Is(err, profile.ErrSuperseded) {
		t.Errorf("after a restart, a lower token: %v; want ErrSuperseded", err)
	}
	for _, bad := range []string{
		`{"kind":"fence","tool":"t","operation_key":"k","token":0}`,
		`{"kind":"fence","tool":"t","operation_key":"k","token":"1"}`,
		`{"kind":"fence","tool":"t","operation_key":"k","token":1.0}`,
		`{"kind":"fence","tool":"t","operation_key":"k","value":1}`,
		`{"kind":"fence","tool":"t","operation_key":"k","token":1,"value":1}`,
	} {
		if _, err := profile.ParseEffectLine([]byte(bad), canonjson.Preserve); err == nil {
			t.Errorf("%s: parsed; want an error", bad)
		}
	}
}

// Spec: PRF-034, PRF-035, STO-072
func TestDurableToolFenced(t *testing.T) {
	path := filepath.Join(t.TempDir(), "effects.jsonl")
	var waited []time.Duration
	var logAtWait string
	wait := func(d time.Duration, _ <-chan struct{}) bool {
		waited = append(waited, d)
		data, _ := os.ReadFile(path)
		logAtWait = string(data)
		return false
	}
	older := adapter(t, registry(t, profile.Options{Effects: openLog(t, path), Wait: wait}), profile.ToolDurableRecord).(worker.FencedOperations)
	newer := adapter(t, registry(t, profile.Options{Effects: openLog(t, path), Wait: wait}), profile.ToolDurableRecord).(worker.FencedOperations)
	grant := protocol.JSONGrant(profile.ToolDurableRecord)
	dispatch := func(input string) protocol.OperationDispatchRequest {
		v, err := canonjson.ParseValue([]byte(input), canonjson.Preserve)
		if err != nil {
			t.Fatal(err)
		}
		return protocol.OperationDispatchRequest{SessionID: "s", RequestID: "r", Tool: profile.ToolDurableRecord, OperationKey: "op-1", Payload: protocol.JSONPayload(v)}
	}
	st, err := newer.ReconcileFenced(protocol.OperationReconcileRequest{SessionID: "s", RequestID: "r", Tool: profile.ToolDurableRecord, OperationKey: "op-1"}, grant, 5)
	if err != nil || st.State != protocol.StateFailed {
		t.Fatalf("reconciliation: %+v %v", st, err)
	}
	_, err = older.DispatchFenced(dispatch(`{"value":1,"wait_ms":250}`), grant, 4)
	if worker.AdapterKindOf(err) != worker.AdapterFailed || !strings.Contains(err.Error(), "superseded") {
		t.Errorf("a superseded dispatch: %v; want Failed", err)
	}
	if len(waited) != 0 {
		t.Errorf("a superseded held dispatch waited %v; want a refusal before the wait", waited)
	}
	// A held dispatch shows its token before it waits, so its fence line tells that it runs.
	if st, err := newer.DispatchFenced(dispatch(`{"value":2,"wait_ms":250}`), grant, 6); err != nil || st.State != protocol.StateSucceeded {
		t.Errorf("the newer worker's dispatch: %+v %v", st, err)
	}
	if len(waited) != 1 || waited[0] != 250*time.Millisecond {
		t.Errorf("waits %v; want one of 250ms", waited)
	}
	if !strings.HasSuffix(logAtWait, `{"kind":"fence","tool":"conf.durable.record","operation_key":"op-1","token":6}`+"\n") {
		t.Errorf("effect log while the dispatch waited:\n%s\nwant its fence line last", logAtWait)
	}
	for _, bad := range []string{`{"wait_ms":-1}`, `{"wait_ms":60001}`, `{"wait_ms":"5"}`, `{"wait_ms":1.5}`} {
		if _, err := newer.DispatchFenced(dispatch(bad), grant, 5); worker.AdapterKindOf(err) != worker.AdapterInvalidJSONInput {
			t.Errorf("%s: %v; want InvalidJsonInput", bad, err)
		}
	}
}

// TestEffectsLeaveOutFenceLines: the effects of a fenced record are its effect lines, while
// Lines keeps the fence line that records the token (PRF-035).
func TestEffectsLeaveOutFenceLines(t *testing.T) {
	l := profile.NewEffectLog(nil, nil)
	effect := profile.EffectLine{Kind: profile.KindEffect, Tool: "conf.durable.record", OperationKey: "op-1", Value: canonjson.Null()}
	if err := l.Fenced("conf.durable.record", "op-1", 3, effect); err != nil {
		t.Fatal(err)
	}
	lines, effects := l.Lines(), l.Effects()
	if len(lines) != 2 || lines[0].Kind != profile.KindFence || lines[0].Token != 3 {
		t.Fatalf("lines = %+v, want the fence line with token 3, then the effect", lines)
	}
	if len(effects) != 1 || effects[0].Kind != profile.KindEffect || effects[0].OperationKey != "op-1" {
		t.Errorf("effects = %+v, want the one effect line", effects)
	}
}
