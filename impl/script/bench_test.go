package script

import (
	"strings"
	"testing"
)

// benchHost answers every call at once, so the benchmarks measure the evaluator alone.
type benchHost struct{ next PromiseID }

func (h *benchHost) CallTool(_, input string, _ Format) (string, error) { return input, nil }

func (h *benchHost) StartTool(string, string, Format) (PromiseID, error) {
	h.next++
	return h.next, nil
}

func (h *benchHost) AwaitTool(PromiseID) (string, bool, error) { return "", false, nil }

func benchMachine(b *testing.B) *Machine {
	m, err := New(&benchHost{}, Config{})
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// One whole evaluation of a one-call script: parse, compile, run, one tool.call.
func BenchmarkEvalOneToolCall(b *testing.B) {
	m := benchMachine(b)
	src := "use mod.tool\ntool.call(\"echo\", \"payload\")"
	b.ReportAllocs()
	for b.Loop() {
		if ev, err := m.Eval(src); err != nil || !ev.Completed() {
			b.Fatal(ev, err)
		}
	}
}

// The marginal cost of one tool.call inside a script of 100 calls (parse and compile
// included, spread over the calls).
func BenchmarkToolCallInScript(b *testing.B) {
	const calls = 100
	m := benchMachine(b)
	src := "use mod.tool\n" + strings.Repeat("tool.call(\"echo\", \"payload\")\n", calls)
	b.ReportAllocs()
	for b.Loop() {
		if ev, err := m.Eval(src); err != nil || !ev.Completed() {
			b.Fatal(ev, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*calls), "ns/call")
}

// The same 100 calls through call_json with a small record input.
func BenchmarkToolCallJSONInScript(b *testing.B) {
	const calls = 100
	m := benchMachine(b)
	src := "use mod.tool\n" + strings.Repeat("tool.call_json(\"math.add\", {left: 20, right: 22})\n", calls)
	b.ReportAllocs()
	for b.Loop() {
		if ev, err := m.Eval(src); err != nil || !ev.Completed() {
			b.Fatal(ev, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*calls), "ns/call")
}

// One deferred call: start, await (suspends), Resume with the output.
func BenchmarkStartAwaitResume(b *testing.B) {
	m := benchMachine(b)
	src := "use mod.tool\ntool.start(\"text.remote\", \"release\").await()"
	b.ReportAllocs()
	for b.Loop() {
		ev, err := m.Eval(src)
		if err != nil || !ev.Suspended {
			b.Fatal(ev, err)
		}
		if ev, err = m.Resume(ev.Awaiting, Outcome{Output: "done"}); err != nil || !ev.Completed() {
			b.Fatal(ev, err)
		}
	}
}

// The run-time cost of one tool.call: a compiled 100-call program executed again and again
// (no parsing or compiling in the loop).
func BenchmarkRunToolCall(b *testing.B) {
	const calls = 100
	m := benchMachine(b)
	stmts, err := parse("use mod.tool\n"+strings.Repeat("tool.call(\"echo\", \"payload\")\n", calls), m.limits)
	if err != nil {
		b.Fatal(err)
	}
	prog := compile(stmts)
	b.ReportAllocs()
	for b.Loop() {
		if ev := m.start(prog); !ev.Completed() {
			b.Fatal(ev)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*calls), "ns/call")
}

// The run-time cost of one tool.call_json with a small record input (the record literal, its
// JSON text and the output string), compiled once.
func BenchmarkRunToolCallJSON(b *testing.B) {
	const calls = 100
	m := benchMachine(b)
	stmts, err := parse("use mod.tool\n"+strings.Repeat("tool.call_json(\"math.add\", {left: 20, right: 22})\n", calls), m.limits)
	if err != nil {
		b.Fatal(err)
	}
	prog := compile(stmts)
	b.ReportAllocs()
	for b.Loop() {
		if ev := m.start(prog); !ev.Completed() {
			b.Fatal(ev)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*calls), "ns/call")
}

// Parsing and compiling alone, for comparison with the runs above.
func BenchmarkParseCompile(b *testing.B) {
	src := "use mod.tool\n" + strings.Repeat("tool.call(\"echo\", \"payload\")\n", 100)
	limits := DefaultLimits()
	b.ReportAllocs()
	for b.Loop() {
		stmts, err := parse(src, limits)
		if err != nil {
			b.Fatal(err)
		}
		compile(stmts)
	}
}
