package worker

import (
	"bytes"
	"crypto/subtle"
	"encoding/hex"
	"unicode/utf8"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
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

// recordFrame adds a record of data, which the transcript line just written reports. It
// records nothing once the transcript is full, so that every record has its line.
func (t *T) recordFrame(w *Worker, sent bool, kind string, data []byte) {
	if len(t.Transcript) == 0 || len(t.Transcript) > conformance.MaxTranscript {
		return
	}
	rec := conformance.FrameRecord{Entry: len(t.Transcript) - 1, Worker: w.index, Sent: sent, Kind: kind, Size: len(data)}
	line := data
	if kind == conformance.FrameBytes {
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
		if kind == conformance.FrameLine || bytes.HasPrefix(line, []byte("{")) {
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
func decodeRecord(rec *conformance.FrameRecord, w *Worker, line []byte) {
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
