package protocol

import (
	"encoding/binary"
	"math/bits"

	"lukechampine.com/blake3/guts"
)

// hashBatchBytes is the widest unit the SIMD compressor of lukechampine.com/blake3/guts
// accepts: 16 chunks of 1 KiB.
const hashBatchBytes = guts.MaxSIMD * guts.ChunkSize

// keyedHasher computes BLAKE3 keyed hashes with the primitives of
// lukechampine.com/blake3/guts, single-threaded and without allocating.
//
// blake3.Hasher.Write starts one goroutine per power-of-two subtree of every
// multi-chunk write and pads short subtrees into fresh 16 KiB buffers, which
// costs more than the hashing itself for inputs of a few KiB. This hasher
// walks the same BLAKE3 tree itself: every full 16-chunk batch that is not the
// last is one SIMD call pushed onto a subtree stack, and the last (at most 16
// chunks) is one SIMD call, or one scalar chunk compression when it fits in a
// chunk. The output is identical to blake3.New(32, key) (tests compare them).
//
// A keyedHasher holds the key; zero it with wipe.
type keyedHasher struct {
	key     [8]uint32
	stack   [64][8]uint32 // one chaining value per occupied subtree height
	scratch [hashBatchBytes]byte
}

func (h *keyedHasher) setKey(key *[32]byte) {
	for i := range h.key {
		h.key[i] = binary.LittleEndian.Uint32(key[4*i:])
	}
}

// wipe overwrites the key and every intermediate value derived from it.
func (h *keyedHasher) wipe() {
	h.key = [8]uint32{}
	h.stack = [64][8]uint32{}
	clear(h.scratch[:])
}

// sum returns the 32-byte keyed hash of data. When cap(data) leaves
// hashBatchBytes of room after the start of the last batch, that batch is
// compressed in place (the compressor reads, and ignores, bytes past
// len(data)); otherwise it is copied into a scratch buffer first.
func (h *keyedHasher) sum(data []byte) [32]byte {
	const flags = guts.FlagKeyedHash
	var counter uint64 // chunks hashed so far; bit i set means stack[i] is occupied
	off := 0
	for len(data)-off > hashBatchBytes {
		n := guts.CompressBuffer((*[hashBatchBytes]byte)(data[off:off+hashBatchBytes]), hashBatchBytes, &h.key, counter, flags)
		h.push(guts.ChainingValue(n), bits.TrailingZeros(guts.MaxSIMD), &counter)
		off += hashBatchBytes
	}
	rest := data[off:]
	var n guts.Node
	switch {
	case len(rest) <= guts.ChunkSize:
		n = guts.CompressChunk(rest, &h.key, counter, flags)
	case cap(data)-off >= hashBatchBytes:
		n = guts.CompressBuffer((*[hashBatchBytes]byte)(data[off:off+hashBatchBytes]), len(rest), &h.key, counter, flags)
	default:
		copy(h.scratch[:], rest)
		n = guts.CompressBuffer(&h.scratch, len(rest), &h.key, counter, flags)
	}
	for i := bits.TrailingZeros64(counter); i < bits.Len64(counter); i++ {
		if counter&(1<<i) != 0 {
			n = guts.ParentNode(h.stack[i], guts.ChainingValue(n), &h.key, flags)
		}
	}
	n.Flags |= guts.FlagRoot
	words := guts.CompressNode(n)
	var out [32]byte
	for i := range 8 {
		binary.LittleEndian.PutUint32(out[4*i:], words[i])
	}
	return out
}

// push adds the chaining value of a complete subtree of 2^height chunks,
// merging equal-height neighbours. It is only called while more input
// follows, so no merged node is ever the root.
func (h *keyedHasher) push(cv [8]uint32, height int, counter *uint64) {
	i := height
	for *counter&(1<<i) != 0 {
		cv = guts.ChainingValue(guts.ParentNode(h.stack[i], cv, &h.key, guts.FlagKeyedHash))
		i++
	}
	h.stack[i] = cv
	*counter += 1 << height
}
