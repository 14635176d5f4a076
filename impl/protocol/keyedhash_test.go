package protocol

import (
	"encoding/hex"
	"math/rand/v2"
	"testing"

	"lukechampine.com/blake3"
)

// officialInput is the input pattern of the BLAKE3 test vectors: byte i is
// i mod 251.
func officialInput(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i % 251)
	}
	return b
}

// Keyed-hash outputs from the official BLAKE3 test vectors (key
// "whats the Elvish word for friend"), first 32 bytes.
var officialKeyedVectors = []struct {
	n    int
	want string
}{
	{0, "92b2b75604ed3c761f9d6f62392c8a9227ad0ea3f09573e783f1498a4ed60d26"},
	{1, "6d7878dfff2f485635d39013278ae14f1454b8c0a3a2d34bc1ab38228a80c95b"},
	{1023, "c951ecdf03288d0fcc96ee3413563d8a6d3589547f2c2fb36d9786470f1b9d6e"},
	{1024, "75c46f6f3d9eb4f55ecaaee480db732e6c2105546f1e675003687c31719c7ba4"},
	{1025, "357dc55de0c7e382c900fd6e320acc04146be01db6a8ce7210b7189bd664ea69"},
	{2048, "879cf1fa2ea0e79126cb1063617a05b6ad9d0b696d0d757cf053439f60a99dd1"},
	{2049, "9f29700902f7c86e514ddc4df1e3049f258b2472b6dd5267f61bf13983b78dd5"},
	{3072, "044a0e7b172a312dc02a4c9a818c036ffa2776368d7f528268d2e6b5df191770"},
	{4096, "befc660aea2f1718884cd8deb9902811d332f4fc4a38cf7c7300d597a081bfc0"},
	{4097, "00df940cd36bb9fa7cbbc3556744e0dbc8191401afe70520ba292ee3ca80abbc"},
	{8193, "954a2a75420c8d6547e3ba5b98d963e6fa6491addc8c023189cc519821b4a1f5"},
	{16384, "9e9fc4eb7cf081ea7c47d1807790ed211bfec56aa25bb7037784c13c4b707b0d"},
	{31744, "efa53b389ab67c593dba624d898d0f7353ab99e4ac9d42302ee64cbf9939a419"},
	{100000, "74c836d008247adebbc032d1bced2e71d19050b5c39fa03c43d4160ad8d17073"},
}

func TestKeyedHasherMatchesOfficialVectors(t *testing.T) {
	var key [32]byte
	copy(key[:], "whats the Elvish word for friend")
	var h keyedHasher
	h.setKey(&key)
	for _, v := range officialKeyedVectors {
		in := officialInput(v.n)
		for _, data := range [][]byte{in[:v.n:v.n], append(in, make([]byte, hashBatchBytes)...)[:v.n]} {
			got := h.sum(data)
			if hex.EncodeToString(got[:]) != v.want {
				t.Fatalf("len %d (cap %d): got %x, want %s", v.n, cap(data), got, v.want)
			}
		}
	}
}

func referenceKeyedHash(key *[32]byte, data []byte) (out [32]byte) {
	h := blake3.New(32, key[:])
	h.Write(data)
	h.Sum(out[:0])
	return out
}

// The single-threaded tree walk agrees with blake3.Hasher on every length
// class: below, at and above chunk and 16-chunk batch boundaries, up to the
// largest tag input and beyond, with tight and roomy capacities.
func TestKeyedHasherMatchesLibraryHasher(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var key [32]byte
	for i := range key {
		key[i] = byte(rng.Uint32())
	}
	big := make([]byte, 1<<20+3*hashBatchBytes)
	for i := range big {
		big[i] = byte(rng.Uint32())
	}
	lengths := []int{0, 1, 63, 64, 65, 1023, 1024, 1025, 2047, 2048, 2049, 3072, 4096, 4097, 15360,
		16383, 16384, 16385, 17408, 32767, 32768, 32769, 49152, 49153, 65536, 65537, 1 << 20, 1<<20 + 1,
		1<<20 + hashBatchBytes}
	for range 200 {
		lengths = append(lengths, rng.IntN(1<<20+hashBatchBytes))
	}
	var h keyedHasher
	h.setKey(&key)
	for _, n := range lengths {
		want := referenceKeyedHash(&key, big[:n])
		if got := h.sum(big[:n]); got != want {
			t.Fatalf("len %d, roomy capacity: mismatch", n)
		}
		tight := append([]byte(nil), big[:n]...)
		if got := h.sum(tight[:n:n]); got != want {
			t.Fatalf("len %d, tight capacity: mismatch", n)
		}
	}
}

func TestKeyedHasherWipe(t *testing.T) {
	key := [32]byte{7}
	var h keyedHasher
	h.setKey(&key)
	h.sum(make([]byte, 40000))
	h.wipe()
	if h.key != ([8]uint32{}) || h.stack != ([64][8]uint32{}) {
		t.Fatal("wipe left key material")
	}
}

func TestKeyedHasherDoesNotAllocate(t *testing.T) {
	key := [32]byte{1}
	var h keyedHasher
	h.setKey(&key)
	data := make([]byte, 70000, 70000+hashBatchBytes)
	if n := testing.AllocsPerRun(20, func() { h.sum(data) }); n != 0 {
		t.Fatalf("sum allocates %.0f times", n)
	}
}
