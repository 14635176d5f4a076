package alphabet

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/splashv5/conform/impl/protocol"
	"lukechampine.com/blake3"
)

// Retag changes the message of a frame line this session sealed and tags the changed message
// text again, so that a mutated message arrives with a tag that verifies over its bytes as
// written (chapter 3's tag input holds the message text as the frame carries it). A worker
// then judges the message itself instead of refusing the tag. The key is used inside and never
// returned.
func (s *Session) Retag(line []byte, change func(message []byte) []byte) ([]byte, error) {
	return s.retag(line, protocol.RoleHost, change)
}

// retag is Retag with the tag computed for the given sender role: a frame tagged with the
// worker role is one a reflecting attacker could send (FRM-028).
func (s *Session) retag(line []byte, sender protocol.Role, change func(message []byte) []byte) ([]byte, error) {
	const seqField, msgField, tagField = `{"sequence":`, `,"message":`, `,"auth_tag":"`
	if !bytes.HasPrefix(line, []byte(seqField)) {
		return nil, fmt.Errorf("%w: not a frame this session sealed", ErrConcretize)
	}
	m := bytes.Index(line, []byte(msgField))
	t := bytes.LastIndex(line, []byte(tagField))
	if m < 0 || t < m {
		return nil, fmt.Errorf("%w: not a frame this session sealed", ErrConcretize)
	}
	seq, err := strconv.ParseUint(string(line[len(seqField):m]), 10, 64)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConcretize, err)
	}
	msg := change(bytes.Clone(line[m+len(msgField) : t]))
	// The tag input of chapter 3 with the changed message text in place of the message.
	input := protocol.AppendTagInput(nil, s.id, sender, seq, protocol.CloseSessionMessage{})
	head := bytes.LastIndex(input, []byte(`,"message":`)) + len(`,"message":`)
	input = append(append(input[:head:head], msg...), '}')
	raw, err := s.key.ExposeSecret()
	if err != nil {
		return nil, err
	}
	h := blake3.New(protocol.AuthTagBytes, raw[:])
	clear(raw[:])
	_, _ = h.Write(input)
	out := append([]byte(nil), line[:m+len(msgField)]...)
	out = append(out, msg...)
	out = append(out, tagField...)
	out = protocol.AppendHex(out, h.Sum(nil))
	return append(out, '"', '}'), nil
}
