package script

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

// Spec: SCR-060, SCR-061, SCR-100
func TestToolCallAndCallJSON(t *testing.T) {
	h := newFakeHost(t)
	h.addPump("echo", false, echo)
	// math.add decodes its JSON input independently and returns the sum as JSON text.
	h.addPump("math.add", true, func(in string) (string, error) {
		var req struct{ Left, Right float64 }
		if err := json.Unmarshal([]byte(in), &req); err != nil {
			return "", err
		}
		out, _ := json.Marshal(map[string]float64{"total": req.Left + req.Right})
		return string(out), nil
	})
	m := h.newMachine(Limits{})

	// The canonical workflow example of the grammar documentation.
	ev, err := m.Eval(`use mod.tool
use mod.std.assert

let values = [20, 22]
let request = {left: values[0], right: values[1]}
let raw = tool.call_json("math.add", request)
let result = raw.parse_json()

fn valid_total(value) {
    return value == 42
}

assert(valid_total(result.total))
[raw, tool.call("echo", "plain text")]`)
	if err != nil {
		t.Fatal(err)
	}
	want := Array(String(`{"total":42}`), String("plain text"))
	if !ev.Completed() || !Equal(ev.Value, want) {
		t.Fatalf("evaluation %+v, want value %v", ev, want)
	}
	wantOps := []string{`call json math.add "{\"left\":20,\"right\":22}"`, `call text echo "plain text"`}
	if got := h.ops(); !slices.Equal(got, wantOps) {
		t.Fatalf("host saw %q, want %q", got, wantOps)
	}
}

// The tool-input writer reproduces the reference VM's raw serializer byte for byte.
//
// Spec: SCR-061, SCR-063
func TestToolInputJSONWriter(t *testing.T) {
	tests := []struct {
		value string // script expression
		want  string // exact input text the host receives
	}{
		{"nil", "null"},
		{"true", "true"},
		{"[1, 0.5, -0, 1e21, 1e-7, 123.456, 2.5e-5]", "[1,0.5,-0,1000000000000000000000,0.0000001,123.456,0.000025]"},
		{"[0 / 0, 1 / 0, -1 / 0]", "[NaN,inf,-inf]"},
		// Only " \b \f \n \r are escaped; a backslash, a tab and other controls pass raw.
		{`"q\"\\` + `\t\n\r\u{8}\u{c}\u{1}é"`, "\"q\\\"\\\t\\n\\r\\b\\f\x01é\""},
		{"{b: [1, {}], a: \"x\"}", `{"b":[1,{}],"a":"x"}`},
		{"[]", "[]"},
		{`"plain"`, `"plain"`},
	}
	for _, tc := range tests {
		h := newFakeHost(t)
		h.addPump("j", true, echo)
		m := h.newMachine(Limits{})
		ev, err := m.Eval("use mod.tool\ntool.call_json(\"j\", " + tc.value + ")")
		if err != nil || !ev.Completed() {
			t.Fatalf("%s: %+v %v", tc.value, ev, err)
		}
		if len(h.log) != 1 || h.log[0].Input != tc.want || h.log[0].Format != FormatJSON {
			t.Fatalf("%s: host received %q, want %q", tc.value, h.log[0].Input, tc.want)
		}
		// The output is returned as a string, not parsed.
		if ev.Value.Kind() != KindString || ev.Value.Text() != tc.want {
			t.Fatalf("%s: value %v", tc.value, ev.Value)
		}
	}
}

// More of the raw serializer, each expectation checked against the reference: numbers use
// the shortest round-trip digits in plain decimal notation (no exponent, no trailing ".0"),
// strings escape only `"`, backspace, form feed, line feed and carriage return, containers nest
// without spaces.
//
// Spec: SCR-061, SCR-062, SCR-063
func TestToolInputJSONReferenceLayout(t *testing.T) {
	tests := []struct {
		value string // script expression
		want  string // exact input text the host receives
	}{
		{"false", "false"},
		{"[1.0, -0.0, 42, -42, -2.5, 0.1]", "[1,-0,42,-42,-2.5,0.1]"},
		{"[1e16, 1e22, 1099511627776, 9007199254740993]", "[10000000000000000,10000000000000000000000,1099511627776,9007199254740992]"},
		{"[0.000001, 1e-7, 123.456]", "[0.000001,0.0000001,123.456]"},
		{"1.5e300", "15" + strings.Repeat("0", 299)},
		{"5e-324", "0." + strings.Repeat("0", 323) + "5"},
		{"[0 / 0, -(0 / 0)]", "[NaN,NaN]"},
		// DEL, U+2028 and "/" are copied raw, like every other character not listed above.
		{`"\u{7f}\u{2028}/"`, "\"\x7f\u2028/\""},
		{`"a\\b"`, `"a\b"`},
		{"[[1, 2], [3]]", "[[1,2],[3]]"},
		{"[nil, true]", "[null,true]"},
		{"{}", "{}"},
		// The reference's field order is its hash map's; these records come out in insertion
		// order there too.
		{"{z: 1, a: 2}", `{"z":1,"a":2}`},
		{"{a: 1, b: 2}", `{"a":1,"b":2}`},
		{"{b: 1, a: 2}", `{"b":1,"a":2}`},
		{"{left: 20, right: 22}", `{"left":20,"right":22}`},
		{`{a: [1, {b: nil}], c: "x"}`, `{"a":[1,{"b":null}],"c":"x"}`},
		// Here the reference writes left first; the subset keeps insertion order (SCR-063).
		{"{right: 22, left: 20}", `{"right":22,"left":20}`},
	}
	for _, tc := range tests {
		for _, method := range []string{"call_json", "start_json"} {
			h := newFakeHost(t)
			h.addPump("j", true, echo)
			m := h.newMachine(Limits{})
			ev, err := m.Eval("use mod.tool\ntool." + method + "(\"j\", " + tc.value + ")")
			if err != nil || !ev.Completed() {
				t.Fatalf("%s %s: %+v %v", method, tc.value, ev, err)
			}
			if len(h.log) != 1 || h.log[0].Input != tc.want || h.log[0].Format != FormatJSON {
				t.Fatalf("%s %s: host received %+v, want %q", method, tc.value, h.log, tc.want)
			}
		}
	}
}

// Spec: SCR-064, SCR-065, SCR-062, SCR-100
func TestToolArgumentChecks(t *testing.T) {
	tests := []struct {
		name string
		call string
		msg  string
	}{
		{"number name", `tool.call(1, "x")`, "tool call denied: tool API expects a string value"},
		{"number input", `tool.call("echo", 1)`, "tool call denied: tool API expects a string value"},
		{"record input", `tool.call("echo", {a: 1})`, "tool call denied: tool API expects a string value"},
		{"missing input", `tool.call("echo")`, "tool call denied: tool API expects a string value"},
		{"no arguments", `tool.start()`, "tool call denied: tool API expects a string value"},
		{"start number input", `tool.start("echo", nil)`, "tool call denied: tool API expects a string value"},
		{"json name", `tool.call_json(nil, {})`, "tool call denied: tool API expects a string value"},
		{"name checked first", `tool.call_json(1, tool)`, "tool call denied: tool API expects a string value"},
		{"function input", "tool.call_json(\"j\", {f: f})", "tool call denied: tool API expects a JSON-serializable value"},
		{"module input", `tool.start_json("j", [tool])`, "tool call denied: tool API expects a JSON-serializable value"},
		{"promise input", `tool.call_json("j", tool.start("echo", "x"))`, "tool call denied: tool API expects a JSON-serializable value"},
		{"three arguments", `tool.call("echo", "x", "y")`, "`tool.call` takes 2 arguments but 3 were given"},
		{"three json arguments", `tool.start_json("j", 1, 2)`, "`tool.start_json` takes 2 arguments but 3 were given"},
		{"await argument", `tool.start("echo", "x").await(1)`, "`await` takes 0 arguments but 1 were given"},
		{"to_json argument", `(1).to_json(2)`, "`to_json` takes 0 arguments but 1 were given"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newFakeHost(t)
			h.addPump("echo", false, echo)
			h.addPump("j", true, echo)
			m := h.newMachine(Limits{})
			ev, err := m.Eval("use mod.tool\nfn f() {\n}\n" + tc.call)
			if err != nil {
				t.Fatal(err)
			}
			if ev.Succeeded() || len(ev.Diagnostics) != 1 || ev.Diagnostics[0].Message != tc.msg {
				t.Fatalf("evaluation %+v, want the error %q", ev, tc.msg)
			}
			for _, c := range h.log {
				if c.Op == "call" || (c.Op == "start" && c.Tool != "echo") {
					t.Fatalf("host was called: %q", h.ops())
				}
			}
		})
	}
}

// Spec: SCR-062, SCR-065
func TestToolHostDenials(t *testing.T) {
	h := newFakeHost(t)
	h.addExternal("text.remote", false)
	h.addPump("text.local", false, echo)
	h.addPump("fails", false, func(string) (string, error) { return "", errors.New("disk full") })
	m := h.newMachine(Limits{})
	ev, err := m.Eval(`use mod.tool
let denied_start = try tool.start("unknown", "x") catch "no promise"
let json_start = try tool.start_json("text.local", {}) catch "no json"
let external_call = try tool.call("text.remote", "x") catch "external denied"
[denied_start, json_start, external_call]
tool.call("fails", "x")`)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Succeeded() || len(ev.Diagnostics) != 1 || ev.Diagnostics[0].String() != "inline.splash:6:6: tool call failed: disk full (mod.tool)" {
		t.Fatalf("evaluation %+v", ev)
	}
	want := []string{
		`start text unknown "x"`, `start json text.local "{}"`, `call text text.remote "x"`, `call text fails "x"`,
	}
	if got := h.ops(); !slices.Equal(got, want) {
		t.Fatalf("host saw %q, want %q", got, want)
	}
	if len(h.records) != 0 {
		t.Fatalf("a denied start left a record: %v", h.records)
	}
	ev, _ = m.Eval(`use mod.tool
[try tool.start("unknown", "x") catch "no promise", try tool.call("text.remote", "x") catch "external denied"]`)
	if !Equal(ev.Value, Array(String("no promise"), String("external denied"))) {
		t.Fatalf("recovered values %v", ev.Value)
	}
}

// Spec: SCR-065
func TestToolErrorRendering(t *testing.T) {
	tests := []struct {
		err  *ToolError
		want string
		kind string
	}{
		{Denied("call budget exhausted"), "tool call denied: call budget exhausted", "Denied"},
		{Failed("exit status 3"), "tool call failed: exit status 3", "Failed"},
		{Cancelled(), "tool call cancelled: external operation was reported cancelled", "Cancelled"},
		{TimedOut("text.remote"), "tool call timed out: text.remote exceeded its deferred deadline", "TimedOut"},
	}
	for _, tc := range tests {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
		if got := tc.err.Kind.String(); got != tc.kind {
			t.Errorf("Kind = %q, want %q", got, tc.kind)
		}
	}
	if FormatText.String() != "text" || FormatJSON.String() != "json" {
		t.Fatal("format names")
	}
}

// A bound tool method (read as a field and called later) behaves like the direct call.
//
// Spec: SCR-060, SCR-062
func TestBoundToolMethods(t *testing.T) {
	h := newFakeHost(t)
	h.addPump("echo", false, echo)
	m := h.newMachine(Limits{})
	ev, err := m.Eval("use mod.tool\nlet call = tool.call\nlet start = tool.start\nlet p = start(\"echo\", \"later\")\n[call(\"echo\", \"now\"), p]")
	if err != nil || !ev.Completed() {
		t.Fatalf("%+v %v", ev, err)
	}
	if got := ev.Value.Elems(); len(got) != 2 || got[0].Text() != "now" || got[1].Kind() != KindPromise {
		t.Fatalf("value %v", ev.Value)
	}
	if id, _ := ev.Value.Elems()[1].Promise(); id != 1 {
		t.Fatalf("promise id %d", id)
	}
}

// reenteringHost calls back into the machine from inside a tool call.
type reenteringHost struct {
	fakeHost
	m    *Machine
	errs []error
}

func (h *reenteringHost) CallTool(name, input string, format Format) (string, error) {
	_, errEval := h.m.Eval("1")
	_, errResume := h.m.Resume(1, Outcome{})
	h.m.Discard()
	h.errs = append(h.errs, errEval, errResume)
	return "\xffok\xfe", nil
}

// A host callback cannot re-enter the running machine, and host text that is not UTF-8 reads
// with U+FFFD in place of the invalid bytes.
//
// Spec: SCR-100, SCR-060
func TestHostCallbacksCannotReenter(t *testing.T) {
	h := &reenteringHost{fakeHost: *newFakeHost(t)}
	m, err := New(h, Config{})
	if err != nil {
		t.Fatal(err)
	}
	h.m = m
	ev, err := m.Eval("use mod.tool\nlet out = tool.call(\"any\", \"x\")\n[out, 2]")
	if err != nil || !ev.Completed() {
		t.Fatalf("evaluation %+v %v", ev, err)
	}
	if got := ev.Value.Elems()[0].Text(); got != "\uFFFDok\uFFFD" {
		t.Fatalf("output %q", got)
	}
	if len(h.errs) != 2 || !errors.Is(h.errs[0], ErrReentered) || !errors.Is(h.errs[1], ErrReentered) {
		t.Fatalf("re-entry errors %v", h.errs)
	}
}
