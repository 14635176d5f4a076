package delta

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
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

// referenceAppend is the encoder written plainly: every offset around both alignments tried
// one byte at a time. Append must produce exactly its deltas.
func referenceAppend(dst, prev, cur []byte) ([]byte, bool) {
	start := len(dst)
	lit, shift, tail := 0, 0, len(prev)-len(cur)
	for i := 0; i < len(cur); {
		if i-lit >= giveUpAfter {
			break
		}
		best, bestOff := 0, 0
		for _, base := range [2]int{shift, tail} {
			for d := -maxShift; d <= maxShift; d++ {
				off := i + base + d
				if off < 0 || off >= len(prev) || prev[off] != cur[i] {
					continue
				}
				n := 0
				for n < len(prev)-off && n < len(cur)-i && prev[off+n] == cur[i+n] {
					n++
				}
				if n > best {
					best, bestOff = n, off
				}
			}
		}
		if best < minCopy {
			i++
			continue
		}
		dst = appendLiteral(dst, cur[lit:i])
		dst = binary.AppendUvarint(dst, uint64(best)<<1|1)
		dst = binary.AppendUvarint(dst, uint64(bestOff))
		i += best
		lit, shift = i, bestOff+best-i
	}
	dst = appendLiteral(dst, cur[lit:])
	return dst, len(dst)-start < len(cur)*3/4
}

// The encoder's word-at-a-time search finds exactly the runs the plain search finds, on
// records of few and of many distinct bytes, with edits anywhere.
func TestDeltaMatchesPlainSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, alphabet := range []int{2, 4, 64, 256} {
		randBytes := func(n int) []byte {
			out := make([]byte, n)
			for i := range out {
				out[i] = byte(rng.IntN(alphabet))
			}
			return out
		}
		for range 1000 {
			prev := randBytes(rng.IntN(5000))
			cur := bytes.Clone(prev)
			for range rng.IntN(6) {
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
			want, wantOK := referenceAppend(nil, prev, cur)
			got, gotOK := Append(nil, prev, cur)
			if !bytes.Equal(got, want) || gotOK != wantOK {
				t.Fatalf("alphabet %d: delta of %d bytes over %d: got %d bytes (%v), the plain search gives %d (%v)", alphabet, len(cur), len(prev), len(got), gotOK, len(want), wantOK)
			}
		}
	}
}

// commonPrefix agrees with a byte-at-a-time count at every length and every first difference.
func TestCommonPrefix(t *testing.T) {
	a := make([]byte, 1200)
	for i := range a {
		a[i] = byte(i * 7)
	}
	for n := range len(a) {
		for _, diff := range []int{0, 1, 7, 8, 31, 32, 33, 255, 256, 257, 600, n - 1} {
			if diff < 0 || diff >= n {
				continue
			}
			b := bytes.Clone(a[:n])
			b[diff] ^= 0x40
			if got := commonPrefix(a[:n], b); got != diff {
				t.Fatalf("length %d, first difference at %d: commonPrefix says %d", n, diff, got)
			}
		}
		if got := commonPrefix(a[:n], a[:n+1]); got != n {
			t.Fatalf("a prefix of %d bytes: commonPrefix says %d", n, got)
		}
	}
}

// journalEnvelope is a record shaped like a journal step's envelope: a revision near the
// start, then the base64 of a JSON journal of n entries, each with a random result, and a tag.
func journalEnvelope(rng *rand.Rand, n int, revision int) []byte {
	journal := []byte(`{"format_version":2,"scope":"bench","records":[`)
	for i := range n {
		if i > 0 {
			journal = append(journal, ',')
		}
		result := make([]byte, 100)
		for k := range result {
			result[k] = byte('!' + rng.IntN(90))
		}
		journal = fmt.Appendf(journal, `{"tool":"record","operation_key":"op-%d","state":{"state":"succeeded","result":%q}}`, i, result)
	}
	journal = append(journal, "]}"...)
	tag := make([]byte, 32)
	for k := range tag {
		tag[k] = byte(rng.IntN(256))
	}
	return fmt.Appendf(nil, `{"format_version":1,"key_id":"k","revision":%d,"payload":"%s","auth_tag":"%x"}`,
		revision, base64.RawStdEncoding.EncodeToString(journal), tag)
}

// One journal step of a journal of 64 entries: the revision and the tag change, one entry is
// appended near the end.
func BenchmarkAppendJournalStep(b *testing.B) {
	prev := journalEnvelope(rand.New(rand.NewPCG(1, 2)), 63, 126)
	cur := journalEnvelope(rand.New(rand.NewPCG(1, 2)), 64, 127)
	b.SetBytes(int64(len(cur)))
	var d []byte
	for b.Loop() {
		d, _ = Append(d[:0], prev, cur)
	}
	b.ReportMetric(float64(len(d)), "delta-B")
}
