package script

import (
	"fmt"
	"slices"
)

// fakeTool is one tool of the in-memory host. A host-pump tool runs handler when called or
// pumped; an external tool only settles when the test completes it.
type fakeTool struct {
	external bool
	json     bool
	handler  func(input string) (string, error)
}

type fakeRecord struct {
	tool     string
	input    string
	format   Format
	external bool
	claimed  bool
	settled  bool
	output   string
	err      error
	waiter   bool
}

// hostCall is one call the evaluator made, as the host saw it.
type hostCall struct {
	Op     string // "call", "start" or "await"
	Tool   string
	Input  string
	Format Format
	ID     PromiseID
}

// fakeHost is a tiny capability runtime: it keeps promise records like the reference host
// (pending until settled, settled records kept until collected, one waiter at a time) and
// resumes the machine when a record it waits on settles.
type fakeHost struct {
	t       reporter
	tools   map[string]fakeTool
	next    PromiseID
	records map[PromiseID]*fakeRecord
	log     []hostCall
	machine *Machine
}

// reporter is the part of testing.TB (and rapid.T) the fake host uses.
type reporter interface {
	Helper()
	Fatalf(format string, args ...any)
}

func newFakeHost(t reporter) *fakeHost {
	return &fakeHost{t: t, tools: map[string]fakeTool{}, records: map[PromiseID]*fakeRecord{}}
}

// newMachine returns a machine bound to h with the given limits (zero means defaults).
func (h *fakeHost) newMachine(limits Limits) *Machine {
	h.t.Helper()
	m, err := New(h, Config{Limits: limits})
	if err != nil {
		h.t.Fatalf("New: %v", err)
	}
	h.machine = m
	return m
}

func (h *fakeHost) addExternal(name string, json bool) {
	h.tools[name] = fakeTool{external: true, json: json}
}

func (h *fakeHost) addPump(name string, json bool, handler func(string) (string, error)) {
	h.tools[name] = fakeTool{json: json, handler: handler}
}

func (h *fakeHost) CallTool(name, input string, format Format) (string, error) {
	h.log = append(h.log, hostCall{Op: "call", Tool: name, Input: input, Format: format})
	tool, ok := h.tools[name]
	switch {
	case !ok:
		return "", Denied("tool is not granted: " + name)
	case tool.external:
		return "", Denied("external tool requires tool.start: " + name)
	case format == FormatJSON && !tool.json:
		return "", Denied("tool is not a JSON tool: " + name)
	}
	out, err := tool.handler(input)
	if err != nil {
		return "", Failed(err.Error())
	}
	return out, nil
}

func (h *fakeHost) StartTool(name, input string, format Format) (PromiseID, error) {
	h.log = append(h.log, hostCall{Op: "start", Tool: name, Input: input, Format: format})
	tool, ok := h.tools[name]
	switch {
	case !ok:
		return 0, Denied("tool is not granted: " + name)
	case format == FormatJSON && !tool.json:
		return 0, Denied("tool is not a JSON tool: " + name)
	}
	h.next++
	h.records[h.next] = &fakeRecord{tool: name, input: input, format: format, external: tool.external}
	return h.next, nil
}

func (h *fakeHost) AwaitTool(id PromiseID) (string, bool, error) {
	h.log = append(h.log, hostCall{Op: "await", ID: id})
	r, ok := h.records[id]
	switch {
	case !ok:
		return "", false, ErrUnknownPromise
	case r.settled:
		return r.output, true, r.err
	case r.waiter:
		return "", false, ErrPromiseAlreadyAwaited
	}
	r.waiter = true
	return "", false, nil
}

// claimNext returns the lowest queued external promise and marks it claimed.
func (h *fakeHost) claimNext() (PromiseID, bool) {
	ids := make([]PromiseID, 0, len(h.records))
	for id, r := range h.records {
		if r.external && !r.claimed && !r.settled {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return 0, false
	}
	id := slices.Min(ids)
	h.records[id].claimed = true
	return id, true
}

// complete settles a promise; when the suspended evaluation waits on it, it resumes the
// machine and returns the resumed evaluation with resumed=true.
func (h *fakeHost) complete(id PromiseID, output string, err error) (ev Evaluation, resumed bool) {
	h.t.Helper()
	r, ok := h.records[id]
	if !ok || r.settled {
		h.t.Fatalf("complete(%d): no pending record", id)
	}
	r.settled, r.output, r.err = true, output, err
	if !r.waiter {
		return Evaluation{}, false
	}
	r.waiter = false
	ev, rerr := h.machine.Resume(id, Outcome{Output: output, Err: err})
	if rerr != nil {
		h.t.Fatalf("Resume(%d): %v", id, rerr)
	}
	return ev, true
}

// pump runs every pending host-pump promise in ID order and returns the last resumed
// evaluation, if any.
func (h *fakeHost) pump() (last Evaluation, resumed bool) {
	h.t.Helper()
	ids := make([]PromiseID, 0)
	for id, r := range h.records {
		if !r.external && !r.settled {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		r := h.records[id]
		out, err := h.tools[r.tool].handler(r.input)
		if err != nil {
			err = Failed(err.Error())
		}
		if ev, ok := h.complete(id, out, err); ok {
			last, resumed = ev, true
		}
	}
	return last, resumed
}

// collect drops settled records nobody waits on, like the reference host's garbage collection.
func (h *fakeHost) collect() {
	for id, r := range h.records {
		if r.settled && !r.waiter {
			delete(h.records, id)
		}
	}
}

// ops returns the log rendered compactly for comparisons.
func (h *fakeHost) ops() []string {
	out := make([]string, len(h.log))
	for i, c := range h.log {
		switch c.Op {
		case "await":
			out[i] = fmt.Sprintf("await %d", c.ID)
		default:
			out[i] = fmt.Sprintf("%s %s %s %q", c.Op, c.Format, c.Tool, c.Input)
		}
	}
	return out
}

// echo is a host-pump handler returning its input.
func echo(input string) (string, error) { return input, nil }
