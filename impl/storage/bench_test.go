package storage

import (
	"bytes"
	"testing"
)

var benchPayload = bytes.Repeat([]byte("journal entry "), 73) // about 1 KiB

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
