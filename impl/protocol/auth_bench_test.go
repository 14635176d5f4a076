package protocol

import (
	"bytes"
	"fmt"
	"strconv"
	"testing"

	"lukechampine.com/blake3"
	"lukechampine.com/blake3/guts"

	"github.com/splashv5/conform/impl/canonjson"
)

// Benchmarks of sealing and opening an invoke frame whose JSON payload has a
// given canonical size, next to the bare BLAKE3 keyed hash of the same tag
// input, all in one run so the ratios are meaningful:
//
//	go test -run '^$' -bench 'Auth' -benchmem ./impl/protocol
//
// docs/performance.md records the numbers and how to read them.

// benchShape names how a benchmark payload is built.
type benchShape int

const (
	// shapeRecords is an array of small objects (the main case).
	shapeRecords benchShape = iota
	// shapeBlob is one long string in an object, which isolates the
	// authenticator's own cost from JSON tokenization.
	shapeBlob
	// shapeItems is the Rust reference's own benchmark payload, so the two
	// implementations can be compared on the same bytes.
	shapeItems
)

// benchSizes are the payload sizes and shapes; "1MiB" is the largest payload
// of its shape whose tag input still fits the 1 MiB limit.
var benchSizes = []struct {
	name  string
	bytes int
	shape benchShape
}{
	{"256B", 256, shapeRecords},
	{"4KiB", 4 << 10, shapeRecords},
	{"64KiB", 64 << 10, shapeRecords},
	{"1MiB", -1, shapeRecords},
	{"blob-4KiB", 4 << 10, shapeBlob},
	{"blob-64KiB", 64 << 10, shapeBlob},
	{"items-256B", 256, shapeItems},
	{"items-4KiB", 4 << 10, shapeItems},
	{"items-64KiB", 64 << 10, shapeItems},
}

// benchItems returns the Rust reference's benchmark payload: {"items":[…]}
// where item i is
//
//	{"id":i,"name":"item-i","note":"text with \"quotes\" and é","score":i*1.25+0.5,"tags":["alpha","beta"]}
//
// with items added until the canonical encoding is at least n bytes (306,
// 4,144 and 65,538 bytes for 256, 4,096 and 65,536).
func benchItems(n int) canonjson.Value {
	var items []canonjson.Value
	size := len(`{"items":[]}`)
	for i := 0; size < n; i++ {
		score, _ := canonjson.Float(float64(i)*1.25 + 0.5)
		item := canonjson.Object(
			canonjson.Entry{Key: "id", Value: canonjson.Uint(uint64(i))},
			canonjson.Entry{Key: "name", Value: canonjson.String("item-" + strconv.Itoa(i))},
			canonjson.Entry{Key: "note", Value: canonjson.String("text with \"quotes\" and é")},
			canonjson.Entry{Key: "score", Value: score},
			canonjson.Entry{Key: "tags", Value: canonjson.Array(canonjson.String("alpha"), canonjson.String("beta"))},
		)
		if len(items) > 0 {
			size++ // comma
		}
		size += len(item.JSON())
		items = append(items, item)
	}
	return canonjson.Object(canonjson.Entry{Key: "items", Value: canonjson.Array(items...)})
}

// benchBlob returns {"blob":"xxx..."} with a canonical encoding of n bytes.
func benchBlob(n int) canonjson.Value {
	return canonjson.Object(canonjson.Entry{Key: "blob", Value: canonjson.String(string(bytes.Repeat([]byte{'x'}, n-len(`{"blob":""}`))))})
}

// benchPayload returns a JSON array of small records (strings, integers,
// a portable float, a nested array) whose canonical encoding is at most n
// bytes and within one record of it.
func benchPayload(n int) canonjson.Value {
	var elems []canonjson.Value
	size := 2 // []
	for i := 0; ; i++ {
		score, _ := canonjson.Float(float64(i%1000) / 8)
		rec := canonjson.Object(
			canonjson.Entry{Key: "id", Value: canonjson.Uint(uint64(i))},
			canonjson.Entry{Key: "name", Value: canonjson.String("item-" + strconv.Itoa(i) + " payload text")},
			canonjson.Entry{Key: "score", Value: score},
			canonjson.Entry{Key: "tags", Value: canonjson.Array(canonjson.String("a"), canonjson.String("bb"), canonjson.Int(-7))},
		)
		add := len(rec.JSON())
		if len(elems) > 0 {
			add++ // comma
		}
		if size+add > n {
			break
		}
		elems = append(elems, rec)
		size += add
	}
	return canonjson.Array(elems...)
}

type authBench struct {
	msg      InvokeMessage
	key      *SessionKey
	tagInput []byte
	line     []byte
}

func newAuthBench(b *testing.B, n int, shape benchShape) *authBench {
	b.Helper()
	key, err := NewSessionKey(bytes.Repeat([]byte{7}, SessionKeyBytes))
	if err != nil {
		b.Fatal(err)
	}
	build := func(n int) InvokeMessage {
		var v canonjson.Value
		switch shape {
		case shapeRecords:
			v = benchPayload(n)
		case shapeBlob:
			v = benchBlob(n)
		case shapeItems:
			v = benchItems(n)
		}
		inv, err := NewToolInvocation("session-1", "request-1", "json.tool", JSONPayload(v))
		if err != nil {
			b.Fatal(err)
		}
		return InvokeMessage{Invocation: inv}
	}
	if n < 0 { // largest payload whose tag input fits
		overhead := len(TagInput("session-1", RoleHost, 1, build(2)))
		n = MaxWireFrameBytes - overhead
	}
	ab := &authBench{msg: build(n), key: key}
	ab.tagInput = TagInput("session-1", RoleHost, 1, ab.msg)
	host := ab.auth(b, RoleHost)
	if _, ab.line, err = host.Seal(ab.msg); err != nil {
		b.Fatal(err)
	}
	return ab
}

func (ab *authBench) auth(b *testing.B, role Role) *Authenticator {
	a, err := NewAuthenticator("session-1", ab.key, role, canonjson.Preserve)
	if err != nil {
		b.Fatal(err)
	}
	return a
}

func BenchmarkAuthSeal(b *testing.B) {
	for _, size := range benchSizes {
		ab := newAuthBench(b, size.bytes, size.shape)
		b.Run(size.name, func(b *testing.B) {
			host := ab.auth(b, RoleHost)
			b.SetBytes(int64(len(ab.tagInput)))
			b.ReportAllocs()
			cpu := startCPU(b)
			for b.Loop() {
				if _, _, err := host.Seal(ab.msg); err != nil {
					b.Fatal(err)
				}
			}
			cpu.stop()
		})
	}
}

// BenchmarkAuthSealAppend seals into a reused line buffer, which removes
// the per-frame line allocation (and its garbage collection) from Seal.
func BenchmarkAuthSealAppend(b *testing.B) {
	for _, size := range benchSizes {
		ab := newAuthBench(b, size.bytes, size.shape)
		b.Run(size.name, func(b *testing.B) {
			host := ab.auth(b, RoleHost)
			var m Message = ab.msg
			var line []byte
			b.SetBytes(int64(len(ab.tagInput)))
			b.ReportAllocs()
			cpu := startCPU(b)
			for b.Loop() {
				var err error
				if _, line, err = host.SealAppend(line[:0], m); err != nil {
					b.Fatal(err)
				}
			}
			cpu.stop()
		})
	}
}

func BenchmarkAuthOpen(b *testing.B) {
	benchOpen(b, func() func(Frame) bool { return func(Frame) bool { return true } })
}

// BenchmarkAuthOpenBuild is Open followed by building the whole payload
// tree, as a receiver that reads every member of the payload does. Open
// alone leaves a canonical payload as its verified text (ENC-052); this is
// the cost when that text is then needed as values.
func BenchmarkAuthOpenBuild(b *testing.B) {
	benchOpen(b, func() func(Frame) bool {
		return func(f Frame) bool { return buildAll(f.Message.(InvokeMessage).Invocation.Payload.JSON) }
	})
}

// BenchmarkAuthOpenRead is Open followed by reading every member of the payload with a
// canonjson.Reader, as a receiver that streams the payload instead of building it does: every
// token is visited, every key taken, every string decoded into a reused buffer and every
// number's text taken. The Reader reads a deferred payload in place from its verified text.
func BenchmarkAuthOpenRead(b *testing.B) {
	benchOpen(b, func() func(Frame) bool {
		var r canonjson.Reader
		var buf []byte
		return func(f Frame) bool {
			r.Reset(f.Message.(InvokeMessage).Invocation.Payload.JSON)
			var n int
			buf, n = readAll(&r, buf[:0])
			return n > 0 && r.Err() == nil
		}
	})
}

// benchOpen opens the invoke frame of every benchmark payload again and again, as if each
// time were the first, and hands each opened frame to a reader that newReader makes once per
// payload; a reader that returns false fails the benchmark.
func benchOpen(b *testing.B, newReader func() func(Frame) bool) {
	for _, size := range benchSizes {
		ab := newAuthBench(b, size.bytes, size.shape)
		b.Run(size.name, func(b *testing.B) {
			worker := ab.auth(b, RoleWorker)
			_, opener := worker.Split()
			read := newReader()
			b.SetBytes(int64(len(ab.tagInput)))
			b.ReportAllocs()
			cpu := startCPU(b)
			for b.Loop() {
				opener.next = 1 // reopen the same frame as if it were new
				f, err := opener.Open(ab.line)
				if err != nil {
					b.Fatal(err)
				}
				if !read(f) {
					b.Fatal("the payload read as empty")
				}
			}
			cpu.stop()
		})
	}
}

// readAll reads every token of r, appending every string's contents to buf; it returns
// buf and how many tokens carried a key or a number.
func readAll(r *canonjson.Reader, buf []byte) ([]byte, int) {
	n := 0
	for r.Next() {
		if r.Key() != "" {
			n++
		}
		switch r.Kind() {
		case canonjson.TokenString:
			buf = r.AppendStr(buf)
		case canonjson.TokenNumber:
			n += len(r.NumberText())
		}
	}
	return buf, n
}

// buildAll touches every element and entry of v, building deferred parts.
func buildAll(v canonjson.Value) bool {
	switch v.Kind() {
	case canonjson.KindArray:
		for _, e := range v.Elems() {
			buildAll(e)
		}
	case canonjson.KindObject:
		for _, e := range v.Entries() {
			buildAll(e.Value)
		}
	}
	return v.Kind() != canonjson.KindNull
}

func BenchmarkAuthSealOpen(b *testing.B) {
	for _, size := range benchSizes {
		ab := newAuthBench(b, size.bytes, size.shape)
		b.Run(size.name, func(b *testing.B) {
			host, worker := ab.auth(b, RoleHost), ab.auth(b, RoleWorker)
			b.SetBytes(int64(len(ab.tagInput)))
			b.ReportAllocs()
			cpu := startCPU(b)
			for b.Loop() {
				_, line, err := host.Seal(ab.msg)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := worker.Open(line); err != nil {
					b.Fatal(err)
				}
			}
			cpu.stop()
		})
	}
}

// BenchmarkAuthSealAppendOpen is BenchmarkAuthSealOpen with the host sealing
// into a reused line buffer, as a writer that sends each line at once can.
func BenchmarkAuthSealAppendOpen(b *testing.B) {
	for _, size := range benchSizes {
		ab := newAuthBench(b, size.bytes, size.shape)
		b.Run(size.name, func(b *testing.B) {
			host, worker := ab.auth(b, RoleHost), ab.auth(b, RoleWorker)
			var m Message = ab.msg
			var line []byte
			b.SetBytes(int64(len(ab.tagInput)))
			b.ReportAllocs()
			cpu := startCPU(b)
			for b.Loop() {
				var err error
				if _, line, err = host.SealAppend(line[:0], m); err != nil {
					b.Fatal(err)
				}
				if _, err := worker.Open(line); err != nil {
					b.Fatal(err)
				}
			}
			cpu.stop()
		})
	}
}

// BenchmarkAuthDecodeFrame is the decoding share of Open (parse, serde
// rules, validation), for reading the Open numbers.
func BenchmarkAuthDecodeFrame(b *testing.B) {
	for _, size := range benchSizes {
		ab := newAuthBench(b, size.bytes, size.shape)
		b.Run(size.name, func(b *testing.B) {
			b.SetBytes(int64(len(ab.line)))
			b.ReportAllocs()
			cpu := startCPU(b)
			for b.Loop() {
				if _, err := DecodeFrame(ab.line, canonjson.Preserve); err != nil {
					b.Fatal(err)
				}
			}
			cpu.stop()
		})
	}
}

// BenchmarkAuthBareHash hashes the same tag-input bytes four ways:
//
//   - library: blake3.New(32, key), one Write, Sum: the plain use of
//     lukechampine.com/blake3 and the baseline of the ratios;
//   - library-reset: one keyed blake3.Hasher reused through Reset;
//   - library-chunked: the reused Hasher fed at most 1 KiB per Write, which
//     keeps it off its goroutine path (and off SIMD);
//   - tree: the authenticator's keyedHasher over the guts primitives (what
//     Seal and Open use);
//   - scalar-chunks: every chunk compressed on its own by the scalar
//     guts.CompressChunk, without the tree above them: a lower bound for a
//     hash that avoids the 16-lane kernel, which costs the same for 2 chunks
//     as for 16.
func BenchmarkAuthBareHash(b *testing.B) {
	for _, size := range benchSizes {
		ab := newAuthBench(b, size.bytes, size.shape)
		secret := ab.key.b
		input := append(make([]byte, 0, len(ab.tagInput)+hashBatchBytes), ab.tagInput...)
		run := func(name string, f func()) {
			b.Run(fmt.Sprintf("%s/%s", size.name, name), func(b *testing.B) {
				b.SetBytes(int64(len(input)))
				b.ReportAllocs()
				cpu := startCPU(b)
				for b.Loop() {
					f()
				}
				cpu.stop()
			})
		}
		var out [32]byte
		run("library", func() {
			h := blake3.New(32, secret[:])
			h.Write(input)
			h.Sum(out[:0])
		})
		reused := blake3.New(32, secret[:])
		run("library-reset", func() {
			reused.Reset()
			reused.Write(input)
			reused.Sum(out[:0])
		})
		run("library-chunked", func() {
			reused.Reset()
			for rest := input; len(rest) > 0; {
				n := min(len(rest), 1024)
				reused.Write(rest[:n])
				rest = rest[n:]
			}
			reused.Sum(out[:0])
		})
		var tree keyedHasher
		tree.setKey(&secret)
		run("tree", func() { out = tree.sum(input) })
		var cv [8]uint32
		run("scalar-chunks", func() {
			for off := 0; off < len(input); off += guts.ChunkSize {
				cv = guts.ChainingValue(guts.CompressChunk(input[off:min(len(input), off+guts.ChunkSize)], &tree.key, uint64(off/guts.ChunkSize), guts.FlagKeyedHash))
			}
		})
		_ = cv
	}
}

// BenchmarkAuthSealParts splits Seal's own work: writing the canonical
// message (the message types' AppendJSON), and writing it with the payload's
// numbers checked for portability on the way, as Seal does.
func BenchmarkAuthSealParts(b *testing.B) {
	for _, size := range benchSizes {
		ab := newAuthBench(b, size.bytes, size.shape)
		msg := ab.msg.AppendJSON(nil)
		b.Run(size.name+"/append-message", func(b *testing.B) {
			buf := make([]byte, 0, 2*len(msg))
			b.SetBytes(int64(len(msg)))
			b.ReportAllocs()
			cpu := startCPU(b)
			for b.Loop() {
				buf = ab.msg.AppendJSON(buf[:0])
			}
			cpu.stop()
		})
		b.Run(size.name+"/append-message-checked", func(b *testing.B) {
			sealer, _ := ab.auth(b, RoleHost).Split()
			var m Message = ab.msg
			buf := make([]byte, 0, 2*len(msg))
			b.SetBytes(int64(len(msg)))
			b.ReportAllocs()
			cpu := startCPU(b)
			for b.Loop() {
				var err error
				if buf, err = sealer.appendCheckedMessage(buf[:0], m); err != nil {
					b.Fatal(err)
				}
			}
			cpu.stop()
		})
	}
}

// TestBenchItemsSizes pins the reference payload's sizes, so the benchmarks
// measure the same bytes as the Rust reference's.
func TestBenchItemsSizes(t *testing.T) {
	for n, want := range map[int]int{256: 306, 4 << 10: 4144, 64 << 10: 65538} {
		v := benchItems(n)
		if got := len(v.JSON()); got != want {
			t.Errorf("items payload for %d bytes: %d bytes, want %d", n, got, want)
		}
	}
	if got, want := string(benchItems(len(`{"items":[]}`)+1).JSON()), `{"items":[{"id":0,"name":"item-0","note":"text with \"quotes\" and é","score":0.5,"tags":["alpha","beta"]}]}`; got != want {
		t.Errorf("one item: %s, want %s", got, want)
	}
}

// BenchmarkAuthSealResult seals what a worker seals: a result frame with a fresh request id
// each time, around the Rust reference's benchmark payload held three ways: built as a tree
// (a tool that builds its answer), parsed from its text in Preserve mode (serde_json's
// Value, what the reference's own benchmark seals), and as the decoder leaves it in a frame
// read from the wire (an echo).
func BenchmarkAuthSealResult(b *testing.B) {
	for _, n := range []int{256, 4 << 10, 64 << 10} {
		built := benchItems(n)
		text := built.JSON()
		parsed, err := canonjson.ParseValue([]byte(text), canonjson.Preserve)
		if err != nil {
			b.Fatal(err)
		}
		wire := wirePayload(b, parsed)
		for _, held := range []struct {
			name string
			v    canonjson.Value
		}{{"built", built}, {"parsed", parsed}, {"wire", wire}} {
			b.Run(fmt.Sprintf("%dB/%s", len(text), held.name), func(b *testing.B) {
				a, err := NewAuthenticator("session-1", benchKey(b), RoleWorker, canonjson.Preserve)
				if err != nil {
					b.Fatal(err)
				}
				payload := JSONPayload(held.v)
				b.SetBytes(int64(len(text)))
				b.ReportAllocs()
				cpu := startCPU(b)
				i := 0
				for b.Loop() {
					i++
					res, err := NewToolResult("session-1", "request-"+strconv.Itoa(i), payload)
					if err != nil {
						b.Fatal(err)
					}
					if _, _, err := a.Seal(ResultMessage{Result: res}); err != nil {
						b.Fatal(err)
					}
				}
				cpu.stop()
			})
		}
	}
}

// benchKey returns the fixed key of the seal and open benchmarks.
func benchKey(b *testing.B) *SessionKey {
	key, err := NewSessionKey(bytes.Repeat([]byte{7}, SessionKeyBytes))
	if err != nil {
		b.Fatal(err)
	}
	return key
}

// wirePayload returns v's JSON payload as the frame decoder leaves it after reading a
// sealed invoke frame that carries it.
func wirePayload(b *testing.B, v canonjson.Value) canonjson.Value {
	inv, err := NewToolInvocation("session-1", "request-1", "json.tool", JSONPayload(v))
	if err != nil {
		b.Fatal(err)
	}
	host, err := NewAuthenticator("session-1", benchKey(b), RoleHost, canonjson.Preserve)
	if err != nil {
		b.Fatal(err)
	}
	_, line, err := host.Seal(InvokeMessage{Invocation: inv})
	if err != nil {
		b.Fatal(err)
	}
	f, err := DecodeFrame(line, canonjson.Preserve)
	if err != nil {
		b.Fatal(err)
	}
	return f.Message.(InvokeMessage).Invocation.Payload.JSON
}
