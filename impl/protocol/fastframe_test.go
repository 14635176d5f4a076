package protocol

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
)

// fastFrameLines returns lines in the layout decodeFrameFast reads (sealed by this package)
// and variations around it that it must leave to the general decoder.
func fastFrameLines(t testing.TB) (taken, declined []string) {
	t.Helper()
	obj := canonjson.Object(
		canonjson.Entry{Key: "a", Value: canonjson.Array(canonjson.Uint(1), canonjson.String("x\"y\n"), canonjson.Null())},
		canonjson.Entry{Key: "b", Value: canonjson.Bool(true)},
	)
	payloads := []ToolPayload{
		JSONPayload(obj),
		JSONPayload(canonjson.Array()),
		TextPayload("plain text"),
		TextPayload("naïve ü €"),
		TextPayload(""),
	}
	host, worker := testAuthPair(t)
	for _, p := range payloads {
		inv, err := NewToolInvocation("session-1", "request-1", "json.tool", p)
		if err != nil {
			t.Fatal(err)
		}
		_, line, err := host.Seal(InvokeMessage{Invocation: inv})
		if err != nil {
			t.Fatal(err)
		}
		taken = append(taken, string(line))
		_, line, err = worker.Seal(ResultMessage{Result: ToolResult{ProtocolVersion, "session-1", "request-1", p}})
		if err != nil {
			t.Fatal(err)
		}
		taken = append(taken, string(line))
	}
	base := taken[0]
	edit := func(old, new string) string {
		if !strings.Contains(base, old) {
			t.Fatalf("%q is not in %s", old, base)
		}
		return strings.Replace(base, old, new, 1)
	}
	tag := base[strings.Index(base, `"auth_tag":"`)+len(`"auth_tag":"`) : len(base)-2]
	// A payload of d nested arrays inside the frame's four containers: 123 is the deepest
	// the nesting limit (127 open at once) allows, so the fast path must take it and leave 124.
	nested := func(d int) string {
		return edit(`{"format":"json","value":{"a":[1,"x\"y\n",null],"b":true}}`,
			`{"format":"json","value":`+strings.Repeat("[", d)+strings.Repeat("]", d)+`}`)
	}
	taken = append(taken, nested(123))
	// The reference's own messages: its result takes the fast path; its open_session and
	// dispatch_operation, and its text invoke (whose text holds escapes), are left to the
	// general decoder.
	vectorLine := func(msg string) string {
		return `{"sequence":3,"message":` + msg + `,"auth_tag":"` + vector1Tag + `"}`
	}
	taken = append(taken, vectorLine(vector3Message))
	declined = []string{
		edit(`{"sequence":1,`, `{"sequence":01,`),
		edit(`{"sequence":1,`, `{"sequence":0,`),
		edit(`{"sequence":1,`, `{"sequence":1.0,`),
		edit(`{"sequence":1,`, `{"sequence":18446744073709551616,`),
		edit(`{"sequence":1,`, `{ "sequence":1,`),
		edit(`"protocol_version":5`, `"protocol_version":6`),
		edit(`"protocol_version":5`, `"protocol_version":65536`),
		edit(`"session_id":"session-1"`, `"session_id":"session\u002d1"`),
		edit(`"request_id":"request-1"`, `"request_id":"req\u0001"`),
		edit(`"request_id":"request-1"`, "\"request_id\":\"req\xff\""),
		edit(`"tool":"json.tool"`, `"tool":""`),
		edit(`{"format":"json","value":{"a"`, `{"format":"json","value": {"a"`),
		edit(`{"a":[1,`, `{"a":[1e2,`),
		edit(`"b":true}`, `"b":true,"a":1}`),
		edit(`{"format":"json","value":{"a":[1,"x\"y\n",null],"b":true}}`, `{"format":"json","value":7}`),
		edit(`{"format":"json","value":`, `{"value":`),
		edit(`"type":"invoke","invocation":{`, `"type":"invoke","invocation":{"extra":1,`),
		edit(tag, strings.ToUpper(tag)),
		edit(tag, tag[:62]),
		nested(124),
		vectorLine(vector1Message),
		vectorLine(vector2Message),
		vectorLine(vector4Message),
		base + " ",
		base[:len(base)-1],
		strings.Replace(base, `{"sequence":1,"message":`, `{"message":`, 1)[:len(base)-len(`"sequence":1,`)-2] + `,"sequence":1}`,
	}
	return taken, declined
}

// agreeFast fails t unless decodeFrameFast, when it accepts line, decodes exactly what the
// general decoder does, and keeps no byte of the line it read: the line is overwritten once
// decoded, as a reader reusing its buffer does. Decoding an invoke into a box, knowing the
// session id, must give the same invocation. It reports whether the fast path accepted the
// line.
func agreeFast(t *testing.T, line []byte, mode canonjson.Mode) bool {
	t.Helper()
	buf := bytes.Clone(line)
	fast, message, ok := decodeFrameFast(buf, mode, "", nil)
	if !ok {
		return false
	}
	if got := fast.Message.AppendJSON(nil); !bytes.Equal(got, message) {
		t.Fatalf("%v: fast path gave the message as %q, which writes %s", mode, message, got)
	}
	var box InvokeMessage
	boxed, _, ok := decodeFrameFast(buf, mode, fast.Message.SessionID(), &box)
	if !ok {
		t.Fatalf("%v: fast path declined, with a box, a line it took without one: %q", mode, line)
	}
	inv, isInvoke := fast.Message.(InvokeMessage)
	if isInvoke && boxed.Message != Message(&box) {
		t.Fatalf("%v: an invoke decoded with a box is not in the box: %#v", mode, boxed.Message)
	}
	for i := range buf {
		buf[i] = '#'
	}
	if got := fast.AppendJSON(nil); !bytes.Equal(got, line) {
		t.Fatalf("%v: fast path accepted a line that is not its frame's encoding, or kept bytes of the line (%s): %q", mode, got, line)
	}
	if got := boxed.AppendJSON(nil); !bytes.Equal(got, line) {
		t.Fatalf("%v: decoded with a box, the frame writes %s, or kept bytes of the line: %q", mode, got, line)
	}
	if isInvoke && box.Invocation.SessionID != inv.Invocation.SessionID {
		t.Fatalf("%v: the boxed invocation names session %q, not %q", mode, box.Invocation.SessionID, inv.Invocation.SessionID)
	}
	general, err := decodeFrameGeneral(line, mode)
	if err != nil {
		t.Fatalf("%v: fast path accepted a line the general decoder refuses (%v): %q", mode, err, line)
	}
	if fast.Sequence != general.Sequence || fast.Tag != general.Tag ||
		reflect.TypeOf(fast.Message) != reflect.TypeOf(general.Message) {
		t.Fatalf("%v: fast frame %+v, general %+v", mode, fast, general)
	}
	if got, want := fast.AppendJSON(nil), general.AppendJSON(nil); !bytes.Equal(got, want) {
		t.Fatalf("%v: fast frame writes %s, general %s", mode, got, want)
	}
	p, _ := PayloadOf(fast.Message)
	q, _ := PayloadOf(general.Message)
	if !p.Equal(q) || p.JSON.IsDeferred() != q.JSON.IsDeferred() {
		t.Fatalf("%v: payloads differ (deferred %v, %v)", mode, p.JSON.IsDeferred(), q.JSON.IsDeferred())
	}
	if canonjson.HoldsPreserveOnlyNumber(p.JSON) != canonjson.HoldsPreserveOnlyNumber(q.JSON) {
		t.Fatalf("%v: the payloads disagree on holding a Preserve-only number", mode)
	}
	return true
}

// TestFastFrameAgrees holds the fast path to the general decoder: the sealed invoke and
// result frames take it and decode to the same frames, and every variation it must not
// read (escapes, whitespace, reordered or extra fields, a non-canonical or scalar payload, a
// payload nested past the limit, a malformed tag or sequence) is left to the general decoder.
//
// Spec: FRM-001
func TestFastFrameAgrees(t *testing.T) {
	taken, declined := fastFrameLines(t)
	for _, mode := range []canonjson.Mode{canonjson.Preserve, canonjson.Lossy} {
		for _, line := range taken {
			if !agreeFast(t, []byte(line), mode) {
				t.Errorf("%v: fast path declined a sealed frame: %s", mode, line)
			}
			f, err := DecodeFrame([]byte(line), mode)
			if err != nil {
				t.Fatalf("%v: DecodeFrame: %v", mode, err)
			}
			if p, _ := PayloadOf(f.Message); p.Format == FormatJSON && !p.JSON.IsDeferred() {
				t.Errorf("%v: a canonical payload container was not kept deferred: %s", mode, line)
			}
		}
		for _, line := range declined {
			if agreeFast(t, []byte(line), mode) {
				t.Errorf("%v: fast path took a line it must leave to the general decoder: %s", mode, line)
			}
		}
	}
}

// FuzzFastFrameAgrees holds decodeFrameFast to the general decoder on any line: when the
// fast path accepts a line, the general decoder accepts it too and decodes the same frame.
//
// Spec: FRM-001
func FuzzFastFrameAgrees(f *testing.F) {
	taken, declined := fastFrameLines(f)
	for _, s := range append(taken, declined...) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		for _, mode := range []canonjson.Mode{canonjson.Preserve, canonjson.Lossy} {
			agreeFast(t, line, mode)
		}
	})
}
