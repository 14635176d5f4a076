package conformance

import (
	"bytes"
	"crypto/subtle"
	"encoding/hex"
	"unicode/utf8"

	"github.com/splashv5/conform/impl/canonjson"
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

// Bounds of what a check keeps of its frames for the reports.
const (
	// maxCheckFrameBytes bounds the bytes of raw lines, canonical messages and tag inputs
	// that one check keeps.
	maxCheckFrameBytes = 4 << 20
	// maxRunFrameBytes bounds the frame records that the results of one run keep.
	maxRunFrameBytes = 64 << 20
	// frameHeadBytes is what a record keeps of a line once the check's budget is spent.
	frameHeadBytes = 1024
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

// recordFrame adds a record of data, which the transcript line just written reports. It
// records nothing once the transcript is full, so that every record has its line.
func (t *T) recordFrame(w *Worker, sent bool, kind string, data []byte) {
	if len(t.Transcript) == 0 || len(t.Transcript) > MaxTranscript {
		return
	}
	rec := FrameRecord{Entry: len(t.Transcript) - 1, Worker: w.index, Sent: sent, Kind: kind, Size: len(data)}
	line := data
	if kind == FrameBytes {
		line = bytes.TrimSuffix(bytes.TrimSuffix(data, []byte("\n")), []byte("\r"))
	}
	room := maxCheckFrameBytes - t.frameBytes
	bound := "the check's frame records reached their bound of 4 MiB"
	if runRoom := maxRunFrameBytes - int(t.run.frameBytes.Load()); runRoom < room {
		room, bound = runRoom, "the run's frame records reached their bound of 64 MiB"
	}
	switch {
	case len(data) <= room/3:
		// Room for the raw line, its canonical message and a tag input of the same size.
		rec.Raw = bytes.Clone(data)
		if kind == FrameLine || bytes.HasPrefix(line, []byte("{")) {
			decodeRecord(&rec, w, line)
		}
	default:
		rec.Raw = bytes.Clone(data[:min(len(data), frameHeadBytes)])
		rec.Note = "only the first bytes are kept and the frame is not decoded: " + bound
	}
	kept := len(rec.Raw) + len(rec.Message) + len(rec.TagInput)
	t.frameBytes += kept
	t.run.frameBytes.Add(int64(kept))
	t.frames = append(t.frames, rec)
}

// decodeRecord decodes line as a frame and checks its tag under the worker's session key.
func decodeRecord(rec *FrameRecord, w *Worker, line []byte) {
	if !utf8.Valid(line) {
		rec.DecodeError = "the line is not UTF-8"
		return
	}
	f, err := protocol.DecodeFrame(line, canonjson.Preserve)
	if err != nil {
		rec.DecodeError = err.Error()
		return
	}
	rec.Decoded = true
	rec.Sequence = f.Sequence
	rec.MessageType = string(f.Message.Type())
	rec.SessionID = f.Message.SessionID()
	rec.Message = string(f.Message.AppendJSON(nil))
	rec.Tag = hex.EncodeToString(f.Tag[:])
	role := protocol.RoleWorker
	if rec.Sent {
		role = protocol.RoleHost
	}
	want, err := protocol.ComputeTag(w.key, w.SessionID, role, f.Sequence, f.Message)
	if err == nil && subtle.ConstantTimeCompare(want[:], f.Tag[:]) == 1 {
		rec.TagVerified = true
		return
	}
	rec.TagInput = string(protocol.TagInput(w.SessionID, role, f.Sequence, f.Message))
	if err != nil {
		rec.Note = "no tag could be computed: " + errorKind(err)
	}
}
