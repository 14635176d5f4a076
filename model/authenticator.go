package model

import "math"

// MaxSequence is the sequence number that can never be sealed or opened
// (2^64 - 1).
const MaxSequence uint64 = math.MaxUint64

// The two authenticator roles, spelled as in the tag input.
const (
	RoleHost   = "host"
	RoleWorker = "worker"
)

// PeerRole returns the role on the other end of a session.
func PeerRole(role string) string {
	if role == RoleHost {
		return RoleWorker
	}
	return RoleHost
}

// AuthFrame is an abstract sealed frame: who sealed it, under which session
// and key, the session named inside its message, its sequence, and whether
// its bytes still carry the tag computed at sealing (Intact is false after
// any change of the message, the sequence or the tag).
type AuthFrame struct {
	Sender         string
	Session        string // the sealer's session, bound into the tag
	Key            string // identity of the sealing key
	MessageSession string // the session named inside the message
	Sequence       uint64
	Intact         bool
}

// AuthSide is one party of a session: its role, session, key identity and
// its two independent counters (next outgoing and next incoming sequence).
type AuthSide struct {
	Role    string
	Session string
	Key     string
	NextOut uint64
	NextIn  uint64
}

// NewAuthSide returns a party whose counters start at nextOut and nextIn
// (1 and 1 for a fresh session).
func NewAuthSide(role, session, key string, nextOut, nextIn uint64) *AuthSide {
	return &AuthSide{Role: role, Session: session, Key: key, NextOut: nextOut, NextIn: nextIn}
}

// AuthPair is the host and the worker of one session: the host's sealer
// feeds the worker's opener and the worker's sealer feeds the host's opener.
type AuthPair struct {
	Host   *AuthSide
	Worker *AuthSide
}

// NewAuthPair returns a fresh pair sharing session and key, all counters at 1.
func NewAuthPair(session, key string) AuthPair {
	return AuthPair{
		Host:   NewAuthSide(RoleHost, session, key, 1, 1),
		Worker: NewAuthSide(RoleWorker, session, key, 1, 1),
	}
}

// Seal seals a valid message naming messageSession. It returns the frame and
// "" on success, or the error variant name and an empty frame: the message
// must name this side's session ("UnknownSession"), then the next sequence
// must not be MaxSequence ("SequenceExhausted"). Only success advances
// NextOut.
func (s *AuthSide) Seal(messageSession string) (AuthFrame, string) {
	if messageSession != s.Session {
		return AuthFrame{}, "UnknownSession"
	}
	if s.NextOut == MaxSequence {
		return AuthFrame{}, "SequenceExhausted"
	}
	f := AuthFrame{
		Sender:         s.Role,
		Session:        s.Session,
		Key:            s.Key,
		MessageSession: messageSession,
		Sequence:       s.NextOut,
		Intact:         true,
	}
	s.NextOut++
	return f, ""
}

// Open opens a syntactically valid frame and returns "" on success or the
// error variant name, in the reference order: the tag verifies only for an
// intact frame sealed by the peer role under this side's session and key
// ("InvalidAuthenticationTag"); then the message must name this session
// ("UnknownSession"); then the sequence must be NextIn
// ("UnexpectedSequence"); then NextIn must not be MaxSequence
// ("SequenceExhausted"). Only success advances NextIn.
func (s *AuthSide) Open(f AuthFrame) string {
	if !f.Intact || f.Sender != PeerRole(s.Role) || f.Session != s.Session || f.Key != s.Key {
		return "InvalidAuthenticationTag"
	}
	if f.MessageSession != s.Session {
		return "UnknownSession"
	}
	if f.Sequence != s.NextIn {
		return "UnexpectedSequence"
	}
	if s.NextIn == MaxSequence {
		return "SequenceExhausted"
	}
	s.NextIn++
	return ""
}
