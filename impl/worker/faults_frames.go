//go:build splashfaults

package worker

// Deliberate faults in the framing layer: opening, sealing and reading frame lines.

import (
	"bufio"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"math"
	"unicode/utf8"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/derive"
	"github.com/splashv5/conform/impl/jsonline"
	"github.com/splashv5/conform/impl/protocol"
)

// errNoFaultKey: a fault needs the session key and Faults.SessionKey is not set.
var errNoFaultKey = errors.New("worker: the enabled faults need Faults.SessionKey")

// frameOpener returns auth, or, when a frame fault is enabled, an opener with that check
// weakened.
func (f *Faults) frameOpener(auth *protocol.Authenticator) (frameOpener, error) {
	if f == nil || !f.Enabled.Any(frameFaults...) {
		return auth, nil
	}
	if f.SessionKey == nil {
		return nil, errNoFaultKey
	}
	return &faultyOpener{key: f.SessionKey, sessionID: auth.SessionID(), mode: auth.Mode(), next: auth.NextIncoming(), faults: f.Enabled}, nil
}

// frameSealer returns auth, or a sealer that reuses outgoing sequence 1, or one that refuses
// every non-portable answer.
func (f *Faults) frameSealer(auth *protocol.Authenticator) (frameSealer, error) {
	if f.Has(FaultRefuseNonPortableAnswers) {
		return portableOnlySealer{auth}, nil
	}
	if !f.Has(FaultReuseOutgoingSequence) {
		return auth, nil
	}
	if f.SessionKey == nil {
		return nil, errNoFaultKey
	}
	return &fixedSequenceSealer{key: f.SessionKey, sessionID: auth.SessionID()}, nil
}

// faultyOpener opens host frames with the checks of protocol.Opener.Open, in its order, except
// those an enabled fault skips or weakens.
type faultyOpener struct {
	key       *protocol.SessionKey
	sessionID string
	mode      canonjson.Mode
	next      uint64
	faults    FaultSet
}

// Open decodes and authenticates one frame line.
func (o *faultyOpener) Open(line []byte) (protocol.Frame, error) {
	f, tagged, err := o.decode(line)
	if err != nil {
		return protocol.Frame{}, err
	}
	want, err := protocol.ComputeTag(o.key, o.sessionID, protocol.RoleHost, f.Sequence, tagged)
	if err != nil {
		return protocol.Frame{}, err
	}
	valid := subtle.ConstantTimeCompare(want[:], f.Tag[:]) == 1
	if !valid && o.faults.Has(FaultAcceptReflectedRole) {
		reflected, err := protocol.ComputeTag(o.key, o.sessionID, protocol.RoleWorker, f.Sequence, tagged)
		if err != nil {
			return protocol.Frame{}, err
		}
		valid = subtle.ConstantTimeCompare(reflected[:], f.Tag[:]) == 1
	}
	if !valid && !o.faults.Has(FaultSkipTagCheck) {
		return protocol.Frame{}, &protocol.Error{Kind: protocol.ErrInvalidAuthenticationTag}
	}
	if sid := f.Message.SessionID(); sid != o.sessionID && !o.faults.Has(FaultSkipSessionCheck) {
		return protocol.Frame{}, &protocol.Error{Kind: protocol.ErrUnknownSession, Value: sid}
	}
	if f.Sequence != o.next && !o.faults.Has(FaultAcceptReplay) {
		return protocol.Frame{}, &protocol.Error{Kind: protocol.ErrUnexpectedSequence, Expected: o.next, Actual: f.Sequence}
	}
	if f.Sequence == math.MaxUint64 {
		return protocol.Frame{}, &protocol.Error{Kind: protocol.ErrSequenceExhausted}
	}
	o.next = f.Sequence + 1
	return f, nil
}

// decode returns the frame and the message its tag covers. They differ only for a version-4
// message accepted by FaultAcceptVersion4: the tag covers the message as sent, the frame
// carries it rewritten to version 5 so that the rest of the runtime accepts it.
func (o *faultyOpener) decode(line []byte) (protocol.Frame, protocol.Message, error) {
	f, err := protocol.DecodeFrame(line, o.mode)
	if err == nil {
		return f, f.Message, nil
	}
	if k, _ := protocol.KindOf(err); k != protocol.ErrUnsupportedVersion || !o.faults.Has(FaultAcceptVersion4) {
		return protocol.Frame{}, nil, err
	}
	f, sent, ok := decodeVersion4Frame(line, o.mode)
	if !ok {
		return protocol.Frame{}, nil, err
	}
	if err := f.ValidateSyntax(); err != nil {
		return protocol.Frame{}, nil, err
	}
	return f, sent, nil
}

// decodeVersion4Frame decodes a frame line whose message may carry protocol_version 4. It
// returns the frame with the message at version 5 and the message as sent.
func decodeVersion4Frame(line []byte, mode canonjson.Mode) (protocol.Frame, protocol.Message, bool) {
	root, err := canonjson.Parse(line)
	if err != nil || root.Kind != canonjson.NodeObject {
		return protocol.Frame{}, nil, false
	}
	var seq, msg, tag *canonjson.Node
	for _, m := range root.Members {
		switch m.Key {
		case "sequence":
			seq = m.Value
		case "message":
			msg = m.Value
		case "auth_tag":
			tag = m.Value
		}
	}
	if seq == nil || msg == nil || tag == nil {
		return protocol.Frame{}, nil, false
	}
	c := derive.Context{Mode: mode}
	var f protocol.Frame
	if f.Sequence, err = derive.U64(seq, c); err != nil {
		return protocol.Frame{}, nil, false
	}
	sent, err := protocol.DecodeMessageNode(msg, c)
	if err != nil {
		return protocol.Frame{}, nil, false
	}
	text, err := derive.String(tag)
	if err != nil {
		return protocol.Frame{}, nil, false
	}
	if f.Tag, err = protocol.ParseAuthTag(text); err != nil {
		return protocol.Frame{}, nil, false
	}
	f.Message = version4As5(sent)
	return f, sent, true
}

// version4As5 returns m with every protocol_version 4 in it replaced by 5.
func version4As5(m protocol.Message) protocol.Message {
	fix := func(v *uint16) {
		if *v == 4 {
			*v = protocol.ProtocolVersion
		}
	}
	switch m := m.(type) {
	case protocol.OpenSessionMessage:
		fix(&m.Manifest.ProtocolVersion)
		return m
	case protocol.InvokeMessage:
		fix(&m.Invocation.ProtocolVersion)
		return m
	case protocol.ResultMessage:
		fix(&m.Result.ProtocolVersion)
		return m
	case protocol.DispatchOperationMessage:
		fix(&m.Request.ProtocolVersion)
		return m
	case protocol.OperationResultMessage:
		fix(&m.Result.ProtocolVersion)
		return m
	case protocol.CompensateOperationMessage:
		fix(&m.Request.ProtocolVersion)
		return m
	case protocol.CompensationResultMessage:
		fix(&m.Result.ProtocolVersion)
		return m
	case protocol.ReconcileOperationMessage:
		fix(&m.Request.ProtocolVersion)
		return m
	case protocol.ReconciledOperationMessage:
		fix(&m.Result.ProtocolVersion)
		return m
	case protocol.CancelMessage:
		fix(&m.Request.ProtocolVersion)
		return m
	case protocol.CancellationResultMessage:
		fix(&m.Result.ProtocolVersion)
		return m
	case protocol.CloseSessionMessage:
		fix(&m.ProtocolVersion)
		return m
	}
	return m
}

// fixedSequenceSealer seals every answer at outgoing sequence 1 (FaultReuseOutgoingSequence).
type fixedSequenceSealer struct {
	key       *protocol.SessionKey
	sessionID string
}

// SealAppend authenticates m at sequence 1, in a line of its own.
func (s *fixedSequenceSealer) SealAppend(_ []byte, m protocol.Message) (protocol.Frame, []byte, error) {
	return sealAt(s.key, s.sessionID, 1, m)
}

// uncappedLineBytes bounds the lines of FaultNoLineCap, so that the fault stays testable.
const uncappedLineBytes = 8 << 20

// FrameReader returns the reader of frame lines for src: NewFrameReader(src), or with
// FaultNoLineCap a reader that accepts lines up to 8 MiB and notices an over-long line only
// at its line feed.
func (f *Faults) FrameReader(src io.Reader) LineReader {
	if !f.Has(FaultNoLineCap) {
		return NewFrameReader(src)
	}
	br, ok := src.(*bufio.Reader)
	if !ok {
		br = bufio.NewReader(src)
	}
	return &uncappedLineReader{src: br}
}

// uncappedLineReader reads lines without the 1 MiB cap of the JSON-line transport.
type uncappedLineReader struct {
	src *bufio.Reader
	buf []byte
}

// ReadLine returns the next line without its line feed.
func (u *uncappedLineReader) ReadLine() ([]byte, error) {
	u.buf = u.buf[:0]
	for {
		chunk, err := u.src.ReadSlice('\n')
		u.buf = append(u.buf, chunk...)
		switch {
		case err == nil:
			line := u.buf[:len(u.buf)-1]
			if len(line) > uncappedLineBytes {
				return nil, &Error{Kind: ErrFrame, Err: fmt.Errorf("line longer than the fault's %d-byte bound", uncappedLineBytes)}
			}
			if !utf8.Valid(line) {
				return nil, &Error{Kind: ErrFrame, Err: &jsonline.Error{Kind: jsonline.ErrInvalidUTF8}}
			}
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			if len(u.buf) > uncappedLineBytes {
				return nil, &Error{Kind: ErrFrame, Err: fmt.Errorf("line longer than the fault's %d-byte bound", uncappedLineBytes)}
			}
		case errors.Is(err, io.EOF):
			eos := &jsonline.Error{Kind: jsonline.ErrUnexpectedEndOfStream}
			if len(u.buf) == 0 {
				return nil, &Error{Kind: ErrEndOfInput, Err: eos}
			}
			return nil, &Error{Kind: ErrFrame, Err: eos}
		default:
			return nil, &Error{Kind: ErrFrame, Err: &jsonline.Error{Kind: jsonline.ErrIO, Err: err}}
		}
	}
}

// portableOnlySealer refuses answers whose payload holds a non-portable number, whatever the
// peer proved and whatever the answer reports (FaultRefuseNonPortableAnswers).
type portableOnlySealer struct{ inner frameSealer }

// SealAppend refuses m when its payload is not portable, and otherwise seals it with the
// inner sealer.
func (s portableOnlySealer) SealAppend(dst []byte, m protocol.Message) (protocol.Frame, []byte, error) {
	p, _ := protocol.PayloadOf(m)
	if p.Format == protocol.FormatJSON {
		if _, token, portable := canonjson.AppendJSONPortability(nil, p.JSON); !portable {
			return protocol.Frame{}, dst, &protocol.NonPortableNumberError{Kind: protocol.ErrNonPortableNumber, Token: token}
		}
	}
	return s.inner.SealAppend(dst, m)
}
