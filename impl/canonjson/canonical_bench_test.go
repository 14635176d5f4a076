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

// benchItems returns the canonical text of the protocol benchmarks' items payload
// (`{"items":[…]}`, one record with an escaped, non-ASCII note per item) of at least n bytes.
func benchItems(n int) string {
	var b strings.Builder
	b.WriteString(`{"items":[`)
	for i := 0; b.Len()+2 < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"id":` + strconv.Itoa(i) + `,"name":"item-` + strconv.Itoa(i) +
			`","note":"text with \"quotes\" and é","score":` +
			string(AppendFloat(nil, float64(i)*1.25+0.5)) + `,"tags":["alpha","beta"]}`)
	}
	b.WriteString(`]}`)
	return b.String()
}

// BenchmarkBuildCanonical builds the Value of verified text and walks every member, as a
// receiver that reads a deferred payload does.
func BenchmarkBuildCanonical(b *testing.B) {
	for _, size := range []int{256, 4 << 10, 64 << 10} {
		text := benchItems(size)
		if _, _, _, ok := verifyCanonical(text, 0, 0, Preserve); !ok {
			b.Fatal("not canonical")
		}
		b.Run("items-"+strconv.Itoa(size), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				v, ok := buildCanonical(text, Preserve)
				if !ok || walkCount(v) == 0 {
					b.Fatal("not built")
				}
			}
		})
	}
}

// walkCount counts the values in v, visiting every element and member.
func walkCount(v Value) int {
	n := 1
	switch v.Kind() {
	case KindArray:
		for _, e := range v.Elems() {
			n += walkCount(e)
		}
	case KindObject:
		for _, e := range v.Entries() {
			n += walkCount(e.Value)
		}
	}
	return n
}
