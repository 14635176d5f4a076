package conformance

import (
	"github.com/splashv5/conform/impl/protocol"
)

// Kinds of frame record.
const (
	// FrameLine is a line of the JSON-line transport: the runner wrote it followed by a line
	// feed, or read it up to one.
	FrameLine = "line"
	// FrameBytes is bytes the runner wrote exactly as they are (a bad bootstrap, a frame
	// without its line feed, a frame ending in CR LF).
	FrameBytes = "bytes"
)

// FrameRecord is one line or write of raw bytes exchanged with a worker, kept in full (within
// a per-check bound) for the reports of a check that did not pass, or of every check under -v.
// Bytes that carry a session key (the runner's own bootstraps) are never recorded.
type FrameRecord struct {
	// Entry is the index, in the result's Transcript, of the line that reports this frame.
	Entry int
	// Worker is the 1-based index of the worker among the check's launches.
	Worker int
	// Sent is true for bytes the runner wrote and false for a line the worker wrote.
	Sent bool
	// Kind is FrameLine or FrameBytes.
	Kind string
	// Raw is the line (without its line feed) or the bytes, as exchanged; when the check's
	// budget was spent, only the first bytes.
	Raw []byte
	// Size is the length of the whole line or write; Size > len(Raw) when bytes were left out.
	Size int
	// Decoded says whether the line decodes as a frame (frame syntax only, with the number
	// model of the host); Sequence, MessageType, SessionID, Message, Tag and TagVerified are
	// then set.
	Decoded bool
	// DecodeError is the error kind and message of a line that does not decode as a frame.
	DecodeError string
	// Sequence is the frame's sequence number.
	Sequence uint64
	// MessageType is the type of the frame's message.
	MessageType string
	// SessionID is the session the message names.
	SessionID string
	// Message is the canonical serialization of the message: the bytes the tag covers.
	Message string
	// Tag is the frame's tag as 64 hex digits.
	Tag string
	// TagVerified says whether the tag is the one the runner computes, under the session's
	// key, for the sender's role, the worker's session and the frame's sequence.
	TagVerified bool
	// TagInput, set when the tag did not verify, is the exact input the runner hashed: the
	// domain, version, sender role, sequence, session and canonical message (FRM-007). It
	// holds no key material.
	TagInput string
	// Note explains what was left out of the record, if anything.
	Note string
}

// Direction returns "sent" or "received".
func (f *FrameRecord) Direction() string {
	if f.Sent {
		return "sent"
	}
	return "received"
}

// SenderRole returns the protocol role of the frame's sender: host for frames the runner
// sent, worker for frames it received.
func (f *FrameRecord) SenderRole() string {
	if f.Sent {
		return protocol.RoleHost.String()
	}
	return protocol.RoleWorker.String()
}

// Failing reports whether the frame does not decode or its tag does not verify.
func (f *FrameRecord) Failing() bool {
	return f.DecodeError != "" || f.Decoded && !f.TagVerified
}
