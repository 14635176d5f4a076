package protocol_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
)

// Verified vectors of the reference implementation (key 32 x 0x07, session
// "session-1").
const (
	vectorSession = "session-1"

	vector1Message  = `{"type":"open_session","manifest":{"protocol_version":5,"session_id":"session-1","grants":[{"tool":"text.echo","format":"text","max_calls":1,"max_input_bytes":16384,"max_output_bytes":65536,"max_compensations":0,"resources":[]}]}}`
	vector1TagInput = `{"domain":"splash-worker-auth-v5","protocol_version":5,"sender":"host","sequence":1,"session_id":"session-1","message":` + vector1Message + `}`
	vector1Tag      = "c245f7bb012c51fb328dd620b870798900db933a7a747c22ef4bf04e2cc32bc2"
	vector1Line     = `{"sequence":1,"message":` + vector1Message + `,"auth_tag":"` + vector1Tag + `"}`

	vector2Message = "{\"type\":\"invoke\",\"invocation\":{\"protocol_version\":5,\"session_id\":\"session-1\",\"request_id\":\"request-1\",\"tool\":\"text.echo\",\"payload\":{\"format\":\"text\",\"value\":\"hi \\\"there\\\"\\n\xc3\xa9\"}}}"
	vector2Tag     = "70209704d1ff86ee58dfad32edcb35e016cdcd8f164ee4ccaede013517f8d464"

	vector3Message = `{"type":"result","result":{"protocol_version":5,"session_id":"session-1","request_id":"request-1","payload":{"format":"text","value":"ok"}}}`
	vector3Tag     = "c17e3e50b056e4000bf1dcc6f32ceec63297441803f6547538a6ee7c28477273"

	vector4Close = `{"type":"close_session","protocol_version":5,"session_id":"session-1"}`
	vector4Line  = "{\"sequence\":2,\"message\":{\"type\":\"dispatch_operation\",\"request\":{\"protocol_version\":5,\"session_id\":\"session-1\",\"request_id\":\"dispatch-1\",\"tool\":\"math.add\",\"operation_key\":\"op-7\",\"payload\":{\"format\":\"json\",\"value\":{\"\":true,\"B\":null,\"a\":[1e+16,100,-0.0,1.5e-7,18446744073709551615,-42],\"z\":0.1,\"\xc3\xa9\":\"\\u0001\x7f/<>\"}}}},\"auth_tag\":\"148b5385a523fa46ecb687094ddc6aa2a52ee9965479863441d21496b5c2dc28\"}"
	vector4Tag   = "148b5385a523fa46ecb687094ddc6aa2a52ee9965479863441d21496b5c2dc28"
)

func vectorKey(t testing.TB) *protocol.SessionKey {
	t.Helper()
	return fillKey(t, 0x07)
}

func fillKey(t testing.TB, b byte) *protocol.SessionKey {
	t.Helper()
	k, err := protocol.NewSessionKey(bytes.Repeat([]byte{b}, protocol.SessionKeyBytes))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func newAuth(t testing.TB, role protocol.Role, mode canonjson.Mode, opts ...protocol.AuthenticatorOption) *protocol.Authenticator {
	t.Helper()
	a, err := protocol.NewAuthenticator(vectorSession, vectorKey(t), role, mode, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func decode(t testing.TB, msg string, mode canonjson.Mode) protocol.Message {
	t.Helper()
	m, err := protocol.DecodeMessage([]byte(msg), mode)
	if err != nil {
		t.Fatalf("decode %s: %v", msg, err)
	}
	return m
}

func wantKind(t testing.TB, err error, kind error) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("error = %v, want %v", err, kind)
	}
}

func tagHex(f protocol.Frame) string { return hex.EncodeToString(f.Tag[:]) }

// Spec: FRM-007, FRM-014, FRM-015, FRM-001, FRM-005
func TestVector1OpenSessionTagInputTagAndLine(t *testing.T) {
	manifest, err := protocol.NewCapabilityManifest(vectorSession, []protocol.CapabilityGrant{protocol.TextGrant("text.echo")})
	if err != nil {
		t.Fatal(err)
	}
	built := protocol.OpenSessionMessage{Manifest: manifest}
	if got := string(protocol.TagInput(vectorSession, protocol.RoleHost, 1, built)); got != vector1TagInput {
		t.Fatalf("tag input\n got %s\nwant %s", got, vector1TagInput)
	}
	// The tag from constructed values and from the decoded literal agree.
	for _, m := range []protocol.Message{built, decode(t, vector1Message, canonjson.Preserve)} {
		host := newAuth(t, protocol.RoleHost, canonjson.Preserve)
		f, line, err := host.Seal(m)
		if err != nil {
			t.Fatal(err)
		}
		if tagHex(f) != vector1Tag || f.Sequence != 1 {
			t.Fatalf("tag %s seq %d, want %s seq 1", tagHex(f), f.Sequence, vector1Tag)
		}
		if string(line) != vector1Line {
			t.Fatalf("line\n got %s\nwant %s", line, vector1Line)
		}
		encoded, err := protocol.EncodeFrame(f)
		if err != nil || !bytes.Equal(encoded, line) {
			t.Fatalf("EncodeFrame disagrees with the sealed line: %s (%v)", encoded, err)
		}
		tag, err := protocol.ComputeTag(vectorKey(t), vectorSession, protocol.RoleHost, 1, m)
		if err != nil || hex.EncodeToString(tag[:]) != vector1Tag {
			t.Fatalf("ComputeTag = %x, %v", tag, err)
		}
	}
}

// Spec: FRM-008, FRM-014, FRM-019
func TestVectors2And3InvokeAndWorkerResult(t *testing.T) {
	for _, mode := range []canonjson.Mode{canonjson.Preserve, canonjson.Lossy} {
		host := newAuth(t, protocol.RoleHost, mode)
		worker := newAuth(t, protocol.RoleWorker, mode)

		_, line1, err := host.Seal(decode(t, vector1Message, mode))
		if err != nil {
			t.Fatal(err)
		}
		f2, line2, err := host.Seal(decode(t, vector2Message, mode))
		if err != nil {
			t.Fatal(err)
		}
		if tagHex(f2) != vector2Tag || f2.Sequence != 2 {
			t.Fatalf("%v: anchor A2 tag %s seq %d", mode, tagHex(f2), f2.Sequence)
		}
		if !bytes.Contains(line2, []byte(vector2Message)) {
			t.Fatalf("%v: line does not carry the canonical message: %s", mode, line2)
		}
		// The worker opens both host frames in order; its outgoing counter
		// is untouched.
		for i, line := range [][]byte{line1, line2} {
			if _, err := worker.Open(line); err != nil {
				t.Fatalf("%v: worker opens host frame %d: %v", mode, i+1, err)
			}
		}
		if worker.NextIncoming() != 3 || worker.NextOutgoing() != 1 {
			t.Fatalf("worker counters in=%d out=%d", worker.NextIncoming(), worker.NextOutgoing())
		}
		// Reference anchor A3: the worker's first frame, with sender "worker".
		f3, line3, err := worker.Seal(decode(t, vector3Message, mode))
		if err != nil {
			t.Fatal(err)
		}
		if tagHex(f3) != vector3Tag || f3.Sequence != 1 {
			t.Fatalf("%v: anchor A3 tag %s seq %d", mode, tagHex(f3), f3.Sequence)
		}
		if _, err := host.Open(line3); err != nil {
			t.Fatalf("%v: host opens the worker frame: %v", mode, err)
		}
		if host.NextIncoming() != 2 || host.NextOutgoing() != 3 {
			t.Fatalf("host counters in=%d out=%d", host.NextIncoming(), host.NextOutgoing())
		}
	}
}

// Reference anchor A4: the same frame line (payload numbers 1e+16, -0.0, 1.5e-7, u64 max,
// a raw DEL byte, a \u0001 escape, sorted keys including "" and "é") is sealed
// and opened identically in both number modes.
//
// Spec: FRM-010, FRM-014, FRM-030
func TestVector4DispatchIdenticalInBothModes(t *testing.T) {
	start := strings.Index(vector4Line, `"message":`) + len(`"message":`)
	end := strings.LastIndex(vector4Line, `,"auth_tag"`)
	dispatch := vector4Line[start:end]
	for _, mode := range []canonjson.Mode{canonjson.Preserve, canonjson.Lossy} {
		host := newAuth(t, protocol.RoleHost, mode)
		_, closeLine, err := host.Seal(decode(t, vector4Close, mode))
		if err != nil {
			t.Fatal(err)
		}
		f, line, err := host.Seal(decode(t, dispatch, mode))
		if err != nil {
			t.Fatalf("%v: %v", mode, err)
		}
		if tagHex(f) != vector4Tag || string(line) != vector4Line {
			t.Fatalf("%v: sealed\n%s\nwant\n%s", mode, line, vector4Line)
		}
		for _, openMode := range []canonjson.Mode{canonjson.Preserve, canonjson.Lossy} {
			worker := newAuth(t, protocol.RoleWorker, openMode)
			if _, err := worker.Open(closeLine); err != nil {
				t.Fatal(err)
			}
			got, err := worker.Open([]byte(vector4Line))
			if err != nil {
				t.Fatalf("sealed in %v, opened in %v: %v", mode, openMode, err)
			}
			if got.Sequence != 2 || got.Message.Type() != protocol.TypeDispatchOperation {
				t.Fatalf("opened %+v", got)
			}
		}
	}
}

// Spec: FRM-006, FRM-013
func TestTagInputAndFrameLengthRelations(t *testing.T) {
	for _, tc := range []struct {
		session string
		role    protocol.Role
		extra   int
	}{{"s", protocol.RoleHost, 8}, {"session-1", protocol.RoleHost, 8}, {"a-much-longer-session-id", protocol.RoleWorker, 10}} {
		a, err := protocol.NewAuthenticator(tc.session, vectorKey(t), tc.role, canonjson.Preserve, protocol.WithSequences(12345, 1))
		if err != nil {
			t.Fatal(err)
		}
		m := protocol.CloseSessionMessage{ProtocolVersion: protocol.ProtocolVersion, Session: tc.session}
		f, line, err := a.Seal(m)
		if err != nil {
			t.Fatal(err)
		}
		input := protocol.TagInput(tc.session, tc.role, f.Sequence, m)
		if len(input)-len(line) != tc.extra+len(tc.session) {
			t.Fatalf("%s/%v: tag input is %d bytes longer than the frame, want %d",
				tc.session, tc.role, len(input)-len(line), tc.extra+len(tc.session))
		}
		if len(line)-len(m.AppendJSON(nil)) != 102+5 {
			t.Fatalf("frame overhead %d, want 107 for a 5-digit sequence", len(line)-len(m.AppendJSON(nil)))
		}
	}
}

func invoke(t testing.TB, session string, payload protocol.ToolPayload) protocol.InvokeMessage {
	t.Helper()
	inv, err := protocol.NewToolInvocation(session, "request-1", "text.echo", payload)
	if err != nil {
		t.Fatal(err)
	}
	return protocol.InvokeMessage{Invocation: inv}
}

// The largest text payload a host can seal in session "s" at sequence 1
// (request "r", tool "t") is 1,048,327 bytes: a 1,048,464-byte message and a
// tag input of exactly 1,048,576 bytes (figures measured on the reference).
// One more byte is WireFrameTooLarge at the tag input, although the frame
// itself would still fit.
//
// Spec: FRM-012, FRM-013, FRM-021, FRM-023
func TestSealTagInputLimit(t *testing.T) {
	a, err := protocol.NewAuthenticator("s", vectorKey(t), protocol.RoleHost, canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	text := func(n int) protocol.Message {
		inv, err := protocol.NewToolInvocation("s", "r", "t", protocol.TextPayload(strings.Repeat("x", n)))
		if err != nil {
			t.Fatal(err)
		}
		return protocol.InvokeMessage{Invocation: inv}
	}
	f, line, err := a.Seal(text(1_048_328))
	var pe *protocol.Error
	if !errors.As(err, &pe) || pe.Kind != protocol.ErrWireFrameTooLarge || pe.Actual != 1_048_577 || pe.Maximum != 1_048_576 {
		t.Fatalf("error = %v", err)
	}
	if a.NextOutgoing() != 1 || f.Message != nil || line != nil {
		t.Fatalf("failed seal consumed sequence %d", a.NextOutgoing())
	}
	f, line, err = a.Seal(text(1_048_327))
	if err != nil {
		t.Fatal(err)
	}
	if got := len(f.Message.AppendJSON(nil)); got != 1_048_464 {
		t.Fatalf("message %d bytes", got)
	}
	if got := len(protocol.TagInput("s", protocol.RoleHost, 1, f.Message)); got != 1_048_576 {
		t.Fatalf("tag input %d bytes", got)
	}
	if len(line) != 1_048_576-8-len("s") || a.NextOutgoing() != 2 {
		t.Fatalf("line %d bytes, next %d", len(line), a.NextOutgoing())
	}
}

// Spec: FRM-021, FRM-022, FRM-023, FRM-024
func TestSealCheckOrder(t *testing.T) {
	nonPortable, err := canonjson.ParseValue([]byte(`{"n":1.50}`), canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	badRequest := invoke(t, "other", protocol.JSONPayload(nonPortable))
	badRequest.Invocation.RequestID = "Bad"
	cases := []struct {
		name string
		seq  uint64
		msg  protocol.Message
		want error
	}{
		{"validation first", math.MaxUint64, badRequest, protocol.ErrInvalidToken},
		{"portability before session", math.MaxUint64, invoke(t, "other", protocol.JSONPayload(nonPortable)), protocol.ErrNonPortableNumber},
		{"session before exhaustion", math.MaxUint64, invoke(t, "other", protocol.TextPayload("x")), protocol.ErrUnknownSession},
		{"exhaustion", math.MaxUint64, invoke(t, vectorSession, protocol.TextPayload("x")), protocol.ErrSequenceExhausted},
	}
	for _, tc := range cases {
		a := newAuth(t, protocol.RoleHost, canonjson.Preserve, protocol.WithSequences(tc.seq, 7))
		_, line, err := a.Seal(tc.msg)
		if !errors.Is(err, tc.want) || line != nil {
			t.Fatalf("%s: error %v, want %v", tc.name, err, tc.want)
		}
		if a.NextOutgoing() != tc.seq || a.NextIncoming() != 7 {
			t.Fatalf("%s: counters changed to %d/%d", tc.name, a.NextOutgoing(), a.NextIncoming())
		}
	}
	var pe *protocol.Error
	_, _, err = newAuth(t, protocol.RoleHost, canonjson.Preserve).Seal(invoke(t, "other", protocol.TextPayload("x")))
	if !errors.As(err, &pe) || pe.Value != "other" {
		t.Fatalf("UnknownSession carries %q, want the message's session", pe.Value)
	}
	// The largest usable sequence is 2^64-2.
	a := newAuth(t, protocol.RoleHost, canonjson.Preserve, protocol.WithSequences(math.MaxUint64-1, 1))
	f, _, err := a.Seal(invoke(t, vectorSession, protocol.TextPayload("x")))
	if err != nil || f.Sequence != math.MaxUint64-1 {
		t.Fatalf("seal at 2^64-2: %v", err)
	}
	_, _, err = a.Seal(invoke(t, vectorSession, protocol.TextPayload("x")))
	wantKind(t, err, protocol.ErrSequenceExhausted)
	if _, _, err := a.Seal(nil); !errors.Is(err, protocol.ErrSerialization) {
		t.Fatalf("nil message: %v", err)
	}
}

// Spec: FRM-022, ENC-037, ERR-004
func TestSealRefusesNonPortableNumbersUnlessAllowed(t *testing.T) {
	for _, tc := range []struct {
		payload  string
		portable bool
	}{
		{`{"n":1.50}`, false}, {`{"n":1e2}`, false}, {`[-0]`, true /* Preserve writes 0 */},
		{`[18446744073709551616]`, false}, {`{"s":"1.50 inside a string \" 1e2"}`, true},
		{`[1,-42,0.1,1.5e-7,1e+16,-0.0,18446744073709551615,-9223372036854775808]`, true},
		{`[-9223372036854775809]`, false}, {`[0.10625857731859811]`, false},
	} {
		v, err := canonjson.ParseValue([]byte(tc.payload), canonjson.Preserve)
		if err != nil {
			t.Fatal(err)
		}
		m := invoke(t, vectorSession, protocol.JSONPayload(v))
		a := newAuth(t, protocol.RoleHost, canonjson.Preserve)
		_, _, err = a.Seal(m)
		if tc.portable {
			if err != nil {
				t.Fatalf("%s: %v", tc.payload, err)
			}
			continue
		}
		wantKind(t, err, protocol.ErrNonPortableNumber)
		wantKind(t, err, canonjson.ErrNonPortableNumber)
		if _, isReference := protocol.KindOf(err); isReference || a.NextOutgoing() != 1 {
			t.Fatalf("%s: reported as a reference kind or consumed a sequence", tc.payload)
		}
		// The escape hatch seals it; only a peer in the same mode accepts it.
		loose := newAuth(t, protocol.RoleHost, canonjson.Preserve, protocol.AllowNonPortableNumbers())
		_, line, err := loose.Seal(m)
		if err != nil {
			t.Fatalf("%s with AllowNonPortableNumbers: %v", tc.payload, err)
		}
		if _, err := newAuth(t, protocol.RoleWorker, canonjson.Preserve).Open(line); err != nil {
			t.Fatalf("%s: Preserve peer rejects: %v", tc.payload, err)
		}
		if _, err := newAuth(t, protocol.RoleWorker, canonjson.Lossy).Open(line); err == nil {
			t.Fatalf("%s: a Lossy peer accepted a non-portable number", tc.payload)
		}
	}
}

// sealedPair returns a host that has sealed n invoke frames and their lines.
func sealedPair(t *testing.T, n int) (*protocol.Authenticator, [][]byte) {
	t.Helper()
	host := newAuth(t, protocol.RoleHost, canonjson.Preserve)
	var lines [][]byte
	for i := range n {
		_, line, err := host.Seal(invoke(t, vectorSession, protocol.TextPayload(fmt.Sprint("call ", i))))
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, line)
	}
	return host, lines
}

// Spec: FRM-025, FRM-026, FRM-029
func TestOpenRejectsReplayGapAndReorderWithoutChangingState(t *testing.T) {
	_, lines := sealedPair(t, 3)
	worker := newAuth(t, protocol.RoleWorker, canonjson.Preserve)
	if _, err := worker.Open(lines[0]); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		line   []byte
		actual uint64
	}{{lines[0], 1}, {lines[2], 3}} {
		f, err := worker.Open(tc.line)
		var pe *protocol.Error
		if !errors.As(err, &pe) || pe.Kind != protocol.ErrUnexpectedSequence || pe.Expected != 2 || pe.Actual != tc.actual {
			t.Fatalf("error = %v", err)
		}
		if f.Message != nil || worker.NextIncoming() != 2 {
			t.Fatalf("failed open yielded a message or moved the counter to %d", worker.NextIncoming())
		}
	}
	for i := 1; i < 3; i++ {
		if f, err := worker.Open(lines[i]); err != nil || f.Sequence != uint64(i+1) {
			t.Fatalf("frame %d: %v", i+1, err)
		}
	}
}

// Spec: FRM-025, FRM-027, FRM-028
func TestOpenRejectsReflectionWrongKeyAndForeignSession(t *testing.T) {
	host, lines := sealedPair(t, 1)
	// Reflection: the host's own frame comes back to the host.
	_, err := host.Open(lines[0])
	wantKind(t, err, protocol.ErrInvalidAuthenticationTag)
	// A worker with another key.
	other, err := protocol.NewAuthenticator(vectorSession, fillKey(t, 0x08), protocol.RoleWorker, canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	_, err = other.Open(lines[0])
	wantKind(t, err, protocol.ErrInvalidAuthenticationTag)
	// A worker of another session with the same key: the tag binds the
	// opener's session, so this is a tag failure, not UnknownSession.
	foreign, err := protocol.NewAuthenticator("session-2", vectorKey(t), protocol.RoleWorker, canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	_, err = foreign.Open(lines[0])
	wantKind(t, err, protocol.ErrInvalidAuthenticationTag)
	// UnknownSession needs a key holder that tags with the opener's session
	// but names another session in the message.
	m := invoke(t, "session-2", protocol.TextPayload("x"))
	tag, err := protocol.ComputeTag(vectorKey(t), vectorSession, protocol.RoleHost, 1, m)
	if err != nil {
		t.Fatal(err)
	}
	line, err := protocol.EncodeFrame(protocol.Frame{Sequence: 1, Message: m, Tag: tag})
	if err != nil {
		t.Fatal(err)
	}
	worker := newAuth(t, protocol.RoleWorker, canonjson.Preserve)
	_, err = worker.Open(line)
	var pe *protocol.Error
	if !errors.As(err, &pe) || pe.Kind != protocol.ErrUnknownSession || pe.Value != "session-2" || worker.NextIncoming() != 1 {
		t.Fatalf("error = %v", err)
	}
	// The same frame at a wrong sequence still reports the session first.
	tag5, _ := protocol.ComputeTag(vectorKey(t), vectorSession, protocol.RoleHost, 5, m)
	line5, _ := protocol.EncodeFrame(protocol.Frame{Sequence: 5, Message: m, Tag: tag5})
	_, err = worker.Open(line5)
	wantKind(t, err, protocol.ErrUnknownSession)
}

// Spec: FRM-002, FRM-003, FRM-016, FRM-025, FRM-037
func TestOpenSyntaxFailures(t *testing.T) {
	worker := newAuth(t, protocol.RoleWorker, canonjson.Preserve)
	upper := strings.Replace(vector1Line, vector1Tag, strings.ToUpper(vector1Tag), 1)
	short := strings.Replace(vector1Line, vector1Tag, vector1Tag[:63], 1)
	zero := strings.Replace(vector1Line, `"sequence":1`, `"sequence":0`, 1)
	badTagAndSeq := strings.Replace(upper, `"sequence":1`, `"sequence":0`, 1)
	for _, tc := range []struct {
		name string
		line string
		want error
	}{
		{"uppercase tag", upper, protocol.ErrInvalidAuthenticationTag},
		{"63-char tag", short, protocol.ErrInvalidAuthenticationTag},
		{"zero sequence", zero, protocol.ErrInvalidSequence},
		{"sequence before tag syntax", badTagAndSeq, protocol.ErrInvalidSequence},
		{"empty line", "", protocol.ErrSerialization},
		{"not JSON", "{", protocol.ErrSerialization},
	} {
		_, err := worker.Open([]byte(tc.line))
		if !errors.Is(err, tc.want) {
			t.Fatalf("%s: error %v, want %v", tc.name, err, tc.want)
		}
	}
	if worker.NextIncoming() != 1 {
		t.Fatal("syntax failures moved the counter")
	}
	if _, err := worker.Open([]byte(vector1Line)); err != nil {
		t.Fatalf("the valid frame after failures: %v", err)
	}
}

// A frame line that fits 1 MiB whose tag input does not: the size check comes
// before the tag comparison, so even a wrong tag reports WireFrameTooLarge.
//
// Spec: FRM-012, FRM-013, FRM-025
func TestOpenTagInputLimit(t *testing.T) {
	worker := newAuth(t, protocol.RoleWorker, canonjson.Preserve)
	overhead := len(protocol.Frame{Sequence: 1, Message: invoke(t, vectorSession, protocol.TextPayload(""))}.AppendJSON(nil))
	m := invoke(t, vectorSession, protocol.TextPayload(strings.Repeat("y", protocol.MaxWireFrameBytes-overhead)))
	line, err := protocol.EncodeFrame(protocol.Frame{Sequence: 1, Message: m})
	if err != nil || len(line) != protocol.MaxWireFrameBytes {
		t.Fatalf("line %d bytes: %v", len(line), err)
	}
	_, err = worker.Open(line)
	var pe *protocol.Error
	if !errors.As(err, &pe) || pe.Kind != protocol.ErrWireFrameTooLarge || pe.Actual != uint64(protocol.MaxWireFrameBytes+8+len(vectorSession)) {
		t.Fatalf("error = %v", err)
	}
	if worker.NextIncoming() != 1 {
		t.Fatal("counter moved")
	}
}

// Spec: FRM-011
func TestOpenAcceptsNonCanonicalSpellingsOfTheSameMessage(t *testing.T) {
	lenient := "{ \"auth_tag\" : \"" + vector1Tag + "\",\r\n \"ignored\": [1, {\"x\": null}], \"message\": {\"manifest\": {\"grants\": [{\"format\": \"text\", \"resources\": [], \"tool\": \"text.echo\", \"max_calls\": 1, \"max_output_bytes\": 65536, \"max_input_bytes\": 16384, \"extra\": true}], \"session_id\": \"session-1\", \"protocol_version\": 5}, \"\\u0074ype\": \"open_session\"}, \"sequence\": 1 }\r"
	worker := newAuth(t, protocol.RoleWorker, canonjson.Preserve)
	f, err := worker.Open([]byte(lenient))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(f.Message.AppendJSON(nil)); got != vector1Message {
		t.Fatalf("re-serialized message %s", got)
	}
}

// Spec: FRM-024, FRM-025
func TestOpenSequenceExhaustion(t *testing.T) {
	m := invoke(t, vectorSession, protocol.TextPayload("x"))
	frameAt := func(seq uint64) []byte {
		tag, err := protocol.ComputeTag(vectorKey(t), vectorSession, protocol.RoleHost, seq, m)
		if err != nil {
			t.Fatal(err)
		}
		line, err := protocol.EncodeFrame(protocol.Frame{Sequence: seq, Message: m, Tag: tag})
		if err != nil {
			t.Fatal(err)
		}
		return line
	}
	worker := newAuth(t, protocol.RoleWorker, canonjson.Preserve, protocol.WithSequences(1, math.MaxUint64-1))
	if _, err := worker.Open(frameAt(math.MaxUint64 - 1)); err != nil {
		t.Fatalf("2^64-2 must open: %v", err)
	}
	_, err := worker.Open(frameAt(math.MaxUint64))
	wantKind(t, err, protocol.ErrSequenceExhausted)
	// A wrong sequence at the end is still UnexpectedSequence (checked first).
	_, err = worker.Open(frameAt(math.MaxUint64 - 1))
	wantKind(t, err, protocol.ErrUnexpectedSequence)
	if worker.NextIncoming() != math.MaxUint64 {
		t.Fatal("counter moved")
	}
}

// Spec: FRM-020, FRM-019
func TestSplitCarriesCountersAndHalvesAreIndependent(t *testing.T) {
	host := newAuth(t, protocol.RoleHost, canonjson.Preserve)
	worker := newAuth(t, protocol.RoleWorker, canonjson.Preserve)
	_, l1, _ := host.Seal(decode(t, vector1Message, canonjson.Preserve))
	if _, err := worker.Open(l1); err != nil {
		t.Fatal(err)
	}
	hs, ho := host.Split()
	ws, wo := worker.Split()
	if hs.NextOutgoing() != 2 || ho.NextIncoming() != 1 || ws.NextOutgoing() != 1 || wo.NextIncoming() != 2 {
		t.Fatal("split lost the counters")
	}
	done := make(chan error, 1)
	go func() { // the worker's opener runs concurrently with its sealer
		for range 50 {
			if _, err := wo.Open(<-lines); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for i := range 50 {
		_, line, err := hs.Seal(invoke(t, vectorSession, protocol.TextPayload(fmt.Sprint(i))))
		if err != nil {
			t.Fatal(err)
		}
		lines <- line
		_, back, err := ws.Seal(protocol.CloseSessionMessage{ProtocolVersion: 5, Session: vectorSession})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ho.Open(back); err != nil {
			t.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if hs.NextOutgoing() != 52 || wo.NextIncoming() != 52 || ws.NextOutgoing() != 51 || ho.NextIncoming() != 51 {
		t.Fatal("counters after concurrent use")
	}
	// The split halves are the authenticator's own state: nothing forks.
	if host.NextOutgoing() != hs.NextOutgoing() {
		t.Fatal("authenticator and its sealer disagree")
	}
}

var lines = make(chan []byte, 64)

// Spec: FRM-018
func TestNewAuthenticatorArguments(t *testing.T) {
	key := vectorKey(t)
	_, err := protocol.NewAuthenticator("Session-1", key, protocol.RoleHost, canonjson.Preserve)
	var pe *protocol.Error
	if !errors.As(err, &pe) || pe.Kind != protocol.ErrInvalidToken || pe.Field != "session id" || pe.Value != "Session-1" {
		t.Fatalf("bad session id: %v", err)
	}
	_, err = protocol.NewAuthenticator(vectorSession, nil, protocol.RoleHost, canonjson.Preserve)
	wantKind(t, err, protocol.ErrWeakSessionKey)
	// The token check comes before the key check.
	_, err = protocol.NewAuthenticator("", nil, protocol.RoleHost, canonjson.Preserve)
	wantKind(t, err, protocol.ErrInvalidToken)
	for _, bad := range []struct {
		role protocol.Role
		mode canonjson.Mode
		opt  protocol.AuthenticatorOption
	}{
		{0, canonjson.Preserve, nil}, {protocol.RoleHost, 0, nil},
		{protocol.RoleHost, canonjson.Preserve, protocol.WithSequences(0, 1)},
		{protocol.RoleHost, canonjson.Preserve, protocol.WithSequences(1, 0)},
	} {
		var opts []protocol.AuthenticatorOption
		if bad.opt != nil {
			opts = append(opts, bad.opt)
		}
		if _, err := protocol.NewAuthenticator(vectorSession, key, bad.role, bad.mode, opts...); err == nil {
			t.Fatalf("accepted %+v", bad)
		}
	}
	a := newAuth(t, protocol.RoleWorker, canonjson.Lossy)
	if a.SessionID() != vectorSession || a.Role() != protocol.RoleWorker || a.Mode() != canonjson.Lossy ||
		a.NextOutgoing() != 1 || a.NextIncoming() != 1 {
		t.Fatalf("accessors: %v", a)
	}
}

// The authenticator keeps its own key copy; Close wipes it and disables both
// directions.
//
// Spec: FRM-042
func TestAuthenticatorKeyLifecycle(t *testing.T) {
	key := vectorKey(t)
	host, err := protocol.NewAuthenticator(vectorSession, key, protocol.RoleHost, canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	key.Close()
	f, _, err := host.Seal(decode(t, vector1Message, canonjson.Preserve))
	if err != nil || tagHex(f) != vector1Tag {
		t.Fatalf("closing the caller's key changed the authenticator: %v", err)
	}
	if _, err := protocol.NewAuthenticator(vectorSession, key, protocol.RoleHost, canonjson.Preserve); !errors.Is(err, protocol.ErrWeakSessionKey) {
		t.Fatalf("closed key accepted: %v", err)
	}
	host.Close()
	_, _, err = host.Seal(decode(t, vector1Message, canonjson.Preserve))
	wantKind(t, err, protocol.ErrWeakSessionKey)
	_, err = host.Open([]byte(vector1Line))
	wantKind(t, err, protocol.ErrWeakSessionKey)
	_, err = host.OpenFrame(protocol.Frame{Sequence: 1, Message: decode(t, vector3Message, canonjson.Preserve)})
	wantKind(t, err, protocol.ErrWeakSessionKey)
	if host.NextOutgoing() != 2 {
		t.Fatal("counter moved on a closed authenticator")
	}
}

// Spec: FRM-025
func TestOpenFrameRunsSyntaxChecks(t *testing.T) {
	worker := newAuth(t, protocol.RoleWorker, canonjson.Preserve)
	m := decode(t, vector1Message, canonjson.Preserve)
	tag, _ := hex.DecodeString(vector1Tag)
	var f protocol.Frame
	f.Message = m
	copy(f.Tag[:], tag)
	if _, err := worker.OpenFrame(f); !errors.Is(err, protocol.ErrInvalidSequence) {
		t.Fatalf("sequence 0: %v", err)
	}
	f.Sequence = 1
	bad := invoke(t, vectorSession, protocol.TextPayload("x"))
	bad.Invocation.ProtocolVersion = 4
	if _, err := worker.OpenFrame(protocol.Frame{Sequence: 1, Message: bad}); !errors.Is(err, protocol.ErrUnsupportedVersion) {
		t.Fatalf("invalid message: %v", err)
	}
	got, err := worker.OpenFrame(f)
	if err != nil || got.Type() != protocol.TypeOpenSession || worker.NextIncoming() != 2 {
		t.Fatalf("OpenFrame: %v", err)
	}
}

// Spec: FRM-040, ERR-014
func TestAuthenticatorFormattingHidesTheKey(t *testing.T) {
	key := fillKey(t, 0xab)
	a, err := protocol.NewAuthenticator(vectorSession, key, protocol.RoleHost, canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	s, o := a.Split()
	for _, v := range []any{a, s, o, *a, *s, *o, struct{ A *protocol.Authenticator }{a}} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%x", "%X", "%q", "%d"} {
			out := fmt.Sprintf(verb, v)
			if strings.Contains(strings.ToLower(out), "abab") || strings.Contains(out, "\xab\xab") ||
				strings.Contains(out, "2880154539") /* 0xabababab as a word */ {
				t.Fatalf("%s of %T leaks key material: %s", verb, v, out)
			}
		}
	}
}

// Sealing an invoke reuses the tag-input buffer and the hasher: in steady
// state the only allocation is the returned line.
func TestSealAllocations(t *testing.T) {
	payload, err := canonjson.ParseValue([]byte(`{"items":[1,2,3],"name":"`+strings.Repeat("n", 4000)+`"}`), canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	host := newAuth(t, protocol.RoleHost, canonjson.Preserve)
	var m protocol.Message = invoke(t, vectorSession, protocol.JSONPayload(payload))
	if _, _, err := host.Seal(m); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(50, func() {
		if _, _, err := host.Seal(m); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 1 {
		t.Fatalf("Seal allocates %.1f times per call, want only the line", allocs)
	}
	buf := make([]byte, 0, 8192)
	allocs = testing.AllocsPerRun(50, func() {
		var err error
		if _, buf, err = host.SealAppend(buf[:0], m); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("SealAppend allocates %.1f times per call", allocs)
	}
}

func TestSealAppend(t *testing.T) {
	host := newAuth(t, protocol.RoleHost, canonjson.Preserve)
	prefix := []byte("previous line\n")
	f, out, err := host.SealAppend(prefix, decode(t, vector1Message, canonjson.Preserve))
	if err != nil || tagHex(f) != vector1Tag || string(out) != "previous line\n"+vector1Line {
		t.Fatalf("SealAppend = %q, %v", out, err)
	}
	_, out, err = host.SealAppend(prefix, invoke(t, "other", protocol.TextPayload("x")))
	if !errors.Is(err, protocol.ErrUnknownSession) || string(out) != "previous line\n" || host.NextOutgoing() != 2 {
		t.Fatalf("failed SealAppend returned %q, %v", out, err)
	}
}

// Every message kind that carries a payload is checked for portable numbers
// before sealing, except the durable outcomes (a payload inside a succeeded
// status), which seal whatever their numbers; the same messages with a
// portable number seal.
//
// Spec: ENC-037, ENC-054, FRM-022
func TestSealChecksThePayloadOfEveryMessageKind(t *testing.T) {
	templates := protocol.PayloadMessageTemplates
	for _, tmpl := range templates {
		for _, tc := range []struct {
			payload string
			ok      bool
		}{
			{`{"format":"json","value":{"a":[1,{"n":1.50}]}}`, false},
			{`{"format":"json","value":{"a":[1,{"n":1.5}],"s":"1.50"}}`, true},
			{`{"format":"text","value":"1.50"}`, true},
		} {
			m := decode(t, strings.Replace(tmpl, "PAYLOAD", tc.payload, 1), canonjson.Preserve)
			_, _, err := newAuth(t, protocol.RoleHost, canonjson.Preserve).Seal(m)
			if strings.Contains(tmpl, `"status"`) {
				tc.ok = true // a durable outcome (ENC-054)
			}
			if tc.ok && err != nil || !tc.ok && !errors.Is(err, protocol.ErrNonPortableNumber) {
				t.Fatalf("%s with %s: %v", m.Type(), tc.payload, err)
			}
		}
	}
}
