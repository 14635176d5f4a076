package etcdstore

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"io"
	"sync"

	"github.com/splashv5/conform/impl/storage"
	"github.com/splashv5/conform/impl/storage/internal/delta"
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

// A record can also be written as a chain, so that a write of a record that changed a
// little (a journal that grew by one operation) writes about what changed: the record key's
// value is then a head, u64be(revision), bodyChain, and four u32be: the number n of deltas,
// the envelope's length, and the lengths of the base and of the deltas together. The base
// (chainKey + "b", a body as above) is the envelope n revisions ago, and delta i (chainKey +
// "d" + 8 hex digits of i, for i from 1 to n) is u32be(length) and the delta.Append encoding
// of the envelope i revisions after the base from the one before it. A write appends one
// delta and rewrites the head and the anchor; it writes the whole envelope as a new base (and
// deletes the deltas) when the chain is at maxChain deltas, when the base and the deltas
// together would pass storage.MaxRecordBytes, so that a read of the chain stays within what
// the client accepts, or when the deltas together would pass the larger of the base and
// chainFloor bytes. The last bound keeps what a record holds in the cluster within about twice
// its envelope, since records are never deleted (JRN-009), while each write still writes about
// what changed: a new base of B bytes comes after at least B bytes of deltas.
const (
	bodyChain  = 0x10
	headBytes  = 8 + 1 + 16
	maxChain   = 256
	chainFloor = 8 << 10
)

// chainHead is the decoded head of a chained record.
type chainHead struct {
	revision                    uint64
	n, size, baseBytes, deltaSz int
}

func encodeHead(h chainHead) []byte {
	out := binary.BigEndian.AppendUint64(make([]byte, 0, headBytes), h.revision)
	out = append(out, bodyChain)
	for _, v := range []int{h.n, h.size, h.baseBytes, h.deltaSz} {
		out = binary.BigEndian.AppendUint32(out, uint32(v))
	}
	return out
}

func decodeHead(v []byte) (chainHead, error) {
	if len(v) != headBytes {
		return chainHead{}, &storage.Error{Kind: storage.ErrCorrupt, Err: fmt.Errorf("record head holds %d bytes, want %d", len(v), headBytes)}
	}
	h := chainHead{revision: binary.BigEndian.Uint64(v)}
	f := []*int{&h.n, &h.size, &h.baseBytes, &h.deltaSz}
	for i, p := range f {
		*p = int(binary.BigEndian.Uint32(v[9+4*i:]))
	}
	if h.size > storage.MaxRecordBytes {
		return chainHead{}, &storage.Error{Kind: storage.ErrStoredRecordTooLarge, Size: h.size, Limit: storage.MaxRecordBytes}
	}
	if h.n > maxChain {
		return chainHead{}, &storage.Error{Kind: storage.ErrCorrupt, Err: fmt.Errorf("record chain of %d deltas, at most %d", h.n, maxChain)}
	}
	return h, nil
}

// encodeBody is encodeRecord without the revision.
func encodeBody(envelope []byte) []byte { return encodeRecord(0, envelope)[8:] }

func deltaName(i int) string { return fmt.Sprintf("d%08x", i) }

// rebuildChain returns the envelope of head from the values under its chain key (names are
// the keys' suffixes after the chain key, in key order).
func rebuildChain(h chainHead, names []string, values [][]byte) ([]byte, error) {
	corrupt := func(format string, args ...any) error {
		return &storage.Error{Kind: storage.ErrCorrupt, Err: fmt.Errorf("record chain: "+format, args...)}
	}
	// Deltas past the head's are ignored: they exist only under a head older than its chain
	// (restored alone), whose record then fails the checks of its revision.
	if len(names) < h.n+1 || names[0] != "b" {
		return nil, corrupt("%d values for %d deltas and a base", len(names), h.n)
	}
	envelope, err := decodeRecordBody(values[0])
	if err != nil {
		return nil, err
	}
	for i := 1; i <= h.n; i++ {
		v := values[i]
		if names[i] != deltaName(i) || len(v) < 4 {
			return nil, corrupt("value %q where delta %d belongs", names[i], i)
		}
		size := int(binary.BigEndian.Uint32(v))
		if size > storage.MaxRecordBytes {
			return nil, &storage.Error{Kind: storage.ErrStoredRecordTooLarge, Size: size, Limit: storage.MaxRecordBytes}
		}
		if envelope, err = delta.Apply(envelope, v[4:], size); err != nil {
			return nil, corrupt("delta %d: %v", i, err)
		}
	}
	if len(envelope) != h.size {
		return nil, corrupt("envelope of %d bytes, head says %d", len(envelope), h.size)
	}
	return envelope, nil
}
