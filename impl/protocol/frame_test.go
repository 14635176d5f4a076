package protocol

import (
	"errors"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
)

const goodTag = "c245f7bb012c51fb328dd620b870798900db933a7a747c22ef4bf04e2cc32bc2"

func frameLine(seq, msg, tag string) string {
	return `{"sequence":` + seq + `,"message":` + msg + `,"auth_tag":"` + tag + `"}`
}

// Spec: FRM-001, FRM-002, FRM-003, FRM-004, FRM-016, ENC-043
func TestDecodeFrameOrder(t *testing.T) {
	badMsg := strings.Replace(closeText, `"protocol_version":5`, `"protocol_version":4`, 1)
	for _, tt := range []struct {
		name string
		line string
		want string // error kind, or "" for success
	}{
		{"valid", frameLine("1", closeText, goodTag), ""},
		{"sequence zero before the message", frameLine("0", badMsg, "x"), "InvalidSequence"},
		{"message before the tag", frameLine("1", badMsg, "x"), "UnsupportedVersion"},
		{"uppercase tag", frameLine("1", closeText, strings.ToUpper(goodTag)), "InvalidAuthenticationTag"},
		{"short tag", frameLine("1", closeText, goodTag[1:]), "InvalidAuthenticationTag"},
		{"long tag", frameLine("1", closeText, goodTag+"0"), "InvalidAuthenticationTag"},
		{"tag with whitespace", frameLine("1", closeText, " "+goodTag[1:]), "InvalidAuthenticationTag"},
		{"the tag is any string to the decoder", `{"sequence":1,"message":` + closeText + `,"auth_tag":5}`, "Serialization"},
		{"sequence -0 is read directly", frameLine("-0", closeText, goodTag), "Serialization"},
		{"sequence 1.0", frameLine("1.0", closeText, goodTag), "Serialization"},
		{"sequence as a string", frameLine(`"1"`, closeText, goodTag), "Serialization"},
		{"sequence beyond u64", frameLine("18446744073709551616", closeText, goodTag), "Serialization"},
		{"largest sequence decodes", frameLine("18446744073709551615", closeText, goodTag), ""},
		{"missing tag", `{"sequence":1,"message":` + closeText + `}`, "Serialization"},
		{"positional frame", `[1,` + closeText + `,"` + goodTag + `"]`, ""},
		{"positional frame and message", `[1,["close_session",5,"s"],"` + goodTag + `"]`, ""},
		{"unknown frame member", `{"x":[1e400],"sequence":1,"message":` + closeText + `,"auth_tag":"` + goodTag + `"}`, ""},
		{"duplicate sequence", `{"sequence":1,"sequence":1,"message":` + closeText + `,"auth_tag":"` + goodTag + `"}`, "Serialization"},
		{"wrong case key", `{"Sequence":1,"message":` + closeText + `,"auth_tag":"` + goodTag + `"}`, "Serialization"},
	} {
		for _, mode := range bothModes {
			f, err := DecodeFrame([]byte(tt.line), mode)
			if tt.want == "" {
				if err != nil {
					t.Errorf("%s (%v): %v", tt.name, mode, err)
				} else if got, _ := EncodeFrame(f); !strings.Contains(string(got), closeText) {
					t.Errorf("%s (%v): re-encoded %s", tt.name, mode, got)
				}
				continue
			}
			k, ok := KindOf(err)
			if !ok || k.String() != tt.want {
				t.Errorf("%s (%v): %v, want %s", tt.name, mode, err, tt.want)
			}
		}
	}
}

// Spec: FRM-003, FRM-005, FRM-015
func TestFrameSizeAndEncode(t *testing.T) {
	huge := make([]byte, MaxWireFrameBytes+1)
	if _, err := DecodeFrame(huge, canonjson.Preserve); !isKind(err, ErrWireFrameTooLarge) {
		t.Fatalf("oversized line: %v", err)
	}
	// A line of exactly 1 MiB is parsed (and here fails as a syntax error, not on size).
	if _, err := DecodeFrame(huge[:MaxWireFrameBytes], canonjson.Preserve); !isKind(err, ErrSerialization) {
		t.Fatalf("1 MiB line: %v", err)
	}
	if _, err := EncodeFrame(Frame{Sequence: 0, Message: CloseSessionMessage{5, "s"}}); !isKind(err, ErrInvalidSequence) {
		t.Errorf("sequence 0: %v", err)
	}
	if _, err := EncodeFrame(Frame{Sequence: 1, Message: CloseSessionMessage{5, "S"}}); !isKind(err, ErrInvalidToken) {
		t.Errorf("invalid message: %v", err)
	}
	if _, err := EncodeFrame(Frame{Sequence: 1}); !isKind(err, ErrSerialization) {
		t.Errorf("nil message: %v", err)
	}
	// The frame adds 102 + digits bytes: a message of 1 MiB - 103 bytes fits at sequence 1.
	base := InvokeMessage{ToolInvocation{5, "s", "r", "t", TextPayload("")}}
	room := MaxWireFrameBytes - 103 - len(base.AppendJSON(nil))
	fits := Frame{Sequence: 1, Message: InvokeMessage{ToolInvocation{5, "s", "r", "t", TextPayload(strings.Repeat("x", room))}}}
	enc, err := EncodeFrame(fits)
	if err != nil || len(enc) != MaxWireFrameBytes {
		t.Fatalf("largest frame: %d bytes, %v", len(enc), err)
	}
	if _, err := DecodeFrame(enc, canonjson.Lossy); err != nil {
		t.Fatalf("decode largest frame: %v", err)
	}
	fits.Sequence = 10
	var pe *Error
	if _, err := EncodeFrame(fits); !isKind(err, ErrWireFrameTooLarge) || !errors.As(err, &pe) || pe.Actual != MaxWireFrameBytes+1 {
		t.Fatalf("one digit more: %v", err)
	}
	tag, err := ParseAuthTag(goodTag)
	if err != nil || string(AppendHex(nil, tag[:])) != goodTag {
		t.Fatalf("ParseAuthTag round trip: %x, %v", tag, err)
	}
}

// TestParseAuthTagDigits tries every byte at every position of a tag: only 0-9 and a-f are
// accepted, and ParseAuthTag agrees with IsFingerprint.
//
// Spec: FRM-001
func TestParseAuthTagDigits(t *testing.T) {
	for pos := range len(goodTag) {
		for c := range 256 {
			s := []byte(goodTag)
			s[pos] = byte(c)
			tag, err := ParseAuthTag(string(s))
			lower := '0' <= c && c <= '9' || 'a' <= c && c <= 'f'
			if (err == nil) != lower || (err == nil) != IsFingerprint(string(s)) {
				t.Fatalf("byte %#x at %d: %v", c, pos, err)
			}
			if err != nil {
				if !isKind(err, ErrInvalidAuthenticationTag) {
					t.Fatalf("byte %#x at %d: error of the wrong kind: %v", c, pos, err)
				}
				continue
			}
			if got := string(AppendHex(nil, tag[:])); got != string(s) {
				t.Fatalf("byte %#x at %d: parsed as %s", c, pos, got)
			}
		}
	}
	for _, s := range []string{"", goodTag[:63], goodTag + "0"} {
		if _, err := ParseAuthTag(s); !isKind(err, ErrInvalidAuthenticationTag) {
			t.Errorf("%d hex digits: %v", len(s), err)
		}
	}
}

// Spec: ENC-001
func TestAppendJSONDoesNotAllocate(t *testing.T) {
	for _, in := range []string{vector1Message, vector2Message, vector4Message, opSucceeded, cancelText, closeText} {
		m, err := DecodeMessage([]byte(in), canonjson.Preserve)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 0, 4096)
		if n := testing.AllocsPerRun(100, func() { buf = m.AppendJSON(buf[:0]) }); n != 0 {
			t.Errorf("%s: %v allocations", m.Type(), n)
		}
		f := Frame{Sequence: 7, Message: m}
		if n := testing.AllocsPerRun(100, func() { buf = f.AppendJSON(buf[:0]) }); n != 0 {
			t.Errorf("frame of %s: %v allocations", m.Type(), n)
		}
	}
	// Unsorted resources are written sorted without allocating too.
	g := validGrant("t")
	g.Resources = []ResourceSelector{{ResourceSecret, "z"}, {ResourceFileRoot, "b"}, {ResourceSecret, "z"}, {ResourceFileRoot, "a"}}
	m := OpenSessionMessage{CapabilityManifest{5, "s", []CapabilityGrant{g}}}
	buf := make([]byte, 0, 4096)
	if n := testing.AllocsPerRun(100, func() { buf = m.AppendJSON(buf[:0]) }); n != 0 {
		t.Errorf("unsorted resources: %v allocations", n)
	}
	if !strings.Contains(string(buf), `"resources":[{"kind":"file_root","id":"a"},{"kind":"file_root","id":"b"},{"kind":"secret","id":"z"}]`) {
		t.Errorf("unsorted resources written as %s", buf)
	}
}

func BenchmarkAppendJSON(b *testing.B) {
	m, err := DecodeMessage([]byte(vector4Message), canonjson.Preserve)
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 0, 4096)
	b.ReportAllocs()
	for b.Loop() {
		buf = m.AppendJSON(buf[:0])
	}
}

func BenchmarkDecodeFrame(b *testing.B) {
	line := []byte(frameLine("2", vector4Message, goodTag))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeFrame(line, canonjson.Preserve); err != nil {
			b.Fatal(err)
		}
	}
}
