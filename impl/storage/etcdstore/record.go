package etcdstore

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"io"
	"sync"

	"github.com/splashv5/conform/impl/storage"
)

// A record value is u64be(revision) followed by its body. The body is one format byte and
// the envelope: bodyRaw (the envelope as is) or bodyDeflate (the envelope compressed with
// DEFLATE, RFC 1951), whichever is shorter. An empty body, or one that starts with '{', is
// the envelope alone, as earlier versions of the backend wrote it.
const (
	bodyRaw     = 0x00
	bodyDeflate = 0x01
	bodyLegacy  = '{'
)

// compressors reuses DEFLATE writers, which allocate about 1 MiB each.
var compressors = sync.Pool{New: func() any {
	w, _ := flate.NewWriter(nil, flate.BestSpeed)
	return w
}}

// encodeRecord returns the etcd value of the record revision with the given envelope.
func encodeRecord(revision uint64, envelope []byte) []byte {
	out := binary.BigEndian.AppendUint64(make([]byte, 0, 9+len(envelope)/2), revision)
	out = append(out, bodyDeflate)
	buf := bytes.NewBuffer(out)
	w := compressors.Get().(*flate.Writer)
	w.Reset(buf)
	_, _ = w.Write(envelope)
	_ = w.Close()
	compressors.Put(w)
	if buf.Len() < 9+len(envelope) {
		return buf.Bytes()
	}
	out = binary.BigEndian.AppendUint64(make([]byte, 0, 9+len(envelope)), revision)
	return append(append(out, bodyRaw), envelope...)
}

// decodeRecordBody returns the envelope of a record body. A body in no known format, or
// whose compressed envelope does not inflate, is storage.ErrCorrupt; an envelope larger
// than storage.MaxRecordBytes is storage.ErrStoredRecordTooLarge (inflating stops there).
func decodeRecordBody(body []byte) ([]byte, error) {
	var envelope []byte
	switch {
	case len(body) == 0 || body[0] == bodyLegacy:
		envelope = body
	case len(body) > 0 && body[0] == bodyRaw:
		envelope = body[1:]
	case len(body) > 0 && body[0] == bodyDeflate:
		r := flate.NewReader(bytes.NewReader(body[1:]))
		defer r.Close()
		var err error
		envelope, err = io.ReadAll(io.LimitReader(r, storage.MaxRecordBytes+1))
		if err != nil {
			return nil, &storage.Error{Kind: storage.ErrCorrupt, Err: fmt.Errorf("record: compressed envelope: %w", err)}
		}
	default:
		return nil, &storage.Error{Kind: storage.ErrCorrupt, Err: fmt.Errorf("record: unknown body format (%d bytes)", len(body))}
	}
	if len(envelope) > storage.MaxRecordBytes {
		return nil, &storage.Error{Kind: storage.ErrStoredRecordTooLarge, Size: len(envelope), Limit: storage.MaxRecordBytes}
	}
	return envelope, nil
}
