//go:build splashfaults

package worker

import (
	"errors"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
)

// numberFaults wraps the session's opener and sealer for the number faults: every
// non-portable number in a verified host frame counts as the peer's proof
// (FaultNonPortableIsProof), or a withheld result is reported as a sealing failure
// (FaultWithheldResultInternal).
func (f *Faults) numberFaults(auth *protocol.Authenticator, p *sessionParts) {
	if f.Has(FaultNonPortableIsProof) {
		proof := &anyNumberProof{key: f.SessionKey, sessionID: auth.SessionID(), auth: auth}
		p.opener = anyNumberProofOpener{p.opener, proof}
		p.sealer = anyNumberProofSealer{p.sealer, proof}
	}
	if f.Has(FaultWithheldResultInternal) {
		p.sealer = sealFailureSealer{p.sealer}
	}
}

// anyNumberProof is what FaultNonPortableIsProof knows of the peer: whether a verified frame
// held a non-portable number, and, once that let it seal an answer the authenticator refused,
// the sequence of its own next answer (from then on it seals every answer itself).
type anyNumberProof struct {
	key       *protocol.SessionKey
	sessionID string
	auth      *protocol.Authenticator
	seen      bool
	sealing   bool
	next      uint64
}

type anyNumberProofOpener struct {
	inner frameOpener
	proof *anyNumberProof
}

// Open opens the frame and takes any non-portable payload number as proof.
func (o anyNumberProofOpener) Open(line []byte) (protocol.Frame, error) {
	f, err := o.inner.Open(line)
	if err != nil {
		return f, err
	}
	if p, ok := protocol.PayloadOf(f.Message); ok && p.Format == protocol.FormatJSON {
		if _, _, portable := canonjson.AppendJSONPortability(nil, p.JSON); !portable {
			o.proof.seen = true
		}
	}
	return f, nil
}

type anyNumberProofSealer struct {
	inner frameSealer
	proof *anyNumberProof
}

// SealAppend seals as the inner sealer does until it refuses a non-portable answer after a
// non-portable number was seen; it then seals that answer and every later one itself, each in
// a line of its own.
func (s anyNumberProofSealer) SealAppend(dst []byte, m protocol.Message) (protocol.Frame, []byte, error) {
	p := s.proof
	if !p.sealing {
		f, line, err := s.inner.SealAppend(dst, m)
		if !p.seen || !errors.Is(err, protocol.ErrNonPortableNumber) {
			return f, line, err
		}
		p.sealing, p.next = true, p.auth.NextOutgoing()
	}
	f, line, err := sealAt(p.key, p.sessionID, p.next, m)
	if err == nil {
		p.next++
	}
	return f, line, err
}

// sealFailureSealer reports a refused non-portable answer as an error that is not
// ErrNonPortableNumber, so the runtime takes it for a sealing failure (internal).
type sealFailureSealer struct{ inner frameSealer }

func (s sealFailureSealer) SealAppend(dst []byte, m protocol.Message) (protocol.Frame, []byte, error) {
	f, line, err := s.inner.SealAppend(dst, m)
	if errors.Is(err, protocol.ErrNonPortableNumber) {
		return f, line, errors.New("sealing failed: " + err.Error())
	}
	return f, line, err
}

// sealAt authenticates m as the worker's frame at sequence seq, without any number check.
func sealAt(key *protocol.SessionKey, sessionID string, seq uint64, m protocol.Message) (protocol.Frame, []byte, error) {
	if err := m.Validate(); err != nil {
		return protocol.Frame{}, nil, err
	}
	if sid := m.SessionID(); sid != sessionID {
		return protocol.Frame{}, nil, &protocol.Error{Kind: protocol.ErrUnknownSession, Value: sid}
	}
	tag, err := protocol.ComputeTag(key, sessionID, protocol.RoleWorker, seq, m)
	if err != nil {
		return protocol.Frame{}, nil, err
	}
	f := protocol.Frame{Sequence: seq, Message: m, Tag: tag}
	line, err := protocol.EncodeFrame(f)
	if err != nil {
		return protocol.Frame{}, nil, err
	}
	return f, line, nil
}
