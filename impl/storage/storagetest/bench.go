package storagetest

import (
	"bytes"
	"testing"

	"github.com/splashv5/conform/impl/storage"
)

var benchPayload = bytes.Repeat([]byte("journal entry "), 73) // about 1 KiB

// RunBenchmarks measures the backends opened by open: a verified load of a 1 KiB record, one
// journal persist through the authenticated store, the backend's fenced swap alone, and one
// token reservation.
func RunBenchmarks(b *testing.B, open func(testing.TB) storage.Backend) {
	b.Run("StoreLoad", func(b *testing.B) {
		s := storage.NewAuthenticatedStore(open(b), Keyring(b))
		if _, err := s.Create(ctxb(), TestKey, benchPayload); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if rec, err := s.Load(ctxb(), TestKey); err != nil || rec == nil {
				b.Fatal(err)
			}
		}
	})
	// One journal persist: establish the lease, load and verify the current record, seal and
	// swap (a durable commit on a durable backend).
	b.Run("StoreFencedCAS", func(b *testing.B) {
		s := storage.NewAuthenticatedStore(open(b), Keyring(b))
		token, err := s.ReserveFence(ctxb(), TestKey)
		if err != nil {
			b.Fatal(err)
		}
		var expected *uint64
		b.ReportAllocs()
		for b.Loop() {
			rec, err := s.CompareAndSwapFenced(ctxb(), TestKey, expected, benchPayload, token)
			if err != nil {
				b.Fatal(err)
			}
			expected = storage.ExpectRevision(rec.Revision)
		}
	})
	b.Run("BackendFencedCAS", func(b *testing.B) {
		env, err := storage.SealEnvelope(vector10Key(), "storage-v1", TestKey, 1, benchPayload)
		if err != nil {
			b.Fatal(err)
		}
		be := open(b)
		token, err := be.ReserveFence(ctxb(), TestKey)
		if err != nil {
			b.Fatal(err)
		}
		var expected *uint64
		b.ReportAllocs()
		for b.Loop() {
			next := revisionOrZero(expected) + 1
			out, err := be.CompareAndSwapFenced(ctxb(), TestKey, expected, storage.StoredRecord{Revision: next, Bytes: env}, token)
			if err != nil || !out.Stored {
				b.Fatal(out, err)
			}
			expected = storage.ExpectRevision(next)
		}
	})
	b.Run("ReserveFence", func(b *testing.B) {
		be := open(b)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := be.ReserveFence(ctxb(), TestKey); err != nil {
				b.Fatal(err)
			}
		}
	})
}
