package worker

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
)

// frameFixture is a check context and a worker with a real session key but no process, for
// recording frames by hand.
type frameFixture struct {
	t      *T
	w      *Worker
	host   *protocol.Authenticator // seals as the runner does
	worker *protocol.Authenticator // seals as a worker does
}

const fixtureSession = "conf-fixture"

func newFrameFixture(tb testing.TB) *frameFixture {
	tb.Helper()
	key, err := protocol.GenerateSessionKey()
	if err != nil {
		tb.Fatal(err)
	}
	host, err := protocol.NewAuthenticator(fixtureSession, key, protocol.RoleHost, canonjson.Preserve)
	if err != nil {
		tb.Fatal(err)
	}
	worker, err := protocol.NewAuthenticator(fixtureSession, key, protocol.RoleWorker, canonjson.Preserve)
	if err != nil {
		tb.Fatal(err)
	}
	check := &Check{ID: "CNF-FRAME-99"}
	ct := &T{check: check, run: &runState{}, started: time.Now()}
	f := &frameFixture{t: ct, host: host, worker: worker}
	f.w = &Worker{t: ct, index: 1, SessionID: fixtureSession, key: key}
	tb.Cleanup(func() { _ = key.Close() })
	return f
}

// record logs a transcript line for data and records it, as the worker's write and read paths
// do.
func (f *frameFixture) record(sent bool, kind string, data []byte) *conformance.FrameRecord {
	arrow := "←"
	if sent {
		arrow = "→"
	}
	before := len(f.t.frames)
	f.t.Logf("%s worker %d: %s", arrow, f.w.index, conformance.Clip(string(data), 300))
	f.t.recordFrame(f.w, sent, kind, data)
	if len(f.t.frames) == before {
		return nil
	}
	return &f.t.frames[len(f.t.frames)-1]
}

func (f *frameFixture) invoke(tb testing.TB, id, text string) protocol.Message {
	tb.Helper()
	inv, err := protocol.NewToolInvocation(fixtureSession, id, "conf.text.echo", protocol.TextPayload(text))
	if err != nil {
		tb.Fatal(err)
	}
	return protocol.InvokeMessage{Invocation: inv}
}

func (f *frameFixture) result(tb testing.TB, id, text string) protocol.Message {
	tb.Helper()
	res, err := protocol.NewToolResult(fixtureSession, id, protocol.TextPayload(text))
	if err != nil {
		tb.Fatal(err)
	}
	return protocol.ResultMessage{Result: res}
}

func seal(tb testing.TB, a *protocol.Authenticator, m protocol.Message) []byte {
	tb.Helper()
	_, line, err := a.Seal(m)
	if err != nil {
		tb.Fatal(err)
	}
	return line
}

// flipLastTagDigit changes the last hex digit of a frame line's tag.
func flipLastTagDigit(line []byte) []byte {
	out := bytes.Clone(line)
	i := bytes.LastIndexByte(out, '"') - 1
	if out[i] == '0' {
		out[i] = '1'
	} else {
		out[i] = '0'
	}
	return out
}

// Spec: FRM-007
// TestFrameRecords checks what the runner keeps of each frame: the raw line, the decoded frame
// and whether its tag verifies for the sender's role, and the exact tag input where it does not.
func TestFrameRecords(t *testing.T) {
	f := newFrameFixture(t)
	good := seal(t, f.host, f.invoke(t, "req-1", "hello"))
	rec := f.record(true, conformance.FrameLine, good)
	if rec == nil || !rec.Decoded || !rec.TagVerified || rec.TagInput != "" || rec.Sequence != 1 || rec.MessageType != "invoke" {
		t.Fatalf("a sealed host frame: %+v", rec)
	}
	if string(rec.Raw) != string(good) || rec.Size != len(good) || rec.Entry != 0 || rec.Direction() != "sent" {
		t.Errorf("raw %q size %d entry %d direction %s", rec.Raw, rec.Size, rec.Entry, rec.Direction())
	}

	second := f.invoke(t, "req-2", "tampered")
	bad := flipLastTagDigit(seal(t, f.host, second))
	rec = f.record(true, conformance.FrameLine, bad)
	wantMessage := `{"type":"invoke","invocation":{"protocol_version":5,"session_id":"conf-fixture","request_id":"req-2","tool":"conf.text.echo","payload":{"format":"text","value":"tampered"}}}`
	wantInput := `{"domain":"splash-worker-auth-v5","protocol_version":5,"sender":"host","sequence":2,"session_id":"conf-fixture","message":` + wantMessage + `}`
	if !rec.Decoded || rec.TagVerified || !rec.Failing() {
		t.Fatalf("a host frame with a wrong tag digit: %+v", rec)
	}
	if rec.Message != wantMessage || rec.TagInput != wantInput {
		t.Errorf("message %s\ntag input %s\nwant %s", rec.Message, rec.TagInput, wantInput)
	}

	// A frame the worker sealed verifies as received, not as sent: the role is in the input.
	answer := seal(t, f.worker, f.result(t, "req-1", "hello"))
	if rec = f.record(false, conformance.FrameLine, answer); !rec.TagVerified || rec.Direction() != "received" {
		t.Errorf("a worker frame, received: %+v", rec)
	}
	if rec = f.record(true, conformance.FrameLine, answer); rec.TagVerified || !strings.Contains(rec.TagInput, `"sender":"host"`) {
		t.Errorf("a worker frame sent back as the host's: %+v", rec)
	}

	if rec = f.record(false, conformance.FrameLine, []byte("garbage, not a frame")); rec.Decoded || !strings.Contains(rec.DecodeError, "Serialization") {
		t.Errorf("garbage: %+v", rec)
	}
	if rec = f.record(true, conformance.FrameLine, []byte("{\"sequence\":1,\xff}")); rec.Decoded || rec.DecodeError != "the line is not UTF-8" {
		t.Errorf("not UTF-8: %+v", rec)
	}
	if rec = f.record(true, conformance.FrameBytes, []byte("SPLPBOOX")); rec.Decoded || rec.DecodeError != "" || rec.Kind != conformance.FrameBytes {
		t.Errorf("raw bytes that are no frame are kept, not decoded: %+v", rec)
	}
	if rec = f.record(true, conformance.FrameBytes, append(bytes.Clone(good), '\r', '\n')); !rec.Decoded || rec.Size != len(good)+2 {
		t.Errorf("a frame written with CR LF is decoded without them: %+v", rec)
	}
	for i, r := range f.t.frames {
		arrow := map[bool]string{true: "→ worker 1: ", false: "← worker 1: "}[r.Sent]
		if r.Entry != i || !strings.Contains(f.t.Transcript[r.Entry], arrow) {
			t.Errorf("record %d points at transcript line %d: %q", i, r.Entry, f.t.Transcript[r.Entry])
		}
	}
}

// TestFrameRecordsAreBounded checks that a check keeps at most about 4 MiB of frames and a run
// at most about 64 MiB, that later frames keep only their first bytes and say so, and that
// nothing is recorded once the transcript is full.
func TestFrameRecordsAreBounded(t *testing.T) {
	f := newFrameFixture(t)
	big := seal(t, f.host, f.invoke(t, "req-1", strings.Repeat("x", 900<<10)))
	var cut int
	for range 12 {
		rec := f.record(true, conformance.FrameLine, big)
		if rec.Note != "" {
			cut++
			if len(rec.Raw) != frameHeadBytes || rec.Size != len(big) || rec.Decoded {
				t.Errorf("a record over the bound keeps %d bytes of %d (decoded %v)", len(rec.Raw), rec.Size, rec.Decoded)
			}
		}
	}
	if cut == 0 || f.t.frameBytes > maxCheckFrameBytes+12*frameHeadBytes {
		t.Errorf("%d records cut, %d bytes kept; the bound is %d", cut, f.t.frameBytes, maxCheckFrameBytes)
	}
	if got := f.t.run.frameBytes.Load(); got != int64(f.t.frameBytes) {
		t.Errorf("the run counts %d bytes of records, the check %d", got, f.t.frameBytes)
	}

	// The run's bound applies to every check: another check of a run near its bound keeps
	// only the first bytes of a small frame.
	other := newFrameFixture(t)
	other.t.run.frameBytes.Store(maxRunFrameBytes - 1000)
	small := seal(t, other.host, other.invoke(t, "req-1", strings.Repeat("s", 2000)))
	if rec := other.record(true, conformance.FrameLine, small); !strings.Contains(rec.Note, "the run's frame records") || len(rec.Raw) != frameHeadBytes {
		t.Errorf("a frame past the run's bound: %d of %d bytes kept, note %q", len(rec.Raw), rec.Size, rec.Note)
	}

	for len(f.t.Transcript) <= conformance.MaxTranscript {
		f.t.Logf("filler")
	}
	if rec := f.record(true, conformance.FrameLine, []byte("{}")); rec != nil {
		t.Errorf("a frame was recorded after the transcript was full: %+v", rec)
	}
}
