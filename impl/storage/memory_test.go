package storage_test

import (
	"testing"

	"github.com/splashv5/conform/impl/storage"
	"github.com/splashv5/conform/impl/storage/storagetest"
)

func memoryHarness() storagetest.Harness {
	return storagetest.Harness{
		Name: "memory",
		Open: func(testing.TB) storage.Backend { return storage.NewMemoryBackend() },
		SetRecord: func(_ testing.TB, b storage.Backend, key storage.RecordKey, rec *storage.StoredRecord) {
			b.(*storage.MemoryBackend).SetRecordForTest(key, rec)
		},
		SetFloor: func(_ testing.TB, b storage.Backend, key storage.RecordKey, floor uint64) {
			b.(*storage.MemoryBackend).SetFloorForTest(key, floor)
		},
		SetFence: func(_ testing.TB, b storage.Backend, key storage.RecordKey, fence uint64) {
			b.(*storage.MemoryBackend).SetFenceForTest(key, fence)
		},
	}
}

// The memory backend meets the backend contract.
//
// Spec: STO-020, STO-029
func TestMemoryBackendContract(t *testing.T) {
	storagetest.Run(t, memoryHarness())
}

// Spec: STO-029, STO-026, STO-027, STO-028
func TestLinearizableMemoryBackend(t *testing.T) {
	storagetest.RunLinearizable(t, storage.NewMemoryBackend(), true)
}

func BenchmarkMemoryBackend(b *testing.B) {
	storagetest.RunBenchmarks(b, memoryHarness().Open)
}
