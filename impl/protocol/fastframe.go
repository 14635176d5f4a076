package protocol

import (
	"unicode/utf8"

	"github.com/splashv5/conform/impl/canonjson"
)

// The fast path of DecodeFrame.
//
// Nearly every frame of a session is an invoke (host to worker) or a result (worker to
// host), and every conforming writer (this package's and the reference's) lays them out the
// same way: the frame's fields in declaration order, the message's tag first, no whitespace.
// decodeFrameFast reads exactly that layout in one pass over the line, without the syntax
// tree and the field tables of the general decoder: it matches the fixed parts as literals,
// reads the sequence, version and identifiers, and hands a JSON payload container to
// canonjson.DeferCanonical, the same verifier the general decoder defers payloads with.
//
// It accepts only what it can prove the general decoder decodes to the same frame: strings
// without escapes, a JSON payload that is a canonical container, a text payload without
// escapes, a frame whose syntax validates and whose tag is well formed. At anything else it
// gives up and DecodeFrame decodes the line the general way, which yields the exact frame or
// the exact error; so the fast path changes how fast a frame is decoded, never what comes
// out (TestFastFrameAgrees and FuzzFastFrameAgrees compare the two).

// The fixed text of the lines the fast path reads: the frame's start, the heads of an invoke
// and a result message up to the value of their version, and the tag's field.
const (
	fastSequence   = `{"sequence":`
	fastInvokeHead = `,"message":{"type":"invoke","invocation":{"protocol_version":`
	fastResultHead = `,"message":{"type":"result","result":{"protocol_version":`
	fastTagHead    = `,"auth_tag":"`
)

// payloadOpen is how many arrays and objects are open around a payload's value in an
// invoke or result frame: the frame, the message, the invocation or result, the payload.
const payloadOpen = 4

// fastLine walks one frame line; text is the line's only copy, so the strings of the
// decoded frame are substrings of it.
type fastLine struct {
	text string
	pos  int
}

// lit consumes w when the line continues with it.
func (l *fastLine) lit(w string) bool {
	if len(l.text)-l.pos < len(w) || l.text[l.pos:l.pos+len(w)] != w {
		return false
	}
	l.pos += len(w)
	return true
}

// uint reads a JSON integer without sign, fraction or exponent that fits max. A leading zero
// is accepted only alone, as in JSON; what follows must be checked by the caller's next
// literal (a '.', 'e' or further digit fails it).
func (l *fastLine) uint(max uint64) (uint64, bool) {
	start := l.pos
	var u uint64
	for l.pos < len(l.text) && isDigit(l.text[l.pos]) {
		d := uint64(l.text[l.pos] - '0')
		if u > (max-d)/10 {
			return 0, false
		}
		u = u*10 + d
		l.pos++
	}
	n := l.pos - start
	return u, n > 0 && (n == 1 || l.text[start] != '0')
}

// str reads the rest of a string whose opening quote was consumed: bytes that need no
// escape (no control byte, quote or backslash), valid UTF-8, then the closing quote.
func (l *fastLine) str() (string, bool) {
	start := l.pos
	ascii := true
	for l.pos < len(l.text) {
		c := l.text[l.pos]
		switch {
		case c == '"':
			s := l.text[start:l.pos]
			l.pos++
			return s, ascii || utf8.ValidString(s)
		case c < 0x20 || c == '\\':
			return "", false
		case c >= utf8.RuneSelf:
			ascii = false
		}
		l.pos++
	}
	return "", false
}

// field reads `,"name":"value"` (name without its quotes is given).
func (l *fastLine) field(name string) (string, bool) {
	if !l.lit(`,"`) || !l.lit(name) || !l.lit(`":"`) {
		return "", false
	}
	return l.str()
}

// header reads the value of protocol_version (its key is part of the message head), then
// the session_id and request_id fields that follow it in an invocation and a result.
func (l *fastLine) header() (version uint16, session, request string, ok bool) {
	v, ok := l.uint(0xffff)
	if !ok {
		return 0, "", "", false
	}
	if session, ok = l.field("session_id"); !ok {
		return 0, "", "", false
	}
	if request, ok = l.field("request_id"); !ok {
		return 0, "", "", false
	}
	return uint16(v), session, request, true
}

// payload reads `,"payload":{"format":...,"value":...}` up to and including its closing
// brace: text without escapes, or a canonical JSON container.
func (l *fastLine) payload(mode canonjson.Mode) (ToolPayload, bool) {
	if !l.lit(`,"payload":{"format":"`) {
		return ToolPayload{}, false
	}
	switch {
	case l.lit(`text","value":"`):
		s, ok := l.str()
		if !ok || !l.lit(`}`) {
			return ToolPayload{}, false
		}
		return TextPayload(s), true
	case l.lit(`json","value":`):
		v, end, ok := canonjson.DeferCanonical(l.text, l.pos, payloadOpen, mode)
		if !ok {
			return ToolPayload{}, false
		}
		l.pos = end
		if !l.lit(`}`) {
			return ToolPayload{}, false
		}
		return JSONPayload(v), true
	}
	return ToolPayload{}, false
}

// decodeFrameFast decodes line when it is an invoke or result frame in the common layout
// (see the comment at the top of this file); ok is false otherwise, and then nothing is
// known about the line. mode must be Preserve or Lossy. Since that layout is the one
// Frame.AppendJSON writes, the line is the frame's encoding and message is the message's
// (what AppendJSON writes for f.Message), a substring of the line's copy.
func decodeFrameFast(line []byte, mode canonjson.Mode) (f Frame, message string, ok bool) {
	if len(line) > MaxWireFrameBytes || !hasPrefix(line, fastSequence) {
		return Frame{}, "", false
	}
	// Other messages are left before the line is copied (the general decoder copies it too).
	head := len(fastSequence)
	for head < len(line) && isDigit(line[head]) {
		head++
	}
	if !hasPrefix(line[head:], fastInvokeHead) && !hasPrefix(line[head:], fastResultHead) {
		return Frame{}, "", false
	}
	l := fastLine{text: string(line), pos: len(fastSequence)}
	if f.Sequence, ok = l.uint(^uint64(0)); !ok {
		return Frame{}, "", false
	}
	msgStart := l.pos + len(`,"message":`)
	switch {
	case l.lit(fastInvokeHead):
		var v ToolInvocation
		if v.ProtocolVersion, v.SessionID, v.RequestID, ok = l.header(); !ok {
			return Frame{}, "", false
		}
		if v.Tool, ok = l.field("tool"); !ok {
			return Frame{}, "", false
		}
		if v.Payload, ok = l.payload(mode); !ok {
			return Frame{}, "", false
		}
		f.Message = InvokeMessage{Invocation: v}
	case l.lit(fastResultHead):
		var r ToolResult
		if r.ProtocolVersion, r.SessionID, r.RequestID, ok = l.header(); !ok {
			return Frame{}, "", false
		}
		if r.Payload, ok = l.payload(mode); !ok {
			return Frame{}, "", false
		}
		f.Message = ResultMessage{Result: r}
	default:
		return Frame{}, "", false
	}
	if !l.lit(`}}`) {
		return Frame{}, "", false
	}
	msgEnd := l.pos
	if !l.lit(fastTagHead) {
		return Frame{}, "", false
	}
	tag, ok := l.str()
	if !ok || !l.lit(`}`) || l.pos != len(l.text) {
		return Frame{}, "", false
	}
	if f.ValidateSyntax() != nil {
		return Frame{}, "", false
	}
	var err error
	if f.Tag, err = ParseAuthTag(tag); err != nil {
		return Frame{}, "", false
	}
	return f, l.text[msgStart:msgEnd], true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// hasPrefix reports whether b begins with s, without copying either.
func hasPrefix(b []byte, s string) bool { return len(b) >= len(s) && string(b[:len(s)]) == s }
