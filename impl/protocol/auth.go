package protocol

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"sync/atomic"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/errkind"
)

// ErrNonPortableNumber is the one error kind the Go reference adds to the
// reference's vocabulary; it is NOT a variant of the Rust ProtocolError and
// KindOf does not report it. A Sealer returns it (as a *NonPortableNumberError)
// when a message holds a payload number that the two reference number models
// would write differently, so the peer would compute another tag. Sealing
// never rewrites such a number. The refusal is lifted once the peer has shown
// that it keeps number text (PeerKeepsNumberText), for messages that report a
// durable outcome, and by AllowNonPortableNumbers (ENC-037, ENC-053, ENC-054).
const ErrNonPortableNumber = errkind.Kind[goOnlyKinds](1)

// goOnlyKinds is the space of the error kinds the Go reference alone defines.
type goOnlyKinds struct{}

// Table describes the Go-only kinds.
func (goOnlyKinds) Table() *errkind.Table { return &goOnlyTable }

var goOnlyTable = errkind.Table{Type: "goOnlyKind", Prefix: "protocol: ", Kinds: []errkind.Entry{
	ErrNonPortableNumber: {Name: "NonPortableNumber"},
}}

// NonPortableNumberError reports the first non-portable number of a message that was to be
// sealed. Its Kind is ErrNonPortableNumber; it wraps canonjson.ErrNonPortableNumber.
type NonPortableNumberError struct {
	errkind.Kind[goOnlyKinds]
	// Token is the number as the message's canonical JSON spells it, or
	// canonjson.PrivateNumberObject for an object whose first key is
	// "$serde_json::private::Number" (ENC-034).
	Token string
}

// Error describes the failure.
func (e *NonPortableNumberError) Error() string {
	if e.Token == canonjson.PrivateNumberObject {
		return "protocol: NonPortableNumber: a payload object whose first key is " +
			"$serde_json::private::Number reads as a number in Preserve mode; refusing to seal"
	}
	tok := e.Token
	if len(tok) > 64 {
		tok = tok[:64] + "..."
	}
	return "protocol: NonPortableNumber: payload number " + strconv.Quote(tok) +
		" is written differently by the two reference number models; refusing to seal"
}

// Unwrap returns canonjson.ErrNonPortableNumber, the sentinel of the rule the number breaks.
func (e *NonPortableNumberError) Unwrap() error { return canonjson.ErrNonPortableNumber }

// tagInputHead returns the constant start of a tag input for sender, up to
// and including `"sequence":`.
func tagInputHead(sender Role) string {
	if sender == RoleWorker {
		return `{"domain":"` + AuthDomain + `","protocol_version":5,"sender":"worker","sequence":`
	}
	return `{"domain":"` + AuthDomain + `","protocol_version":5,"sender":"host","sequence":`
}

// AppendTagInput appends the tag input of a frame: the compact JSON
// {"domain":"splash-worker-auth-v5","protocol_version":5,"sender":<sender>,
// "sequence":<sequence>,"session_id":<sessionID>,"message":<m as AppendJSON writes it>}.
// sessionID is the authenticating side's session, not the message's. It
// checks nothing: sealing and opening check the message and the size first.
func AppendTagInput(dst []byte, sessionID string, sender Role, sequence uint64, m Message) []byte {
	dst, _, _ = appendTagInput(dst, sessionID, sender, sequence, m)
	return dst
}

// TagInput returns AppendTagInput(nil, ...).
func TagInput(sessionID string, sender Role, sequence uint64, m Message) []byte {
	return AppendTagInput(nil, sessionID, sender, sequence, m)
}

// appendTagInput also returns the bounds of the message inside the result.
func appendTagInput(dst []byte, sessionID string, sender Role, sequence uint64, m Message) (out []byte, msgStart, msgEnd int) {
	dst = appendTagInputHead(dst, sessionID, sender, sequence)
	msgStart = len(dst)
	dst = m.AppendJSON(dst)
	msgEnd = len(dst)
	return append(dst, '}'), msgStart, msgEnd
}

// appendTagInputHead appends a tag input up to the message: everything before its value.
func appendTagInputHead(dst []byte, sessionID string, sender Role, sequence uint64) []byte {
	dst = append(dst, tagInputHead(sender)...)
	dst = strconv.AppendUint(dst, sequence, 10)
	dst = append(dst, `,"session_id":`...)
	dst = canonjson.AppendString(dst, sessionID)
	return append(dst, `,"message":`...)
}

// ComputeTag returns the 32-byte BLAKE3 keyed hash, under key, of the tag input
// for (sessionID, sender, sequence, m). A tag input over MaxWireFrameBytes
// gives WireFrameTooLarge, and a nil or closed key WeakSessionKey. Like
// AppendTagInput it does not validate the message.
func ComputeTag(key *SessionKey, sessionID string, sender Role, sequence uint64, m Message) ([AuthTagBytes]byte, error) {
	if !key.usable() {
		return [AuthTagBytes]byte{}, &Error{Kind: ErrWeakSessionKey}
	}
	input := AppendTagInput(nil, sessionID, sender, sequence, m)
	if len(input) > MaxWireFrameBytes {
		return [AuthTagBytes]byte{}, &Error{Kind: ErrWireFrameTooLarge, Actual: uint64(len(input)), Maximum: MaxWireFrameBytes}
	}
	h := new(keyedHasher)
	h.setKey(&key.b)
	defer h.wipe()
	return h.sum(input), nil
}

// tagState is the keyed hasher and the reusable tag-input buffer of one
// direction. Each Sealer and Opener owns one, so the two halves never share
// mutable state.
type tagState struct {
	h      keyedHasher
	buf    []byte
	closed bool
}

func newTagState(key *SessionKey) *tagState {
	st := &tagState{}
	st.h.setKey(&key.b)
	return st
}

// sum hashes st.buf after making sure it has hashBatchBytes of spare
// capacity, so the hasher compresses the last batch in place.
func (st *tagState) sum() [AuthTagBytes]byte {
	if cap(st.buf)-len(st.buf) < hashBatchBytes {
		grown := make([]byte, len(st.buf), len(st.buf)+hashBatchBytes+len(st.buf)/4)
		copy(grown, st.buf)
		st.buf = grown
	}
	return st.h.sum(st.buf)
}

// close wipes the key and the last tag input.
func (st *tagState) close() {
	st.h.wipe()
	clear(st.buf[:cap(st.buf)])
	st.buf = nil
	st.closed = true
}

// authConfig collects the AuthenticatorOptions.
type authConfig struct {
	allowNonPortable bool
	nextOutgoing     uint64
	nextIncoming     uint64
}

// AuthenticatorOption adjusts NewAuthenticator.
type AuthenticatorOption func(*authConfig)

// AllowNonPortableNumbers turns off the Go reference's sending policy: the
// Sealer then seals messages whose payload numbers are not portable between
// the two reference number models (the frame is still byte-exact for the
// authenticator's own mode, but a peer in the other mode rejects its tag).
// Use it only to generate vectors or to play the role of one specific
// reference build: a live session relies on the peer proof of ENC-053.
func AllowNonPortableNumbers() AuthenticatorOption {
	return func(c *authConfig) { c.allowNonPortable = true }
}

// WithSequences starts the authenticator at the given next outgoing and next
// incoming sequence numbers instead of 1 and 1. Both must be at least 1. It
// exists for vectors, oracles and tests (for example to reach the exhaustion
// of sequence 2^64-1); a live session always starts at 1.
func WithSequences(nextOutgoing, nextIncoming uint64) AuthenticatorOption {
	return func(c *authConfig) { c.nextOutgoing, c.nextIncoming = nextOutgoing, nextIncoming }
}

// Authenticator seals outgoing frames and opens incoming frames of one
// session for one role. Outgoing and incoming sequences are independent and
// both start at 1. It is not safe for concurrent use; Split it to give the
// sealing and the opening direction to different goroutines.
type Authenticator struct {
	sealer *Sealer
	opener *Opener
}

// NewAuthenticator returns an authenticator for sessionID speaking as role.
// Received frames are decoded in mode; the Go reference receives in
// canonjson.Preserve. Sealing refuses non-portable payload numbers
// (ErrNonPortableNumber) unless AllowNonPortableNumbers is given.
//
// Errors: InvalidToken ("session id") for a session id that is not a token,
// then WeakSessionKey for a nil or closed key; an invalid role or mode, or a
// zero starting sequence, is a usage error outside the protocol kinds. The
// authenticator keeps its own copy of the key: closing key afterwards does
// not affect it (use Close).
func NewAuthenticator(sessionID string, key *SessionKey, role Role, mode canonjson.Mode, opts ...AuthenticatorOption) (*Authenticator, error) {
	if err := ValidateToken(FieldSessionID, sessionID); err != nil {
		return nil, err
	}
	if !key.usable() {
		return nil, &Error{Kind: ErrWeakSessionKey}
	}
	if !role.Valid() {
		return nil, fmt.Errorf("protocol: invalid authenticator role %d", uint8(role))
	}
	if mode != canonjson.Preserve && mode != canonjson.Lossy {
		return nil, fmt.Errorf("protocol: authenticator number mode %d: %w", uint8(mode), canonjson.ErrUnknownMode)
	}
	cfg := authConfig{nextOutgoing: 1, nextIncoming: 1}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.nextOutgoing == 0 || cfg.nextIncoming == 0 {
		return nil, errors.New("protocol: authenticator sequences start at 1 or later")
	}
	peer := new(peerNumbers)
	return &Authenticator{
		sealer: &Sealer{
			sessionID:     sessionID,
			role:          role,
			checkPortable: !cfg.allowNonPortable,
			peer:          peer,
			next:          cfg.nextOutgoing,
			st:            newTagState(key),
		},
		opener: &Opener{
			sessionID: sessionID,
			role:      role,
			mode:      mode,
			peer:      peer,
			next:      cfg.nextIncoming,
			st:        newTagState(key),
		},
	}, nil
}

// SessionID returns the session the authenticator is bound to.
func (a *Authenticator) SessionID() string { return a.sealer.sessionID }

// Role returns the role the authenticator seals as.
func (a *Authenticator) Role() Role { return a.sealer.role }

// Mode returns the number mode received frames are decoded in.
func (a *Authenticator) Mode() canonjson.Mode { return a.opener.mode }

// NextOutgoing returns the sequence the next sealed frame will carry.
func (a *Authenticator) NextOutgoing() uint64 { return a.sealer.next }

// NextIncoming returns the sequence the next opened frame must carry.
func (a *Authenticator) NextIncoming() uint64 { return a.opener.next }

// Seal is Sealer.Seal on the outgoing half.
func (a *Authenticator) Seal(m Message) (Frame, []byte, error) { return a.sealer.Seal(m) }

// SealAppend is Sealer.SealAppend on the outgoing half.
func (a *Authenticator) SealAppend(dst []byte, m Message) (Frame, []byte, error) {
	return a.sealer.SealAppend(dst, m)
}

// SealResultAppend is Sealer.SealResultAppend on the outgoing half.
func (a *Authenticator) SealResultAppend(dst []byte, r ToolResult) ([]byte, error) {
	return a.sealer.SealResultAppend(dst, r)
}

// Open is Opener.Open on the incoming half.
func (a *Authenticator) Open(line []byte) (Frame, error) { return a.opener.Open(line) }

// OpenInvoke is Opener.OpenInvoke.
func (a *Authenticator) OpenInvoke(line []byte) (ToolInvocation, Message, error) {
	return a.opener.OpenInvoke(line)
}

// OpenFrame is Opener.OpenFrame on the incoming half.
func (a *Authenticator) OpenFrame(f Frame) (Message, error) { return a.opener.OpenFrame(f) }

// PeerKeepsNumberText reports whether the peer has proven, in this session,
// that it keeps number text (ENC-053); see Opener.PeerKeepsNumberText.
func (a *Authenticator) PeerKeepsNumberText() bool { return a.opener.peer.keepsText() }

// Split returns the outgoing and the incoming half with their current
// counters, so a writer goroutine can own one and a reader goroutine the
// other. The halves are the authenticator's own state, not copies: no
// sequence space is ever forked, and the Authenticator must not be used once
// its halves have been handed out.
func (a *Authenticator) Split() (*Sealer, *Opener) { return a.sealer, a.opener }

// Close wipes both halves' key copies and buffers. Later Seal and Open calls
// fail with WeakSessionKey. Close is idempotent.
func (a *Authenticator) Close() error {
	a.sealer.Close()
	a.opener.Close()
	return nil
}

// String describes the authenticator without key material. String, GoString
// and Format have value receivers so that neither an Authenticator nor a
// pointer to one can be printed field by field; the same holds for Sealer
// and Opener.
func (a Authenticator) String() string {
	return fmt.Sprintf("Authenticator{session: %q, role: %v, next outgoing: %d, next incoming: %d}",
		a.sealer.sessionID, a.sealer.role, a.sealer.next, a.opener.next)
}

// GoString is String.
func (a Authenticator) GoString() string { return a.String() }

// Format writes String for every verb.
func (a Authenticator) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, a.String()) }

// Sealer is the outgoing half of an authenticator: it owns the outgoing
// sequence and a copy of the key. Exactly one goroutine should own it.
type Sealer struct {
	sessionID     string
	role          Role
	checkPortable bool
	peer          *peerNumbers
	next          uint64
	st            *tagState
	result        ResultMessage // SealResultAppend's message, so it is not allocated
}

// SessionID returns the session the sealer is bound to.
func (s *Sealer) SessionID() string { return s.sessionID }

// Role returns the role the sealer seals as.
func (s *Sealer) Role() Role { return s.role }

// NextOutgoing returns the sequence the next sealed frame will carry.
func (s *Sealer) NextOutgoing() uint64 { return s.next }

// Seal authenticates m as the next outgoing frame and returns the frame and
// its encoded line (without the newline; a new slice the caller owns).
//
// Checks, in order: m is present and valid (message validation errors);
// every payload number is portable (ErrNonPortableNumber, Go only) unless the
// peer has proven that it keeps number text (ENC-053), m reports a durable
// outcome (ENC-054) or AllowNonPortableNumbers was given; m names this session (UnknownSession with m's session); the
// next sequence is not 2^64-1 (SequenceExhausted); the tag input fits 1 MiB
// (WireFrameTooLarge); the frame line fits 1 MiB (WireFrameTooLarge). Only a
// successful seal advances the outgoing sequence. A closed sealer fails with
// WeakSessionKey.
func (s *Sealer) Seal(m Message) (Frame, []byte, error) {
	return s.seal(nil, m, true)
}

// SealAppend is Seal, but appends the frame line to dst and returns the
// extended slice, so a caller that writes each line out at once can reuse
// one buffer and seal without allocating. On error dst is returned
// unchanged.
func (s *Sealer) SealAppend(dst []byte, m Message) (Frame, []byte, error) {
	return s.seal(dst, m, false)
}

// SealResultAppend is SealAppend for the answer a worker gives most: it seals
// ResultMessage{Result: r} without allocating the message, and returns only the line.
func (s *Sealer) SealResultAppend(dst []byte, r ToolResult) ([]byte, error) {
	s.result = ResultMessage{Result: r}
	_, line, err := s.seal(dst, &s.result, false)
	s.result = ResultMessage{} // the box keeps nothing alive between frames
	return line, err
}

// seal implements Seal (exact, with a line of exactly the right capacity)
// and SealAppend.
func (s *Sealer) seal(dst []byte, m Message, exact bool) (Frame, []byte, error) {
	f, line, err := s.sealInto(dst, m, exact)
	if err != nil {
		return Frame{}, dst, err
	}
	return f, line, nil
}

func (s *Sealer) sealInto(dst []byte, m Message, exact bool) (Frame, []byte, error) {
	if s.st.closed {
		return Frame{}, nil, &Error{Kind: ErrWeakSessionKey}
	}
	if m == nil {
		return Frame{}, nil, &Error{Kind: ErrSerialization, Message: "no message to seal"}
	}
	if err := m.Validate(); err != nil {
		return Frame{}, nil, err
	}
	seq := s.next
	var buf []byte
	var msgStart, msgEnd int
	if s.checkPortable && !s.peer.keepsText() {
		var err error
		buf, msgStart, msgEnd, err = s.appendCheckedTagInput(s.st.buf[:0], seq, m)
		s.st.buf = buf
		if err != nil {
			return Frame{}, nil, err
		}
	} else {
		buf, msgStart, msgEnd = appendTagInput(s.st.buf[:0], s.sessionID, s.role, seq, m)
		s.st.buf = buf
	}
	if sid := m.SessionID(); sid != s.sessionID {
		return Frame{}, nil, &Error{Kind: ErrUnknownSession, Value: sid}
	}
	if seq == math.MaxUint64 {
		return Frame{}, nil, &Error{Kind: ErrSequenceExhausted}
	}
	if len(buf) > MaxWireFrameBytes {
		return Frame{}, nil, &Error{Kind: ErrWireFrameTooLarge, Actual: uint64(len(buf)), Maximum: MaxWireFrameBytes}
	}
	tag := s.st.sum()
	msg := s.st.buf[msgStart:msgEnd] // after sum, which may have moved the buffer
	lineLen := len(`{"sequence":`) + decimalLen(seq) + len(`,"message":`) + len(msg) +
		len(`,"auth_tag":"`) + 2*AuthTagBytes + len(`"}`)
	if lineLen > MaxWireFrameBytes { // unreachable: the tag input is longer
		return Frame{}, nil, &Error{Kind: ErrWireFrameTooLarge, Actual: uint64(lineLen), Maximum: MaxWireFrameBytes}
	}
	line := dst
	if exact {
		line = make([]byte, 0, lineLen)
	}
	line = append(line, `{"sequence":`...)
	line = strconv.AppendUint(line, seq, 10)
	line = append(line, `,"message":`...)
	line = append(line, msg...)
	line = append(line, `,"auth_tag":"`...)
	line = AppendHex(line, tag[:])
	line = append(line, `"}`...)
	s.next++
	return Frame{Sequence: seq, Message: m, Tag: tag}, line, nil
}

// Close wipes the sealer's key copy and buffer; later seals fail with
// WeakSessionKey.
func (s *Sealer) Close() error {
	s.st.close()
	return nil
}

// String describes the sealer without key material.
func (s Sealer) String() string {
	return fmt.Sprintf("Sealer{session: %q, role: %v, next outgoing: %d}", s.sessionID, s.role, s.next)
}

// GoString is String.
func (s Sealer) GoString() string { return s.String() }

// Format writes String for every verb.
func (s Sealer) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, s.String()) }

// Opener is the incoming half of an authenticator: it owns the incoming
// sequence and a copy of the key. Exactly one goroutine should own it.
type Opener struct {
	sessionID string
	role      Role
	mode      canonjson.Mode
	peer      *peerNumbers
	next      uint64
	st        *tagState
	invoke    InvokeMessage // OpenInvoke's message, so it is not allocated
}

// SessionID returns the session the opener is bound to.
func (o *Opener) SessionID() string { return o.sessionID }

// Role returns the opener's own role; frames are expected from its peer.
func (o *Opener) Role() Role { return o.role }

// Mode returns the number mode received frames are decoded in.
func (o *Opener) Mode() canonjson.Mode { return o.mode }

// NextIncoming returns the sequence the next opened frame must carry.
func (o *Opener) NextIncoming() uint64 { return o.next }

// PeerKeepsNumberText reports whether a frame opened in this session has
// proven that the peer keeps number text (ENC-053): in Preserve mode, its
// payload held a number that no Lossy writer writes. From then on
// the paired Sealer seals non-portable numbers. It is safe to call from any
// goroutine.
func (o *Opener) PeerKeepsNumberText() bool { return o.peer.keepsText() }

// Open decodes one frame line (without its newline) and authenticates it as
// the next incoming frame from the peer role.
//
// Checks, in order: the line decodes (WireFrameTooLarge over 1 MiB,
// Serialization, then frame syntax: InvalidSequence, message validation,
// InvalidAuthenticationTag for a malformed tag); the recomputed tag input
// fits 1 MiB (WireFrameTooLarge); the tag matches in constant time
// (InvalidAuthenticationTag); the message names this session
// (UnknownSession); the sequence is the next expected one
// (UnexpectedSequence{expected, actual}); that sequence is not 2^64-1
// (SequenceExhausted). A failed open changes nothing and returns no frame.
func (o *Opener) Open(line []byte) (Frame, error) {
	if o.st.closed {
		return Frame{}, &Error{Kind: ErrWeakSessionKey}
	}
	f, message, err := decodeFrame(line, o.mode, o.sessionID, nil)
	if err != nil {
		return Frame{}, err
	}
	if err := o.authenticate(f, message); err != nil {
		return Frame{}, err
	}
	return f, nil
}

// OpenInvoke is Open for the frame a worker receives most. When the frame is an invoke, it
// returns the invocation and a nil message; otherwise it returns a zero invocation and the
// message Open returns. It runs the same checks as Open, in the same order, and an invoke in
// the common layout costs it no allocation beyond the strings the invocation keeps.
func (o *Opener) OpenInvoke(line []byte) (ToolInvocation, Message, error) {
	if o.st.closed {
		return ToolInvocation{}, nil, &Error{Kind: ErrWeakSessionKey}
	}
	f, message, err := decodeFrame(line, o.mode, o.sessionID, &o.invoke)
	if err == nil {
		err = o.authenticate(f, message)
	}
	boxed := f.Message == Message(&o.invoke)
	inv := o.invoke.Invocation
	o.invoke = InvokeMessage{} // the box keeps nothing alive between frames
	switch {
	case err != nil:
		return ToolInvocation{}, nil, err
	case boxed:
		return inv, nil, nil
	}
	if m, ok := f.Message.(InvokeMessage); ok {
		return m.Invocation, nil, nil
	}
	return ToolInvocation{}, f.Message, nil
}

// OpenFrame authenticates an already decoded frame, running the frame syntax
// checks first (InvalidSequence, then message validation) and then the same
// checks as Open. It returns the message only on success.
func (o *Opener) OpenFrame(f Frame) (Message, error) {
	if o.st.closed {
		return nil, &Error{Kind: ErrWeakSessionKey}
	}
	if err := f.ValidateSyntax(); err != nil {
		return nil, err
	}
	if err := o.authenticate(f, nil); err != nil {
		return nil, err
	}
	return f.Message, nil
}

// authenticate runs the open checks after frame syntax validation. message is f.Message's
// JSON when the decoder already holds it, and nil when it must be written.
func (o *Opener) authenticate(f Frame, message []byte) error {
	var buf []byte
	if message != nil {
		buf = appendTagInputHead(o.st.buf[:0], o.sessionID, o.role.Peer(), f.Sequence)
		buf = append(append(buf, message...), '}')
	} else {
		buf, _, _ = appendTagInput(o.st.buf[:0], o.sessionID, o.role.Peer(), f.Sequence, f.Message)
	}
	o.st.buf = buf
	if len(buf) > MaxWireFrameBytes {
		return &Error{Kind: ErrWireFrameTooLarge, Actual: uint64(len(buf)), Maximum: MaxWireFrameBytes}
	}
	want := o.st.sum()
	if subtle.ConstantTimeCompare(want[:], f.Tag[:]) != 1 {
		return &Error{Kind: ErrInvalidAuthenticationTag}
	}
	if sid := f.Message.SessionID(); sid != o.sessionID {
		return &Error{Kind: ErrUnknownSession, Value: sid}
	}
	if f.Sequence != o.next {
		return &Error{Kind: ErrUnexpectedSequence, Expected: o.next, Actual: f.Sequence}
	}
	if o.next == math.MaxUint64 {
		return &Error{Kind: ErrSequenceExhausted}
	}
	o.next++
	if o.mode == canonjson.Preserve && !o.peer.keepsText() {
		if p, ok := PayloadOf(f.Message); ok && p.Format == FormatJSON && canonjson.HoldsPreserveOnlyNumber(p.JSON) {
			o.peer.provedKeepsText()
		}
	}
	return nil
}

// PayloadOf returns the payload m carries, if it has one (inside the status for the
// durable answers): a message's only free-form JSON, and so the only place a non-portable
// or Preserve-only number can stand.
func PayloadOf(m Message) (ToolPayload, bool) {
	switch m := m.(type) {
	case InvokeMessage:
		return m.Invocation.Payload, true
	case *InvokeMessage: // OpenInvoke's
		return m.Invocation.Payload, true
	case ResultMessage:
		return m.Result.Payload, true
	case DispatchOperationMessage:
		return m.Request.Payload, true
	case CompensateOperationMessage:
		return m.Request.Payload, true
	case OperationResultMessage:
		return m.Result.Status.Payload, true
	case ReconciledOperationMessage:
		return m.Result.Status.Payload, true
	case CompensationResultMessage:
		return m.Result.Status.Payload, true
	}
	return ToolPayload{}, false
}

// peerNumbers is what one session has learned of its peer's number model; a
// Sealer and an Opener of one authenticator share it, possibly from two
// goroutines.
type peerNumbers struct{ keeps atomic.Bool }

func (p *peerNumbers) keepsText() bool  { return p.keeps.Load() }
func (p *peerNumbers) provedKeepsText() { p.keeps.Store(true) }

// Close wipes the opener's key copy and buffer; later opens fail with
// WeakSessionKey.
func (o *Opener) Close() error {
	o.st.close()
	return nil
}

// String describes the opener without key material.
func (o Opener) String() string {
	return fmt.Sprintf("Opener{session: %q, role: %v, next incoming: %d}", o.sessionID, o.role, o.next)
}

// GoString is String.
func (o Opener) GoString() string { return o.String() }

// Format writes String for every verb.
func (o Opener) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, o.String()) }

// decimalLen returns the number of decimal digits of v.
func decimalLen(v uint64) int {
	n := 1
	for v >= 10 {
		v /= 10
		n++
	}
	return n
}

// appendCheckedTagInput is appendTagInput for the sealer, which also runs the
// portability check of m (see appendCheckedMessage) while it writes the payload,
// instead of scanning the written message a second time.
func (s *Sealer) appendCheckedTagInput(dst []byte, seq uint64, m Message) (out []byte, msgStart, msgEnd int, err error) {
	dst = append(dst, tagInputHead(s.role)...)
	dst = strconv.AppendUint(dst, seq, 10)
	dst = append(dst, `,"session_id":`...)
	dst = canonjson.AppendString(dst, s.sessionID)
	dst = append(dst, `,"message":`...)
	msgStart = len(dst)
	dst, err = s.appendCheckedMessage(dst, m)
	msgEnd = len(dst)
	return append(dst, '}'), msgStart, msgEnd, err
}

// appendCheckedMessage appends m.AppendJSON() and returns a *NonPortableNumberError for
// the first payload number of m, in writing order, that is not portable: the verdict and
// the token of checkPortableJSON over the written message when m has a JSON payload that
// the policy checks. Messages without one need no check: their numbers are typed
// integers, always portable; durable outcomes are exempt (ENC-054). A message type this switch does not know
// is written and then scanned.
func (s *Sealer) appendCheckedMessage(dst []byte, m Message) ([]byte, error) {
	switch m := m.(type) {
	case OpenSessionMessage, ReconcileOperationMessage, CancelMessage, CancellationResultMessage, CloseSessionMessage:
		return m.AppendJSON(dst), nil // no payload, and typed integers are always portable
	case InvokeMessage:
		return appendPayloadChecked(dst, &m, &m.Invocation.Payload)
	case ResultMessage:
		return appendPayloadChecked(dst, &m, &m.Result.Payload)
	case *ResultMessage: // SealResultAppend's
		return appendPayloadChecked(dst, m, &m.Result.Payload)
	case DispatchOperationMessage:
		return appendPayloadChecked(dst, &m, &m.Request.Payload)
	case CompensateOperationMessage:
		return appendPayloadChecked(dst, &m, &m.Request.Payload)
	case OperationResultMessage, CompensationResultMessage, ReconciledOperationMessage:
		// A durable outcome is sealed whatever its numbers (ENC-054): the effect has
		// happened, and an answer withheld would leave it unreported for good.
		return m.AppendJSON(dst), nil
	}
	start := len(dst)
	dst = m.AppendJSON(dst)
	return dst, checkPortableJSON(dst[start:])
}

// appendPayloadChecked appends (*m).AppendJSON() for a message whose only JSON value is
// *p (a payload inside the copy *m, which it changes), and checks the portability of the
// payload's numbers while it writes them. The message's other numbers are typed integers,
// always portable.
//
// In every message kind that carries a payload, the payload is the last member of its
// object and that object ends the message, so the message is `..."value":` + the payload
// value + closing braces. The message is written once with null as the value, split there
// (payloadSlot), and the value is written, checked, in between. Should a message not have
// that shape, it is written as it is and its bytes are scanned, as checkPortableJSON does.
func appendPayloadChecked[M Message](dst []byte, m *M, p *ToolPayload) ([]byte, error) {
	if p.Format != FormatJSON {
		// Text, or a status without payload (its zero ToolPayload is text).
		return (*m).AppendJSON(dst), nil
	}
	payload := p.JSON
	start := len(dst)
	p.JSON = canonjson.Null()
	dst = (*m).AppendJSON(dst)
	p.JSON = payload
	at, closing := payloadSlot(dst[start:])
	if at < 0 {
		dst = (*m).AppendJSON(dst[:start])
		return dst, checkPortableJSON(dst[start:])
	}
	dst, token, ok := canonjson.AppendJSONPortability(dst[:start+at], payload)
	for range closing {
		dst = append(dst, '}')
	}
	if !ok {
		return dst, &NonPortableNumberError{Kind: ErrNonPortableNumber, Token: token}
	}
	return dst, nil
}

// payloadSlot finds the null payload value in msg, a message written with null as its
// payload value: msg must end with `"value":null` followed only by closing braces. It
// returns the offset of null and the number of braces after it, or -1.
func payloadSlot(msg []byte) (at, closing int) {
	end := len(msg)
	for end > 0 && msg[end-1] == '}' {
		end--
	}
	const slot = `"value":null`
	if end < len(slot) || string(msg[end-len(slot):end]) != slot {
		return -1, 0
	}
	return end - len("null"), len(msg) - end
}

// checkPortableJSON scans compact canonical JSON (as AppendJSON writes it)
// and returns a *NonPortableNumberError for the first number token that is
// not canonjson.PortableNumber. Typed integer fields are plain decimals and
// always portable; only payload values can fail.
func checkPortableJSON(b []byte) error {
	if tok, found := canonjson.FirstNonPortableNumber(string(b)); found {
		return &NonPortableNumberError{Kind: ErrNonPortableNumber, Token: tok}
	}
	return nil
}
