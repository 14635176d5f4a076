package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/profile"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/worker/workertest"
)

const (
	echoTool     = profile.ToolTextEcho
	jsonTool     = profile.ToolJSONEcho
	failTool     = profile.ToolTextFail
	undeclTool   = profile.ToolTextUndeclared
	recordTool   = profile.ToolDurableRecord
	slowTool     = profile.ToolSlowCancellable
	stubbornTool = profile.ToolSlowUncooperative
	absence      = profile.AbsenceMessage
	scope        = "conformance"
)

func text(s string) protocol.ToolPayload { return protocol.TextPayload(s) }

// Spec: WRK-090, WRK-091, WRK-092, WRK-093, WRK-094, WRK-041, WRK-047, WRK-052, WRK-060, WRK-073
// Spec: CAN-023, CAN-024, PRF-002, PRF-003, PRF-004, PRF-008, PRF-009, PRF-011, PRF-013, PRF-014
// Spec: PRF-015, PRF-016, PRF-017
func TestEndToEnd(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "journal.db")
	effects := filepath.Join(dir, "effects.log")
	args := []string{"--journal", db, "--effect-log", effects}
	record := grant(recordTool, 20, 1)

	// Session 1: a mixed manifest runs the baseline session; every profile tool answers.
	p := launch(t, "session-1", args...)
	p.open(grant(echoTool, 5, 0), grant(jsonTool, 5, 0), record, grant(slowTool, 5, 0))
	p.call(p.host.Invoke("r1", echoTool, text("hello world")), "result text:hello world")
	p.call(p.host.Invoke("r2", jsonTool, workertest.JSON(`{"z":1,"a":[true,null]}`)), `result json:{"a":[true,null],"z":1}`)
	p.call(p.host.Invoke("r3", slowTool, text("10")), "result text:done 10")
	p.call(p.host.Dispatch("d1", recordTool, "op-1", workertest.Record("succeed", `{"n":1}`)),
		`operation_result succeeded json:{"operation_key":"op-1","value":{"n":1}}`)
	p.call(p.host.Dispatch("d2", recordTool, "op-run", workertest.Record("running", `"r"`)), "operation_result running")
	p.call(p.host.Reconcile("q1", recordTool, "op-run"), `reconciled_operation succeeded json:{"operation_key":"op-run","value":"r"}`)
	p.call(p.host.Compensate("c1", recordTool, "op-1", "cmp-1", scope, record, workertest.Record("succeed", `"undo"`)),
		`compensation_result succeeded json:{"compensation_key":"cmp-1","operation_key":"op-1","value":"undo"}`)
	p.expectExit(0, "")

	// Session 2, a new process on the same journal: exact duplicates are answered from the journal.
	p = launch(t, "session-2", args...)
	p.open(record)
	p.call(p.host.Dispatch("d1", recordTool, "op-1", workertest.Record("succeed", `{"n":1}`)),
		`operation_result succeeded json:{"operation_key":"op-1","value":{"n":1}}`)
	p.call(p.host.Compensate("c1", recordTool, "op-1", "cmp-1", scope, record, workertest.Record("succeed", `"undo"`)),
		`compensation_result succeeded json:{"compensation_key":"cmp-1","operation_key":"op-1","value":"undo"}`)
	p.call(p.host.Reconcile("q1", recordTool, "op-1"), `reconciled_operation succeeded json:{"operation_key":"op-1","value":{"n":1}}`)
	// An indeterminate effect ends the session without an answer.
	p.send(p.host.Dispatch("d2", recordTool, "op-ind", workertest.Record("indeterminate", "7")))
	p.expectExit(6, "adapter: worker: IndeterminateOperation operation_key=op-ind")
	if n := effectLines(t, effects, "effect", "op-1"); n != 1 {
		t.Fatalf("op-1 has %d effects, want exactly 1", n)
	}
	if n := effectLines(t, effects, "compensation", "op-1"); n != 1 {
		t.Fatalf("op-1 has %d compensations, want exactly 1", n)
	}

	// Session 3: the duplicate of a pending operation is never reported; reconciliation tells the truth.
	p = launch(t, "session-3", args...)
	p.open(record)
	p.send(p.host.Dispatch("d1", recordTool, "op-ind", workertest.Record("indeterminate", "7")))
	p.expectExit(6, "PendingOperation operation_key=op-ind")
	p = launch(t, "session-4", args...)
	p.open(record)
	p.call(p.host.Reconcile("q1", recordTool, "op-ind"), `reconciled_operation succeeded json:{"operation_key":"op-ind","value":7}`)
	p.call(p.host.Dispatch("d1", recordTool, "op-ind", workertest.Record("indeterminate", "7")),
		`operation_result succeeded json:{"operation_key":"op-ind","value":7}`)
	p.expectExit(0, "")
	if n := effectLines(t, effects, "effect", "op-ind"); n != 1 {
		t.Fatalf("op-ind has %d effects, want 1", n)
	}

	// A replayed session id is refused by admission.
	p = launch(t, "session-1", args...)
	p.open(record)
	p.expectExit(5, "rejected: worker: Admission")

	// Session 5: a manifest of cancellable tools only runs the cancellable driver.
	p = launch(t, "session-5", args...)
	p.open(grant(slowTool, 5, 0), grant(stubbornTool, 5, 0))
	p.send(p.host.Invoke("r1", slowTool, text("60000")))
	p.call(p.host.Cancel("c1", "r1", slowTool), "cancellation_result acknowledged")
	p.send(p.host.Invoke("r2", stubbornTool, text("150")))
	p.send(p.host.Cancel("c2", "r2", stubbornTool))
	p.expect("result text:done 150")
	p.expect("cancellation_result too_late")
	p.call(p.host.Invoke("r3", slowTool, text("0")), "result text:done 0")
	p.call(p.host.Cancel("c3", "r3", slowTool), "cancellation_result too_late")
	p.send(p.host.CloseSession())
	p.expectExit(0, "")

	data, err := os.ReadFile(effects)
	if err != nil {
		t.Fatal(err)
	}
	// Each session's fencing token is recorded per operation key before the first effect or
	// read under it (PRF-035); every later session holds a higher token.
	want := `{"kind":"fence","tool":"conf.durable.record","operation_key":"op-1","token":1}
{"kind":"effect","tool":"conf.durable.record","operation_key":"op-1","value":{"n":1}}
{"kind":"fence","tool":"conf.durable.record","operation_key":"op-run","token":1}
{"kind":"effect","tool":"conf.durable.record","operation_key":"op-run","value":"r"}
{"kind":"compensation","tool":"conf.durable.record","operation_key":"op-1","compensation_key":"cmp-1","value":"undo"}
{"kind":"fence","tool":"conf.durable.record","operation_key":"op-1","token":2}
{"kind":"fence","tool":"conf.durable.record","operation_key":"op-ind","token":2}
{"kind":"effect","tool":"conf.durable.record","operation_key":"op-ind","value":7}
{"kind":"fence","tool":"conf.durable.record","operation_key":"op-ind","token":4}
`
	if string(data) != want {
		t.Fatalf("effect log:\n%s\nwant:\n%s", data, want)
	}
}

// Spec: WRK-091, WRK-092, WRK-093, WRK-010, WRK-022, WRK-030, CAN-022, CAN-013, PRF-005, PRF-006, PRF-012
func TestExitStatuses(t *testing.T) {
	cases := []struct {
		name  string
		args  []string
		run   func(p *proc)
		code  int
		class string
	}{
		{"clean end of input after answers", nil, func(p *proc) {
			p.open(grant(echoTool, 2, 0))
			p.call(p.host.Invoke("r1", echoTool, text("x")), "result text:x")
		}, 0, ""},
		{"unknown flag", []string{"--no-such-flag"}, func(*proc) {}, 2, "usage:"},
		{"unknown fault", []string{"--fault", "explode"}, func(*proc) {}, 2, "usage:"},
		{"bad number mode", []string{"--number-mode", "exact"}, func(*proc) {}, 2, "usage:"},
		{"zero reconciliation budget", []string{"--max-reconciliations-per-tool", "0"}, func(*proc) {}, 2, "ZeroPerToolReconciliationLimit"},
		{"bad journal scope", []string{"--scope", "Not A Token"}, func(*proc) {}, 2, "usage:"},
		{"end of input before the opening frame", nil, func(*proc) {}, 4, "transport:"},
		{"tampered frame", nil, func(p *proc) {
			p.write(append(p.host.Tampered(p.host.OpenSession(grant(echoTool, 1, 0))), '\n'))
		}, 4, "InvalidAuthenticationTag"},
		{"line without newline", nil, func(p *proc) {
			p.write(p.host.Seal(p.host.OpenSession(grant(echoTool, 1, 0))))
		}, 4, "transport:"},
		{"replayed frame", nil, func(p *proc) {
			p.open(grant(echoTool, 2, 0))
			line := p.host.SealAt(2, p.host.Invoke("r1", echoTool, text("x")))
			p.write(append(line, '\n'))
			p.expect("result text:x")
			p.write(append(line, '\n'))
		}, 4, "UnexpectedSequence"},
		{"missing adapter", nil, func(p *proc) {
			p.open(workertest.Grant("x.unknown", protocol.FormatText, 1, 0))
		}, 5, "MissingAdapter"},
		{"unauthorized tool", nil, func(p *proc) {
			p.open(grant(echoTool, 1, 0))
			p.send(p.host.Invoke("r1", jsonTool, workertest.JSON(`{}`)))
		}, 5, "UnknownTool"},
		{"undeclared invocation safety", nil, func(p *proc) {
			p.open(grant(undeclTool, 1, 0))
			p.send(p.host.Invoke("r1", undeclTool, text("x")))
		}, 5, "InvocationSafetyNotDeclared"},
		{"close_session in a baseline session", nil, func(p *proc) {
			p.open(grant(echoTool, 1, 0))
			p.send(p.host.CloseSession())
		}, 5, "UnexpectedMessage message=close_session"},
		{"cancel in a baseline session", nil, func(p *proc) {
			p.open(grant(echoTool, 1, 0))
			p.send(p.host.Cancel("c1", "r1", echoTool))
		}, 5, "UnexpectedMessage message=cancel"},
		{"dispatch in a cancellable session", nil, func(p *proc) {
			p.open(grant(slowTool, 1, 0))
			p.send(p.host.Dispatch("d1", slowTool, "op-1", text("1")))
		}, 5, "UnexpectedMessage message=dispatch_operation"},
		{"adapter failure", nil, func(p *proc) {
			p.open(grant(failTool, 1, 0))
			p.send(p.host.Invoke("r1", failTool, text("x")))
		}, 6, "adapter: worker: Adapter tool=conf.text.fail"},
		{"durable adapter error", nil, func(p *proc) {
			p.open(grant(recordTool, 1, 0))
			p.send(p.host.Dispatch("d1", recordTool, "op-1", workertest.Record("error", "1")))
		}, 6, "adapter: worker: Adapter tool=conf.durable.record"},
		{"end of input while an invocation runs", nil, func(p *proc) {
			p.open(grant(slowTool, 1, 0))
			p.send(p.host.Invoke("r1", slowTool, text("60000")))
		}, 4, "EndOfInput"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := launch(t, "session-1", tc.args...)
			tc.run(p)
			p.expectExit(tc.code, tc.class)
		})
	}
	// A host that stops reading: the answer cannot be written.
	p0 := launch(t, "session-1")
	p0.open(grant(echoTool, 1, 0))
	p0.pipe.Close()
	p0.send(p0.host.Invoke("r1", echoTool, text("x")))
	_ = p0.stdin.Close()
	if err := p0.cmd.Wait(); p0.cmd.ProcessState.ExitCode() != 4 || !strings.Contains(p0.stderr.String(), "transport: worker: Write") {
		t.Fatalf("write failure: %v, exit %d, %q", err, p0.cmd.ProcessState.ExitCode(), p0.stderr)
	}
	p0.waited = true
	// A bad bootstrap.
	host, err := workertest.NewHost("session-1")
	if err != nil {
		t.Fatal(err)
	}
	p := launchRaw(t, host)
	p.write([]byte("SPLPBOOX......................................................"))
	p.expectExit(3, "bootstrap:")
	// The worker writes nothing at all when it rejects the opening.
	p = launch(t, "session-1")
	p.open(workertest.Grant("x.unknown", protocol.FormatText, 1, 0))
	if code, stderr := p.end(); code != 5 || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("exit %d, diagnostics %q: want one line", code, stderr)
	}
}

// Spec: WRK-061
func TestReconciliationBudgetFlags(t *testing.T) {
	p := launch(t, "session-1", "--max-reconciliations-per-tool", "2")
	p.open(grant(recordTool, 2, 0))
	p.call(p.host.Dispatch("d1", recordTool, "op-1", workertest.Record("fail", "1")), "operation_result failed "+absence)
	p.call(p.host.Reconcile("q1", recordTool, "op-1"), "reconciled_operation failed "+absence)
	p.call(p.host.Reconcile("q2", recordTool, "op-1"), "reconciled_operation failed "+absence)
	p.send(p.host.Reconcile("q3", recordTool, "op-1"))
	p.expectExit(5, "ReconciliationBudgetExhausted")
}
