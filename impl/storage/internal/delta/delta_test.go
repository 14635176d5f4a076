package delta

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// The delta encoder and decoder agree on edits anywhere in a record.
func TestDeltaRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	randBytes := func(n int) []byte {
		out := make([]byte, n)
		for i := range out {
			out[i] = byte(rng.IntN(4) + 'a')
		}
		return out
	}
	for range 2000 {
		prev := randBytes(rng.IntN(3000))
		cur := bytes.Clone(prev)
		for range rng.IntN(4) {
			at := rng.IntN(len(cur) + 1)
			switch rng.IntN(3) {
			case 0:
				cur = append(cur[:at:at], append(randBytes(rng.IntN(50)), cur[at:]...)...)
			case 1:
				cur = append(cur[:at:at], cur[min(len(cur), at+rng.IntN(50)):]...)
			default:
				copy(cur[at:], randBytes(rng.IntN(50)))
			}
		}
		d, _ := Append(nil, prev, cur)
		got, err := Apply(prev, d, len(cur))
		if err != nil || !bytes.Equal(got, cur) {
			t.Fatalf("delta of %d over %d bytes rebuilt %d bytes (%v)", len(cur), len(prev), len(got), err)
		}
	}
	if _, err := Apply([]byte("abc"), []byte{2<<1 | 1, 2}, 2); err == nil {
		t.Fatal("a copy past the previous record applied")
	}
}
