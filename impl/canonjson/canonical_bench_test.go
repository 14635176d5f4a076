package canonjson

import (
	"strconv"
	"strings"
	"testing"
)

// benchRecords returns canonical text of an array of small records of about n bytes, the
// shape of the protocol benchmarks' main payload.
func benchRecords(n int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := 0; b.Len() < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"id":` + strconv.Itoa(i) + `,"name":"item-` + strconv.Itoa(i) + ` payload text","score":` +
			string(AppendFloat(nil, float64(i%1000)/8)) + `,"tags":["a","bb",-7]}`)
	}
	b.WriteByte(']')
	return b.String()
}

func BenchmarkVerifyCanonical(b *testing.B) {
	for _, size := range []int{4 << 10, 64 << 10} {
		text := benchRecords(size)
		blob := `{"blob":"` + strings.Repeat("x", size) + `"}`
		for _, c := range []struct{ name, text string }{{"records-" + strconv.Itoa(size), text}, {"blob-" + strconv.Itoa(size), blob}} {
			b.Run(c.name, func(b *testing.B) {
				b.SetBytes(int64(len(c.text)))
				for b.Loop() {
					if _, _, _, ok := verifyCanonical(c.text, 0, 0, Preserve); !ok {
						b.Fatal("not canonical")
					}
				}
			})
		}
	}
}
