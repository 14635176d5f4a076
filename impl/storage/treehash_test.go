package storage

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"lukechampine.com/blake3"
)

// The tree walker gives blake3's hashes, keyed and plain, at every length around the chunk
// and batch boundaries, and RecordTag and RecordCommitment keep their definitions.
func TestTreeHashMatchesBlake3(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var key [32]byte
	for i := range key {
		key[i] = byte(rng.IntN(256))
	}
	lengths := []int{0, 1, 63, 64, 65, 1023, 1024, 1025, 2048, 4096 + 7, 16383, 16384, 16385, 32768, 49152 + 1, 100_000, 262_144 + 3}
	for range 20 {
		lengths = append(lengths, rng.IntN(300_000))
	}
	for _, n := range lengths {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(rng.IntN(256))
		}
		for _, keyed := range []bool{false, true} {
			var want [32]byte
			var h *treeHasher
			if keyed {
				b := blake3.New(32, key[:])
				b.Write(data)
				b.Sum(want[:0])
				h = getTreeHasher(&key)
			} else {
				want = blake3.Sum256(data)
				h = getTreeHasher(nil)
			}
			h.input = append(h.input, data...)
			got := h.sum()
			h.release()
			if got != want {
				t.Fatalf("length %d keyed %v: %x, want %x", n, keyed, got, want)
			}
		}
	}

	record := RecordKey{Namespace: "worker-journal", Name: "tenant-release"}
	payload := make([]byte, 20_000)
	for i := range payload {
		payload[i] = byte(rng.IntN(256))
	}
	lp := func(dst, b []byte) []byte {
		return append(binary.BigEndian.AppendUint64(dst, uint64(len(b))), b...)
	}
	in := append([]byte(recordTagDomain), 1)
	in = lp(in, []byte(record.Namespace))
	in = lp(in, []byte(record.Name))
	in = lp(in, []byte("storage-v1"))
	in = binary.BigEndian.AppendUint64(in, 7)
	in = lp(in, payload)
	b := blake3.New(32, key[:])
	b.Write(in)
	var want [32]byte
	b.Sum(want[:0])
	if got := RecordTag(NewKey(key), record, 1, "storage-v1", 7, payload); got != want {
		t.Fatalf("RecordTag %x, want %x", got, want)
	}
	in = lp(lp([]byte(recordCommitmentDomain), []byte(record.Namespace)), []byte(record.Name))
	in = binary.BigEndian.AppendUint64(in, 7)
	in = lp(in, payload)
	if got, want := RecordCommitment(record, 7, payload), blake3.Sum256(in); got != want {
		t.Fatalf("RecordCommitment %x, want %x", got, want)
	}
}
