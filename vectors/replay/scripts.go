package replay

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/splashv5/conform/impl/script"
	"github.com/splashv5/conform/vectors/vectorfmt"
)

func replayScripts(fsys fs.FS, fr *fileRun) error {
	var doc vectorfmt.Scripts
	if err := vectorfmt.Load(fsys, vectorfmt.ScriptsFile, &doc); err != nil {
		return err
	}
	return replayGroups(fr, doc.TestGroups, func(g *vectorfmt.ScriptGroup) ([]vectorfmt.ScriptTest, func(*vectorfmt.ScriptTest) (*vectorfmt.Case, []string), error) {
		if g.Type != vectorfmt.ScriptEvalType {
			return nil, nil, fmt.Errorf("unknown group type %q", g.Type)
		}
		return g.Tests, func(t *vectorfmt.ScriptTest) (*vectorfmt.Case, []string) { return &t.Case, checkScript(t) }, nil
	})
}

// scriptHost answers as a ScriptTest's tools say and records every call.
type scriptHost struct {
	tools    map[string]vectorfmt.ScriptTool
	promises []string // tool name per promise, promise ID i+1
	calls    []vectorfmt.ScriptCall
}

func (h *scriptHost) answer(name string) (string, error) {
	tool, ok := h.tools[name]
	switch {
	case !ok:
		return "", errors.New("tool call denied: unknown tool")
	case tool.Failure != "":
		return "", errors.New(tool.Failure)
	}
	return tool.Output, nil
}

func (h *scriptHost) CallTool(name, input string, format script.Format) (string, error) {
	h.calls = append(h.calls, vectorfmt.ScriptCall{Op: "call", Tool: name, Format: format.String(), Input: input})
	return h.answer(name)
}

func (h *scriptHost) StartTool(name, input string, format script.Format) (script.PromiseID, error) {
	h.calls = append(h.calls, vectorfmt.ScriptCall{Op: "start", Tool: name, Format: format.String(), Input: input})
	if _, ok := h.tools[name]; !ok {
		return 0, errors.New("tool call denied: unknown tool")
	}
	h.promises = append(h.promises, name)
	return script.PromiseID(len(h.promises)), nil
}

func (h *scriptHost) AwaitTool(id script.PromiseID) (string, bool, error) {
	h.calls = append(h.calls, vectorfmt.ScriptCall{Op: "await", Promise: uint64(id)})
	if id == 0 || int(id) > len(h.promises) {
		return "", true, errors.New("unknown tool promise")
	}
	name := h.promises[id-1]
	if h.tools[name].Deferred == "pending" {
		return "", false, nil
	}
	out, err := h.answer(name)
	return out, true, err
}

func checkScript(t *vectorfmt.ScriptTest) []string {
	h := &scriptHost{tools: map[string]vectorfmt.ScriptTool{}}
	for _, tool := range t.Tools {
		h.tools[tool.Name] = tool
	}
	// The injected clock stands still unless the test makes it advance after every reading.
	now := time.Unix(1_700_000_000, 0)
	step := time.Duration(t.ClockStepMillis) * time.Millisecond
	cfg := script.Config{Clock: func() time.Time {
		reading := now
		now = now.Add(step)
		return reading
	}}
	m, err := script.New(h, cfg)
	if err != nil {
		return []string{"creating the evaluator: " + err.Error()}
	}
	ev, err := m.Eval(string(t.Source))
	var problems []string
	if t.Result == vectorfmt.Invalid && t.Error == vectorfmt.ScriptSourceTooLarge {
		var tl *script.SourceTooLargeError
		if !errors.As(err, &tl) {
			return []string{fmt.Sprintf("expected the source refused as too large (%d bytes, at most %d); got %v", t.ActualBytes, t.MaximumBytes, err)}
		}
		problems = append(problems, compare("actual bytes", strconv.Itoa(t.ActualBytes), strconv.Itoa(tl.Actual))...)
		problems = append(problems, compare("maximum bytes", strconv.Itoa(t.MaximumBytes), strconv.Itoa(tl.Maximum))...)
		if len(h.calls) != 0 {
			problems = append(problems, fmt.Sprintf("a refused source called the host %d times", len(h.calls)))
		}
		return problems
	}
	if t.Result == vectorfmt.Invalid {
		var se *script.SyntaxError
		switch {
		case t.Error != vectorfmt.ScriptSyntaxRejected || t.RejectedAt == nil:
			return []string{fmt.Sprintf("an invalid script test must expect %s at a position", vectorfmt.ScriptSyntaxRejected)}
		case !errors.As(err, &se):
			return []string{fmt.Sprintf("expected the source rejected at line %d, column %d; got %v", t.RejectedAt.Line, t.RejectedAt.Column, err)}
		case int(se.Pos.Line) != t.RejectedAt.Line || t.RejectedAt.Column != 0 && int(se.Pos.Column) != t.RejectedAt.Column:
			problems = append(problems, fmt.Sprintf("expected the source rejected at line %d, column %d; got line %d, column %d (%s)", t.RejectedAt.Line, t.RejectedAt.Column, se.Pos.Line, se.Pos.Column, se.Message))
		}
		if t.RejectedNaming != "" && !strings.Contains(se.Message, t.RejectedNaming) {
			problems = append(problems, fmt.Sprintf("the rejection's message %q does not name %q", se.Message, t.RejectedNaming))
		}
		if len(h.calls) != 0 {
			problems = append(problems, fmt.Sprintf("a rejected source called the host %d times", len(h.calls)))
		}
		return problems
	}
	if err != nil {
		return []string{"expected the source to run; got " + err.Error()}
	}
	problems = append(problems, compareRun("", t.Status, t.ValueKind, t.Value, t.Diagnostics, ev)...)
	for i, run := range t.Runs {
		where := fmt.Sprintf("run %d (%s): ", i+2, run.Op)
		var ev script.Evaluation
		var err error
		switch run.Op {
		case vectorfmt.ScriptOpDiscard:
			m.Discard()
			continue
		case vectorfmt.ScriptOpEval:
			ev, err = m.Eval(run.Source)
		case vectorfmt.ScriptOpResume:
			outcome := script.Outcome{Output: run.Output}
			if run.Failure != "" {
				outcome = script.Outcome{Err: errors.New(run.Failure)}
			}
			ev, err = m.Resume(script.PromiseID(run.Promise), outcome)
		default:
			return append(problems, where+"unknown operation")
		}
		switch {
		case run.Refused && err == nil:
			problems = append(problems, where+"expected the run refused; it ran")
		case run.Refused && run.RefusedMessage != "" && err.Error() != run.RefusedMessage:
			problems = append(problems, fmt.Sprintf("%sexpected the refusal %q, got %q", where, run.RefusedMessage, err.Error()))
		case !run.Refused && err != nil:
			problems = append(problems, where+"expected the run to run; got "+err.Error())
		case !run.Refused:
			problems = append(problems, compareRun(where, run.Status, run.ValueKind, run.Value, run.Diagnostics, ev)...)
		}
	}
	problems = append(problems, compare("host calls", renderCalls(t.Calls), renderCalls(h.calls))...)
	return problems
}

// compareRun compares the outcome of one run with its expectation.
func compareRun(where, status, valueKind, value string, wantDiags []string, ev script.Evaluation) []string {
	var problems []string
	problems = append(problems, compare(where+"status", status, ev.Status().String())...)
	kind, text := scriptValue(ev.Value)
	problems = append(problems, compare(where+"value kind", valueKind, kind)...)
	problems = append(problems, compare(where+"value", value, text)...)
	var diags []string
	for i, d := range ev.Diagnostics {
		// An expected diagnostic whose position is "?" leaves the position open (the rules do
		// not fix where a stop is reported).
		if i < len(wantDiags) && strings.HasPrefix(wantDiags[i], d.File+":?: ") {
			diags = append(diags, d.File+":?: "+d.Message+" ("+d.Origin+")")
			continue
		}
		diags = append(diags, d.String())
	}
	return append(problems, compare(where+"diagnostics", strings.Join(wantDiags, "\n"), strings.Join(diags, "\n"))...)
}

func renderCalls(calls []vectorfmt.ScriptCall) string {
	var b strings.Builder
	for _, c := range calls {
		if c.Op == "await" {
			fmt.Fprintf(&b, "await %d\n", c.Promise)
			continue
		}
		fmt.Fprintf(&b, "%s %s %s %q\n", c.Op, c.Format, c.Tool, c.Input)
	}
	return b.String()
}

// scriptValue names the kind of a final value and, for nil, booleans, numbers and strings,
// writes it as ScriptTest.Value says.
func scriptValue(v script.Value) (kind, text string) {
	switch v.Kind() {
	case script.KindNil:
		return "nil", "null"
	case script.KindBool:
		return "bool", strconv.FormatBool(v.BoolValue())
	case script.KindNumber:
		return "number", scriptNumber(v.NumberValue())
	case script.KindString:
		return "string", strconv.Quote(v.Text())
	case script.KindArray:
		return "array", ""
	case script.KindRecord:
		return "record", ""
	case script.KindFunction:
		return "function", ""
	case script.KindModule:
		return "module", ""
	case script.KindPromise:
		return "promise", ""
	}
	return "error", ""
}

// scriptNumber writes f as to_json does (SCR-080): a whole number in plain decimal digits,
// another finite number in the shortest round-trip layout of ENC-009 to ENC-011; NaN and the
// infinities, which to_json refuses, as NaN, inf and -inf.
func scriptNumber(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case f == math.Trunc(f):
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	// Shortest digits and decimal exponent, then the layout of the canonical encoding:
	// positional from 1e-5 up to 1e16, exponent form (with '+' for a positive exponent) outside.
	e := strconv.FormatFloat(f, 'e', -1, 64)
	mant, expText, _ := strings.Cut(e, "e")
	exp, _ := strconv.Atoi(expText)
	if exp >= -5 && exp < 16 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	if exp > 0 {
		return mant + "e+" + strconv.Itoa(exp)
	}
	return mant + "e" + strconv.Itoa(exp)
}
