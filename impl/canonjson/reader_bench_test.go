package canonjson

import (
	"strconv"
	"testing"
)

// BenchmarkReadCanonical reads every token of the deferred payloads BenchmarkBuildCanonical
// builds (same shapes): each key, each string into a reused buffer, each number's text.
func BenchmarkReadCanonical(b *testing.B) {
	for _, size := range []int{256, 4 << 10, 64 << 10} {
		text := benchItems(size)
		end, depth, nums, ok := verifyCanonical(text, 0, 0, Preserve)
		if !ok || end != len(text) {
			b.Fatal("not canonical")
		}
		v := deferredValue(KindObject, text, Preserve, depth, nums)
		b.Run("items-"+strconv.Itoa(size), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			r := NewReader(v)
			var buf []byte
			for b.Loop() {
				r.Reset(v)
				n := 0
				for r.Next() {
					n += len(r.Key())
					switch r.Kind() {
					case TokenString:
						buf = r.AppendStr(buf[:0])
						n += len(buf)
					case TokenNumber:
						n += len(r.NumberText())
					}
				}
				if n == 0 || r.Err() != nil {
					b.Fatal("nothing read")
				}
			}
		})
	}
}
