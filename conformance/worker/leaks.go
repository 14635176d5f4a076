package worker

import (
	"bytes"
	"crypto/rand"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/splashv5/conform/conformance"
)

// A leak of key material may use any encoding (SEC-009, SEC-010, WRK-093). The runner looks
// for the encodings a worker in any language would plausibly produce by accident: the raw
// bytes; hexadecimal in both cases, also one byte at a time with separators; base64 in the
// standard and URL alphabets and base32 in the standard and extended-hex alphabets, each at
// every alignment the secret can start at inside longer encoded data, with or without
// padding; percent-encoding; escaped strings (Go %q, C, Python and Rust \xNN escapes); and
// byte lists as Go, Rust, Python, JavaScript or JSON print them, in decimal and in hex. Every
// pattern is also looked for after removing whitespace from the data, so a list printed over
// several lines (Rust's {:#?}) or base64 wrapped at a line length is found too.

// leakEncodings returns the patterns of key that must appear nowhere: each is a whole
// encoding of key or, for the block encodings, the characters of its encoding that depend on
// key alone whatever bytes come before or after it.
func leakEncodings(key []byte) [][]byte {
	if len(key) == 0 {
		return nil
	}
	var pats []string
	add := func(s ...string) { pats = append(pats, s...) }

	add(string(key))
	lower := hex.EncodeToString(key)
	add(lower, strings.ToUpper(lower))

	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		for shift := range 3 {
			add(alignedCore(enc.EncodeToString, 6, key, shift))
		}
	}
	for _, enc := range []*base32.Encoding{base32.StdEncoding, base32.HexEncoding} {
		for shift := range 5 {
			core := alignedCore(enc.EncodeToString, 5, key, shift)
			add(core, strings.ToLower(core))
		}
	}

	// Percent-encoding: every byte escaped (both cases), and the escapes of a URL query and path.
	var pctUpper, pctLower strings.Builder
	for _, b := range key {
		pctUpper.WriteString("%" + strings.ToUpper(hex.EncodeToString([]byte{b})))
		pctLower.WriteString("%" + hex.EncodeToString([]byte{b}))
	}
	add(pctUpper.String(), pctLower.String(), url.QueryEscape(string(key)), url.PathEscape(string(key)))

	// Escaped strings: Go's %q and the escape of every byte as \xNN.
	quoted := strconv.Quote(string(key))
	add(quoted[1:len(quoted)-1], escapeAll(key, `\x`, false), escapeAll(key, `\x`, true), pythonBytes(key))

	// Byte lists: decimal (Go %v and %d, Rust {:?}, Python list(), JSON) and hex (Rust {:x?}
	// and {:X?}, 0x-prefixed lists of C, Rust {:#x?} and JavaScript). Whitespace is removed
	// from the data before these are looked for, so the joiners have none.
	dec := make([]string, len(key))
	hexLow, hexUp := make([]string, len(key)), make([]string, len(key))
	hexLow0x, hexUp0x, short0x := make([]string, len(key)), make([]string, len(key)), make([]string, len(key))
	for i, b := range key {
		dec[i] = strconv.Itoa(int(b))
		hexLow[i] = strconv.FormatUint(uint64(b), 16)
		hexUp[i] = strings.ToUpper(hexLow[i])
		hexLow0x[i] = "0x" + hex.EncodeToString([]byte{b})
		hexUp0x[i] = "0x" + strings.ToUpper(hex.EncodeToString([]byte{b}))
		short0x[i] = "0x" + hexLow[i] // Go %#v, Rust {:#x?}
	}
	add(strings.Join(dec, ","), strings.Join(dec, ""), strings.Join(dec, ";"))
	add(strings.Join(hexLow, ","), strings.Join(hexUp, ","), strings.Join(hexLow0x, ","), strings.Join(hexUp0x, ","))
	add(strings.Join(short0x, ","), "0x"+strings.Join(hexUp, ",0x"))
	add(strings.Join(hexLowPadded(key), ":"), strings.ToUpper(strings.Join(hexLowPadded(key), ":")))

	seen := map[string]bool{}
	var out [][]byte
	for _, p := range pats {
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, []byte(p))
	}
	return out
}

// alignedCore encodes key after shift filler bytes with encode, whose characters carry bits
// bits each, and returns the characters that depend on key's bits only: those before the
// first whole character of key and the last partial one (and any padding) are cut off, since
// other data around key decides them.
func alignedCore(encode func([]byte) string, bits int, key []byte, shift int) string {
	data := make([]byte, shift+len(key))
	copy(data[shift:], key)
	s := strings.TrimRight(encode(data), "=")
	first := (8*shift + bits - 1) / bits  // characters that hold a filler bit
	last := 8 * (shift + len(key)) / bits // characters that hold key bits only end here
	if first >= last || last > len(s) {
		return ""
	}
	return s[first:last]
}

// escapeAll writes every byte of key as prefix and two hex digits.
func escapeAll(key []byte, prefix string, upper bool) string {
	var b strings.Builder
	for _, c := range key {
		d := hex.EncodeToString([]byte{c})
		if upper {
			d = strings.ToUpper(d)
		}
		b.WriteString(prefix + d)
	}
	return b.String()
}

// pythonBytes is the body of Python's repr of key as bytes: printable ASCII as is (with the
// backslash and the quote escaped), \t \n \r, and \xNN for the rest.
func pythonBytes(key []byte) string {
	var b strings.Builder
	for _, c := range key {
		switch {
		case c == '\\' || c == '\'':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c >= 0x20 && c < 0x7f:
			b.WriteByte(c)
		default:
			b.WriteString(`\x` + hex.EncodeToString([]byte{c}))
		}
	}
	return b.String()
}

// hexLowPadded returns each byte of key as two lowercase hex digits.
func hexLowPadded(key []byte) []string {
	out := make([]string, len(key))
	for i, c := range key {
		out[i] = hex.EncodeToString([]byte{c})
	}
	return out
}

// isSpace reports whether c is whitespace that a printer may put between the parts of an
// encoding (spaces, tabs, line ends).
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// compact returns data without whitespace.
func compact(data []byte) []byte {
	out := make([]byte, 0, len(data))
	for _, c := range data {
		if !isSpace(c) {
			out = append(out, c)
		}
	}
	return out
}

// leakMatcher finds the encodings of one or more secrets in data.
type leakMatcher struct {
	raw     [][]byte // looked for in the data as it is
	compact [][]byte // looked for in the data without whitespace
	longest int
}

// newLeakMatcher returns a matcher for every encoding of each of the secrets.
func newLeakMatcher(secrets ...[]byte) *leakMatcher {
	m := &leakMatcher{}
	seen := map[string]bool{}
	for _, s := range secrets {
		for _, p := range leakEncodings(s) {
			m.raw = append(m.raw, p)
			m.longest = max(m.longest, len(p))
			if c := compact(p); len(c) > 0 && !seen[string(c)] {
				seen[string(c)] = true
				m.compact = append(m.compact, c)
			}
		}
	}
	return m
}

// match reports whether data holds an encoding of one of the secrets.
func (m *leakMatcher) match(data []byte) bool {
	if m == nil {
		return false
	}
	return containsAny(data, m.raw) || containsAny(compact(data), m.compact)
}

// leakStream watches a stream that arrives in pieces for the encodings of a matcher, so that
// an encoding split across pieces is found too, with memory bounded by the longest pattern.
type leakStream struct {
	m       *leakMatcher
	raw     []byte // the last bytes seen
	compact []byte // the last non-whitespace bytes seen
	seen    bool
}

// add scans p, the next piece of the stream.
func (s *leakStream) add(p []byte) {
	if s.seen || s.m == nil || len(s.m.raw) == 0 {
		return
	}
	keep := s.m.longest - 1
	raw := append(s.raw, p...)
	cmp := append(s.compact, compact(p)...)
	if containsAny(raw, s.m.raw) || containsAny(cmp, s.m.compact) {
		s.seen = true
	}
	s.raw = bytes.Clone(raw[max(0, len(raw)-keep):])
	s.compact = bytes.Clone(cmp[max(0, len(cmp)-keep):])
}

// storageKeyPath is the file substituted for {storage-key}. When the worker command has the
// placeholder, the file is written with a fresh random key on first use, so every worker of
// the check shares it.
func (t *T) storageKeyPath() string {
	path := filepath.Join(t.scratch(), conformance.StorageKeyFile)
	if t.storageKey != nil || !t.run.command.Has(conformance.PlaceholderStorageKey) {
		return path
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		t.Internal(err)
	}
	if err := os.WriteFile(path, []byte(hex.EncodeToString(key)+"\n"), 0o600); err != nil {
		t.Internal(err)
	}
	t.storageKey = key
	t.Logf("runner: wrote a fresh storage key to %s (the key is not shown)", path)
	return path
}

// keyMatcher returns the matcher of the keys of a worker with session key sessionKey: that
// key and the check's storage key, when the runner gave one.
func (t *T) keyMatcher(sessionKey []byte) *leakMatcher {
	if t.storageKey != nil {
		return newLeakMatcher(sessionKey, t.storageKey)
	}
	return newLeakMatcher(sessionKey)
}

// stubMatcher finds the encodings of the profile's stub secret.
var stubMatcher = newLeakMatcher([]byte(stubSecret))

// scanForKeys fails the check when any output of its workers holds an encoding of a key
// (WRK-093, FRM-040) or of the stub secret (SEC-009, SEC-010): their standard error and
// frames, watched while they ran, and the journal and effect log the check leaves.
func (t *T) scanForKeys() {
	fail := func(expected, actual string) {
		t.Outcome = conformance.Fail
		t.Expected, t.Actual = expected, actual
		t.Detail = "expected " + t.Expected + "; got " + t.Actual
	}
	// A shared finding cites the rules the running check lists; every check looks for it.
	keys := "no trace of the session key or the storage key in any output" + t.Cite("FRM-040", "WRK-093") + ", which every check looks for"
	stub := "no trace of the stub secret in any output" + t.Cite("SEC-009", "SEC-010") + ", which every check looks for"
	var all []*leakMatcher
	for _, w := range t.workers {
		if w.stderr.keyLeaked() {
			fail(keys, fmt.Sprintf("worker %d wrote an encoding of a key on standard error", w.index))
		}
		if w.stderr.stubLeaked() {
			fail(stub, fmt.Sprintf("worker %d wrote an encoding of the stub secret on standard error", w.index))
		}
		if w.keyInFrame.Load() {
			fail(keys, fmt.Sprintf("worker %d wrote a frame holding an encoding of a key", w.index))
		}
		all = append(all, w.keys)
	}
	if t.dir == "" {
		return
	}
	for _, f := range []struct{ name, path string }{{"the journal", t.journalPath()}, {"the effect log", t.effectsPath()}} {
		data := readBounded(f.path)
		if data == nil {
			continue
		}
		for _, m := range all {
			if m.match(data) {
				fail(keys, f.name+" holds an encoding of a key")
				break
			}
		}
		if stubMatcher.match(data) {
			fail(stub, f.name+" holds an encoding of the stub secret")
		}
	}
}

// readBounded returns the first 16 MiB of the file at path, or nil when it cannot be read.
func readBounded(path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	data, _ := io.ReadAll(io.LimitReader(f, maxEffectLogBytes))
	return data
}
