package storage

import (
	"bytes"
	"testing"
)

var benchPayload = bytes.Repeat([]byte("journal entry "), 73) // about 1 KiB

func benchHarnesses() []harness {
	return []harness{memoryHarness(), sqliteHarness(JournalWAL), sqliteHarness(JournalDelete)}
}

func BenchmarkSealEnvelope(b *testing.B) {
	key := vector10Key()
	b.SetBytes(int64(len(benchPayload)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := SealEnvelope(key, "storage-v1", testKey, 7, benchPayload); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOpenEnvelope(b *testing.B) {
	ring := testKeyring(b)
	env, err := SealEnvelope(vector10Key(), "storage-v1", testKey, 7, benchPayload)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(env)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := openEnvelope(ring, testKey, 7, env); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStoreLoad measures a verified load of a 1 KiB record.
func BenchmarkStoreLoad(b *testing.B) {
	for _, h := range benchHarnesses() {
		b.Run(h.name, func(b *testing.B) {
			s := NewAuthenticatedStore(h.open(b), testKeyring(b))
			if _, err := s.Create(ctxb(), testKey, benchPayload); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if rec, err := s.Load(ctxb(), testKey); err != nil || rec == nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStoreFencedCAS measures one journal persist: establish the lease,
// load and verify the current record, seal and swap (a durable commit on
// SQLite).
func BenchmarkStoreFencedCAS(b *testing.B) {
	for _, h := range benchHarnesses() {
		b.Run(h.name, func(b *testing.B) {
			s := NewAuthenticatedStore(h.open(b), testKeyring(b))
			token, err := s.ReserveFence(ctxb(), testKey)
			if err != nil {
				b.Fatal(err)
			}
			var expected *uint64
			b.ReportAllocs()
			for b.Loop() {
				rec, err := s.CompareAndSwapFenced(ctxb(), testKey, expected, benchPayload, token)
				if err != nil {
					b.Fatal(err)
				}
				expected = ExpectRevision(rec.Revision)
			}
		})
	}
}

// BenchmarkBackendFencedCAS measures the backend's atomic fenced swap alone.
func BenchmarkBackendFencedCAS(b *testing.B) {
	env, err := SealEnvelope(vector10Key(), "storage-v1", testKey, 1, benchPayload)
	if err != nil {
		b.Fatal(err)
	}
	for _, h := range benchHarnesses() {
		b.Run(h.name, func(b *testing.B) {
			be := h.open(b)
			token, err := be.ReserveFence(ctxb(), testKey)
			if err != nil {
				b.Fatal(err)
			}
			var expected *uint64
			b.ReportAllocs()
			for b.Loop() {
				next := revisionOrZero(expected) + 1
				out, err := be.CompareAndSwapFenced(ctxb(), testKey, expected, StoredRecord{Revision: next, Bytes: env}, token)
				if err != nil || !out.Stored {
					b.Fatal(out, err)
				}
				expected = ExpectRevision(next)
			}
		})
	}
}

// BenchmarkReserveFence measures one durable token reservation.
func BenchmarkReserveFence(b *testing.B) {
	for _, h := range benchHarnesses() {
		b.Run(h.name, func(b *testing.B) {
			be := h.open(b)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := be.ReserveFence(ctxb(), testKey); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
