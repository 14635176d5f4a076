package mutate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
)

// frame returns a sealed invoke frame line of a test session.
func frame(t *testing.T) []byte {
	t.Helper()
	k, err := protocol.NewSessionKey(bytes.Repeat([]byte{9}, protocol.SessionKeyBytes))
	if err != nil {
		t.Fatal(err)
	}
	a, err := protocol.NewAuthenticator("mutate-session", k, protocol.RoleHost, canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	payload := protocol.JSONPayload(canonjson.Object(
		canonjson.Entry{Key: "n", Value: canonjson.Uint(7)},
		canonjson.Entry{Key: "s", Value: canonjson.String("text")}))
	_, line, err := a.Seal(protocol.InvokeMessage{Invocation: protocol.ToolInvocation{
		ProtocolVersion: protocol.ProtocolVersion, SessionID: "mutate-session", RequestID: "r-1", Tool: "conf.json.echo", Payload: payload}})
	if err != nil {
		t.Fatal(err)
	}
	return line
}

// Spec: EXP-012 — a mutation is a function of its kind, seed and line.
func TestMutationsAreReproducible(t *testing.T) {
	line := frame(t)
	other := []byte(`{"sequence":9,"message":null}`)
	for _, k := range Kinds {
		seen := map[string]bool{}
		for seed := range uint64(40) {
			a, errA := Apply(k, seed, line, other)
			b, errB := Apply(k, seed, line, other)
			if !bytes.Equal(a, b) || (errA == nil) != (errB == nil) {
				t.Fatalf("%s seed %d: two applications differ", k, seed)
			}
			if errA != nil {
				t.Fatalf("%s seed %d: %v", k, seed, errA)
			}
			seen[string(a)] = true
		}
		if len(seen) < 2 {
			t.Errorf("%s gives the same line for 40 seeds", k)
		}
	}
	for seed := range uint64(100) {
		k1, a := Mutate(seed, line, other)
		k2, b := Mutate(seed, line, other)
		if k1 != k2 || !bytes.Equal(a, b) {
			t.Fatalf("Mutate seed %d is not reproducible", seed)
		}
		if bytes.Equal(a, line) && k1 != ReorderKeys {
			t.Errorf("Mutate seed %d (%s) left the line unchanged", seed, k1)
		}
	}
}

func TestByteMutatorsDoWhatTheySay(t *testing.T) {
	line := frame(t)
	other := []byte("OTHER-LINE")
	for seed := range uint64(200) {
		flip, _ := Apply(Flip, seed, line, nil)
		if len(flip) != len(line) || diffBits(flip, line) != 1 {
			t.Fatalf("flip changed %d bits", diffBits(flip, line))
		}
		if tr, _ := Apply(Truncate, seed, line, nil); len(tr) >= len(line) || !bytes.HasPrefix(line, tr) {
			t.Fatalf("truncate gave %d bytes", len(tr))
		}
		if d, _ := Apply(Delete, seed, line, nil); len(d) >= len(line) {
			t.Fatal("delete did not shorten the line")
		}
		if in, _ := Apply(Insert, seed, line, nil); len(in) <= len(line) || len(in) > len(line)+8 {
			t.Fatalf("insert gave %d bytes from %d", len(in), len(line))
		}
		if du, _ := Apply(Duplicate, seed, line, nil); len(du) <= len(line) {
			t.Fatal("duplicate did not grow the line")
		}
		b, _ := Apply(Boundary, seed, line, nil)
		for i := range b {
			if b[i] != line[i] && !slices.Contains(boundaryBytes, b[i]) {
				t.Fatalf("boundary wrote %#x", b[i])
			}
		}
		sp, _ := Apply(Splice, seed, line, other)
		ok := false
		for i := 0; i <= len(line) && !ok; i++ {
			ok = bytes.HasPrefix(sp, line[:i]) && bytes.HasSuffix(other, sp[i:])
		}
		if !ok {
			t.Fatalf("splice %q is not a prefix of the line and a suffix of the other", sp)
		}
	}
}

func diffBits(a, b []byte) int {
	n := 0
	for i := range a {
		for x := a[i] ^ b[i]; x != 0; x &= x - 1 {
			n++
		}
	}
	return n
}

func objects(n *node) []*node {
	var out []*node
	for _, x := range n.walk() {
		if x.kind == 'o' {
			out = append(out, x)
		}
	}
	return out
}

func TestJSONMutatorsDoWhatTheySay(t *testing.T) {
	line := frame(t)
	if n, err := parse(line); err != nil || string(n.write(nil)) != string(line) {
		t.Fatalf("the frame does not round-trip through the mutation reader: %v", err)
	}
	for seed := range uint64(100) {
		huge, _ := Apply(HugeString, seed, line, nil)
		if l := len(huge); l < FrameLimit-1 || l > FrameLimit+1 {
			t.Fatalf("huge_string line has %d bytes, want %d±1", l, FrameLimit)
		}
		deep, _ := Apply(DeepNesting, seed, line, nil)
		if !strings.Contains(string(deep), strings.Repeat("[", DepthLimit-1)) && !strings.Contains(string(deep), strings.Repeat(`{"a":`, DepthLimit-1)) {
			t.Fatal("deep_nesting is not deep")
		}
		dup, _ := Apply(DuplicateKey, seed, line, nil)
		n, err := parse(dup)
		if err != nil {
			t.Fatal(err)
		}
		repeated := false
		for _, o := range objects(n) {
			for i, k := range o.keys {
				repeated = repeated || slices.Index(o.keys, k) != i
			}
		}
		if !repeated {
			t.Fatalf("duplicate_key left no repeated key: %s", dup)
		}
		unk, _ := Apply(UnknownField, seed, line, nil)
		if !bytes.Contains(unk, []byte(`"explore_unknown_`)) {
			t.Fatal("unknown_field added nothing")
		}
		re, _ := Apply(ReorderKeys, seed, line, nil)
		if bytes.Equal(re, line) || len(re) != len(line) {
			t.Fatalf("reorder_keys: %s", re)
		}
		a, _ := parse(re)
		if got, want := members(a), members(mustParse(t, line)); !slices.Equal(got, want) {
			t.Fatal("reorder_keys changed the members")
		}
		sw, _ := Apply(TypeSwap, seed, line, nil)
		if bytes.Equal(sw, line) {
			t.Fatal("type_swap changed nothing")
		}
		bn, _ := Apply(BoundaryNumber, seed, line, nil)
		found := false
		for _, x := range boundaryNumbers {
			found = found || bytes.Contains(bn, []byte(x))
		}
		if !found {
			t.Fatal("boundary_number wrote no boundary number")
		}
		ns, _ := Apply(NumberSpelling, seed, line, nil)
		if bytes.Equal(ns, line) {
			t.Fatal("number_spelling changed nothing")
		}
		uc, _ := Apply(Unicode, seed, line, nil)
		found = false
		for _, x := range unicodeStrings {
			found = found || bytes.Contains(uc, []byte(x))
		}
		if !found {
			t.Fatal("unicode wrote no edge case")
		}
	}
}

// members lists every "key:value" of every object, sorted, a composite value shown by its
// kind only (so reordering inside it does not change its parent's member).
func members(n *node) []string {
	var out []string
	for _, o := range objects(n) {
		for i, k := range o.keys {
			v := o.items[i]
			text := v.raw
			if v.kind == 'o' || v.kind == 'a' {
				text = string(v.kind)
			}
			out = append(out, k+":"+text)
		}
	}
	slices.Sort(out)
	return out
}

func mustParse(t *testing.T, b []byte) *node {
	t.Helper()
	n, err := parse(b)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestJSONMutatorsRefuseWhatTheyCannotChange(t *testing.T) {
	if _, err := Apply(TypeSwap, 1, []byte("not json"), nil); !errors.Is(err, ErrNotJSON) {
		t.Fatalf("err = %v, want ErrNotJSON", err)
	}
	for _, k := range []Kind{NumberSpelling, HugeString, Unicode, ReorderKeys, DuplicateKey, UnknownField} {
		if _, err := Apply(k, 1, []byte("[true]"), nil); err == nil {
			t.Errorf("%s applied to [true]", k)
		}
	}
	if _, err := Apply("nope", 1, []byte("[]"), nil); err == nil {
		t.Error("an unknown mutator applied")
	}
	for seed := range uint64(50) {
		k, out := Mutate(seed, []byte("not json"), nil)
		if !slices.Contains(Kinds[:7], k) || out == nil && k != Truncate {
			t.Fatalf("Mutate on a non-JSON line used %s", k)
		}
	}
}

// Spec: EXP-013 — coverage signatures bucket repeats.
func TestSignature(t *testing.T) {
	s := func(xs ...string) string { return Signature(xs) }
	if ab := s("a", "b"); ab != Signature([]string{"a", "b"}) || ab == s("b", "a") || len(ab) != 32 {
		t.Fatal("a signature depends on the outputs and their order")
	}
	if s("a", "b", "b", "b") != s("a", "b", "b", "b", "b") {
		t.Fatal("3 and 4 repeats fall in one bucket")
	}
	if s("a", "b") == s("a", "b", "b") || s("a", "b", "b") == s("a", "b", "b", "b") {
		t.Fatal("1, 2 and 3 repeats fall in different buckets")
	}
	if s("ab") == s("a", "b") || s("a|b") == s("a", "b") {
		t.Fatal("concatenations collide")
	}
}

// Spec: EXP-013 — one JSON file per kept input, named by content hash, no frame bytes.
func TestCorpusFormat(t *testing.T) {
	e := Entry{Version: 1, Symbols: []string{"open_baseline", "invoke"}, Mutations: []Step{{At: 1, Kind: Flip, Seed: 42}}, Signature: Signature([]string{"-", "exit 4"})}
	name, data, err := e.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if len(name) != 37 || !strings.HasSuffix(name, ".json") || name != contentName(data) {
		t.Fatalf("name %q", name)
	}
	want := `{
  "version": 1,
  "symbols": [
    "open_baseline",
    "invoke"
  ],
  "mutations": [
    {
      "at": 1,
      "kind": "flip",
      "seed": 42
    }
  ],
  "signature": "` + e.Signature + `"
}
`
	if string(data) != want {
		t.Fatalf("entry file:\n%s\nwant:\n%s", data, want)
	}
	dir := t.TempDir()
	path, err := Save(dir, e)
	if err != nil || filepath.Base(path) != name {
		t.Fatalf("Save = %s, %v", path, err)
	}
	c := NewCorpus()
	if err := c.Load(os.DirFS(dir)); err != nil || c.Len() != 1 {
		t.Fatalf("Load: %v, %d entries", err, c.Len())
	}
	if added, _ := c.Offer(e); added {
		t.Fatal("an input with a known signature was kept twice")
	}
	e2 := e
	e2.Signature = Signature([]string{"-", "exit 5"})
	if added, _ := c.Offer(e2); !added || c.Len() != 2 {
		t.Fatal("an input with a new signature was not kept")
	}
	entries := c.Entries()
	if len(entries) != 2 || entries[0].Signature > entries[1].Signature {
		t.Fatal("Entries is not ordered by signature")
	}

	bad := map[string]string{
		"renamed":  string(data),
		"unknown":  strings.Replace(string(data), `"version": 1,`, `"version": 1, "line": "AAAA",`, 1),
		"outside":  strings.Replace(string(data), `"at": 1`, `"at": 2`, 1),
		"kind":     strings.Replace(string(data), `"flip"`, `"zap"`, 1),
		"version":  strings.Replace(string(data), `"version": 1`, `"version": 2`, 1),
		"trailing": string(data) + "{}",
	}
	for what, content := range bad {
		fsys := fstest.MapFS{}
		fname := contentName([]byte(content))
		if what == "renamed" {
			fname = "0123456789abcdef0123456789abcdef.json"
		}
		fsys[fname] = &fstest.MapFile{Data: []byte(content)}
		if err := NewCorpus().Load(fsys); err == nil {
			t.Errorf("%s: a bad entry loaded", what)
		}
	}
}

// Spec: EXP-013 — the signature's bytes, computed here by hand.
func TestSignatureBytes(t *testing.T) {
	sum := sha256.Sum256([]byte("-\x1f1\x1eresult\x1f4\x1eexit 0\x1f1\x1e"))
	want := hex.EncodeToString(sum[:16])
	if got := Signature([]string{"-", "result", "result", "result", "exit 0"}); got != want {
		t.Fatalf("Signature = %s, want %s", got, want)
	}
}

func TestMutatorsNeverPanicOnSmallLines(t *testing.T) {
	for _, line := range []string{"", "x", "{}", "[]", "[1]", `"s"`, `{"a":{}}`, "\xff", `{"a":"\u00e9","b":[1,2.5e3,-0]}`} {
		for _, k := range Kinds {
			for seed := range uint64(20) {
				_, _ = Apply(k, seed, []byte(line), nil)
			}
		}
		for seed := range uint64(50) {
			Mutate(seed, []byte(line), []byte(line))
		}
	}
}

// FuzzApply checks that no mutator panics and that every mutation is reproducible.
func FuzzApply(f *testing.F) {
	f.Add([]byte(`{"sequence":1,"message":{"type":"invoke"},"auth_tag":"00"}`), uint64(1), uint8(3))
	f.Add([]byte(""), uint64(0), uint8(0))
	f.Fuzz(func(t *testing.T, line []byte, seed uint64, k uint8) {
		kind := Kinds[int(k)%len(Kinds)]
		a, errA := Apply(kind, seed, line, nil)
		b, errB := Apply(kind, seed, line, nil)
		if !bytes.Equal(a, b) || (errA == nil) != (errB == nil) {
			t.Fatalf("%s seed %d is not reproducible", kind, seed)
		}
	})
}
