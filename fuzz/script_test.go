package fuzz

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/splashv5/conform/impl/script"
)

// scriptSeeds cover every construct of the subset, the two evaluations of the external-tools
// document, and sources that hit each bound or each kind of syntax rejection.
var scriptSeeds = []string{
	"use mod.tool\n     use mod.std.assert\n     let output = tool.start(\"text.remote\", \"release\").await()\n     assert(output == \"done\")",
	"use mod.tool\ntool.start(\"text.remote\", \"release\").await()",
	"use mod.tool\nuse mod.std.assert\nlet values = [20, 22]\nlet request = {left: values[0], right: values[1]}\nlet raw = tool.call_json(\"json.echo\", request)\nlet result = raw.parse_json()\nfn valid_total(value) {\n    return value == 42\n}\nassert(valid_total(result.left + result.right))",
	"use mod.tool\nlet a = tool.start(\"text.remote\", \"1\")\nlet b = tool.start(\"text.echo\", \"2\")\n[b.await(), a.await()]",
	"use mod.std.assert\ntry {\nassert(false)\n} catch {\n42\n}",
	"use mod.std.assert\nfn fail() {\nassert(false)\n}\ntry fail() catch 1",
	"fn f(n) {\nif n <= 1 {\nreturn 1\n}\nreturn n * f(n - 1)\n}\nf(20)",
	"fn f() {\nreturn f()\n}\ntry f() catch 1",
	"let x = 1\nx += 2\nx = x * 3\nif x > 5 \"big\" elif x > 2 \"mid\" else \"small\"",
	"let a0 = [1, 2]\nlet a1 = [a0, a0]\nlet a2 = [a1, a1]\nlet a3 = [a2, a2]\na3 == a3",
	"\"{\\\"a\\\":[1,2.5,null,true,\\\"x\\\"]}\".parse_json().a[1]",
	"{b: [1, 0.5, -0, 1e21, 1e-7], a: \"\\u{1F600}\\t\"}.to_json()",
	"use mod.tool\ntool.call_json(\"json.echo\", [0 / 0, 1 / 0, \"a\\\\b\"])",
	"let s = \"abcdefgh\"\nlet t = s + s + s + s\nlet u = t + t + t + t\nu + u + u + u",
	"missing + 1\n(1).x\n[1][5]\n\"a\" - 1",
	"while true {\n}", "for x in [1] {\n}", "let f = |x| x", "~1", "var x = 1", "a..b",
	"\"\\q\"", "'a'", "1 /* open", "1\r2", "{a: 1,}", "try {\nlet x = 1\n} catch 1",
	"((((((((((((((((((((1))))))))))))))))))))",
	"use mod.tool\nlet w = tool.start(\"text.remote\", \"x\").await\nw()",
	"use mod.tool\ntry tool.call(\"text.remote\", \"x\") catch tool.call(\"nope\", 1)",
}

// scriptFuzzHost is a small deterministic host: text.echo and json.echo answer at once,
// text.remote stays pending until the fuzz driver completes it, and anything else is denied.
type scriptFuzzHost struct {
	next    script.PromiseID
	pending map[script.PromiseID]string
	settled map[script.PromiseID]string
}

func (h *scriptFuzzHost) CallTool(name, input string, format script.Format) (string, error) {
	switch {
	case name == "text.echo" && format == script.FormatText:
		return input, nil
	case name == "json.echo" && format == script.FormatJSON:
		return input, nil
	}
	return "", script.Denied("tool is not granted: " + name)
}

func (h *scriptFuzzHost) StartTool(name, input string, format script.Format) (script.PromiseID, error) {
	switch name {
	case "text.remote", "text.echo", "json.echo":
	default:
		return 0, script.Denied("tool is not granted: " + name)
	}
	h.next++
	if name == "text.remote" {
		h.pending[h.next] = input
	} else {
		h.settled[h.next] = input
	}
	return h.next, nil
}

func (h *scriptFuzzHost) AwaitTool(id script.PromiseID) (string, bool, error) {
	if out, ok := h.settled[id]; ok {
		return out, true, nil
	}
	if _, ok := h.pending[id]; ok {
		return "", false, nil
	}
	return "", false, script.ErrUnknownPromise
}

// FuzzScript checks that arbitrary source never panics and always ends within the bounds:
// every Eval either rejects the source with a typed error that Check agrees with, or returns
// an Evaluation that is consistent; suspended evaluations are resumed (alternately with a
// result and a failure) until they end; and the instructions of a run never exceed the bound.
//
// Spec: SCR-097, SCR-004, SCR-095
func FuzzScript(f *testing.F) {
	for _, s := range scriptSeeds {
		f.Add(s)
	}
	limits := script.DefaultLimits()
	limits.InstructionLimit = 20_000
	limits.DeadlineCheckInterval = 256
	limits.MaxCallFrames = 128
	limits.MaxHeapBytes = 1 << 20
	limits.MaxStringBytes = 16 << 10
	f.Fuzz(func(t *testing.T, src string) {
		// A clock that advances one microsecond per reading keeps the deadline deterministic
		// and reachable: a run may read it at most InstructionLimit/256 + 1 times, well inside
		// the default 64 ms.
		now := time.Unix(0, 0)
		clock := func() time.Time { now = now.Add(time.Microsecond); return now }
		h := &scriptFuzzHost{pending: map[script.PromiseID]string{}, settled: map[script.PromiseID]string{}}
		m, err := script.New(h, script.Config{Limits: limits, Clock: clock})
		if err != nil {
			t.Fatal(err)
		}
		ev, err := m.Eval(src)
		checkErr := script.Check(src, limits)
		if err != nil {
			if !errors.Is(err, script.ErrSyntax) && !errors.Is(err, script.ErrSourceTooLarge) {
				t.Fatalf("untyped Eval error %v", err)
			}
			if checkErr == nil || checkErr.Error() != err.Error() {
				t.Fatalf("Eval error %v, Check error %v", err, checkErr)
			}
			return
		}
		if checkErr != nil {
			t.Fatalf("Check rejected what Eval ran: %v", checkErr)
		}
		for round := 0; ; round++ {
			if ev.Stop != nil && ev.Value.Kind() != script.KindError {
				t.Fatalf("stop %v with value %v", ev.Stop, ev.Value)
			}
			for _, d := range ev.Diagnostics {
				if d.Pos.Line < 1 || d.Pos.Column < 1 || d.Message == "" || strings.Contains(d.String(), "\x00(") {
					t.Fatalf("malformed diagnostic %+v", d)
				}
			}
			if !ev.Suspended {
				break
			}
			if round == 16 {
				m.Discard()
				break
			}
			outcome := script.Outcome{Output: "worker output"}
			if round%2 == 1 {
				outcome = script.Outcome{Err: script.Failed("worker failed")}
			}
			id := ev.Awaiting
			delete(h.pending, id)
			if outcome.Err == nil {
				h.settled[id] = outcome.Output
			}
			ev, err = m.Resume(id, outcome)
			if err != nil {
				t.Fatalf("Resume(%d): %v", id, err)
			}
		}
		if _, suspended := m.Suspended(); suspended {
			t.Fatal("machine still suspended")
		}
		// The machine is reusable after every kind of ending.
		if again, err := m.Eval("1"); err != nil || !again.Completed() {
			t.Fatalf("machine not reusable: %+v %v", again, err)
		}
	})
}
