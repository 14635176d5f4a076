package protocol

import (
	"strings"
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

// fastLine walks one frame line. text is the caller's line, which the caller reuses once the
// frame is decoded, so the pieces read from it are copied (see detach) before a frame keeps them.
type fastLine struct {
	text []byte
	pos  int
}

// lit consumes w when the line continues with it.
func (l *fastLine) lit(w string) bool {
	if len(l.text)-l.pos < len(w) || string(l.text[l.pos:l.pos+len(w)]) != w {
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
// escape (no control byte, quote or backslash), valid UTF-8, then the closing quote. The
// string's bytes are returned in place.
func (l *fastLine) str() ([]byte, bool) {
	rest := l.text[l.pos:]
	n, ascii := canonjson.VerbatimPrefix(rest)
	if n == len(rest) || rest[n] != '"' {
		return nil, false
	}
	l.pos += n + 1
	return rest[:n], ascii || utf8.Valid(rest[:n])
}

// field reads `,"name":"value"` (name without its quotes is given).
func (l *fastLine) field(name string) ([]byte, bool) {
	if !l.lit(`,"`) || !l.lit(name) || !l.lit(`":"`) {
		return nil, false
	}
	return l.str()
}

// fastHeader is what an invocation and a result begin with: the protocol version, then the
// session and request ids (in place in the line).
type fastHeader struct {
	version          uint16
	session, request []byte
}

// header reads the value of protocol_version (its key is part of the message head), then
// the session_id and request_id fields that follow it in an invocation and a result.
func (l *fastLine) header() (fastHeader, bool) {
	v, ok := l.uint(0xffff)
	if !ok {
		return fastHeader{}, false
	}
	h := fastHeader{version: uint16(v)}
	if h.session, ok = l.field("session_id"); !ok {
		return fastHeader{}, false
	}
	if h.request, ok = l.field("request_id"); !ok {
		return fastHeader{}, false
	}
	return h, true
}

// payload reads `,"payload":{"format":...,"value":...}` up to and including its closing
// brace: text without escapes (returned in place, in text), or a canonical JSON container
// (returned in p, holding its own copy).
func (l *fastLine) payload(mode canonjson.Mode) (p ToolPayload, text []byte, ok bool) {
	if !l.lit(`,"payload":{"format":"`) {
		return ToolPayload{}, nil, false
	}
	switch {
	case l.lit(`text","value":"`):
		s, ok := l.str()
		if !ok || !l.lit(`}`) {
			return ToolPayload{}, nil, false
		}
		return ToolPayload{Format: FormatText}, s, true
	case l.lit(`json","value":`):
		v, end, ok := canonjson.DeferCanonicalBytes(l.text, l.pos, payloadOpen, mode)
		if !ok {
			return ToolPayload{}, nil, false
		}
		l.pos = end
		if !l.lit(`}`) {
			return ToolPayload{}, nil, false
		}
		return JSONPayload(v), nil, true
	}
	return ToolPayload{}, nil, false
}

// keep returns the session id and the other pieces a decoded frame keeps, copied out of the
// line: the session id is known when it equals session, and the rest is detached.
func keep(session string, sid []byte, pieces ...[]byte) (string, [3]string) {
	if string(sid) == session {
		return session, detach(pieces...)
	}
	return string(sid), detach(pieces...)
}

// detach copies the pieces a decoded frame keeps out of the line, all into one new string,
// and returns them in order as substrings of it: one allocation per frame, and only the
// bytes the frame keeps.
func detach(pieces ...[]byte) [3]string {
	n := 0
	for _, p := range pieces {
		n += len(p)
	}
	var b strings.Builder
	b.Grow(n)
	for _, p := range pieces {
		b.Write(p)
	}
	all := b.String()
	var out [3]string
	at := 0
	for i, p := range pieces {
		out[i] = all[at : at+len(p)]
		at += len(p)
	}
	return out
}

// decodeFrameFast decodes line when it is an invoke or result frame in the common layout
// (see the comment at the top of this file); ok is false otherwise, and then nothing is
// known about the line. mode must be Preserve or Lossy. Since that layout is the one
// Frame.AppendJSON writes, the line is the frame's encoding and message is the message's
// (what AppendJSON writes for f.Message), a subslice of line. The frame holds no byte of
// line: the caller may reuse it.
//
// When box is not nil, an invoke is stored in *box and f.Message is box, so the message is
// not allocated; that frame must not leave the package (see Opener.OpenInvoke). A session id
// equal to session is not copied: the frame holds session itself.
func decodeFrameFast(line []byte, mode canonjson.Mode, session string, box *InvokeMessage) (f Frame, message []byte, ok bool) {
	if len(line) > MaxWireFrameBytes || !hasPrefix(line, fastSequence) {
		return Frame{}, nil, false
	}
	l := fastLine{text: line, pos: len(fastSequence)}
	if f.Sequence, ok = l.uint(^uint64(0)); !ok {
		return Frame{}, nil, false
	}
	msgStart := l.pos + len(`,"message":`)
	switch {
	case l.lit(fastInvokeHead):
		h, ok := l.header()
		if !ok {
			return Frame{}, nil, false
		}
		tool, ok := l.field("tool")
		if !ok {
			return Frame{}, nil, false
		}
		p, text, ok := l.payload(mode)
		if !ok {
			return Frame{}, nil, false
		}
		sid, kept := keep(session, h.session, h.request, tool, text)
		if p.Format == FormatText {
			p = TextPayload(kept[2])
		}
		inv := ToolInvocation{ProtocolVersion: h.version, SessionID: sid, RequestID: kept[0], Tool: kept[1], Payload: p}
		if box != nil {
			*box = InvokeMessage{Invocation: inv}
			f.Message = box
		} else {
			f.Message = InvokeMessage{Invocation: inv}
		}
	case l.lit(fastResultHead):
		h, ok := l.header()
		if !ok {
			return Frame{}, nil, false
		}
		p, text, ok := l.payload(mode)
		if !ok {
			return Frame{}, nil, false
		}
		sid, kept := keep(session, h.session, h.request, text)
		if p.Format == FormatText {
			p = TextPayload(kept[1])
		}
		f.Message = ResultMessage{Result: ToolResult{
			ProtocolVersion: h.version, SessionID: sid, RequestID: kept[0], Payload: p}}
	default:
		return Frame{}, nil, false
	}
	if !l.lit(`}}`) {
		return Frame{}, nil, false
	}
	msgEnd := l.pos
	if !l.lit(fastTagHead) {
		return Frame{}, nil, false
	}
	tag, ok := l.str()
	if !ok || !l.lit(`}`) || l.pos != len(l.text) {
		return Frame{}, nil, false
	}
	if f.ValidateSyntax() != nil {
		return Frame{}, nil, false
	}
	var err error
	if f.Tag, err = parseAuthTag(tag); err != nil {
		return Frame{}, nil, false
	}
	return f, line[msgStart:msgEnd], true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// hasPrefix reports whether b begins with s, without copying either.
func hasPrefix(b []byte, s string) bool { return len(b) >= len(s) && string(b[:len(s)]) == s }
