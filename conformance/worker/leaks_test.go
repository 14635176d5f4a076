package worker

import (
	"bytes"
	"crypto/rand"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// leakKeys are the keys the leak tests plant: the stub secret (printable ASCII), a random
// key, and a key holding whitespace and quote bytes, which a printer escapes.
func leakKeys(t *testing.T) map[string][]byte {
	random := make([]byte, 32)
	if _, err := rand.Read(random); err != nil {
		t.Fatal(err)
	}
	awkward := []byte("\x00 \n\t\r'\"\\ key with spaces\xff\x80\x7f%+/=")
	return map[string][]byte{"stub": []byte(stubSecret), "random": random, "awkward": awkward}
}

// byteList prints b as numbers formatted by format and joined by sep, between open and close.
func byteList(b []byte, format, sep, open, close string) string {
	parts := make([]string, len(b))
	for i, c := range b {
		parts[i] = fmt.Sprintf(format, c)
	}
	return open + strings.Join(parts, sep) + close
}

// wrap breaks s into lines of n characters, as MIME base64 does.
func wrap(s string, n int) string {
	var b strings.Builder
	for len(s) > n {
		b.WriteString(s[:n] + "\r\n")
		s = s[n:]
	}
	b.WriteString(s)
	return b.String()
}

// leakForms returns every way a worker may plausibly print key, surrounded by the filler
// bytes before and after that put it at each alignment of the block encodings. The forms are
// produced by the standard library's encoders and printers, not by the code under test.
func leakForms(key []byte) map[string]string {
	forms := map[string]string{}
	filler := []byte("\x01\x02\x03\x04\x05")
	for before := range 5 {
		for after := range 5 {
			data := append(append(append([]byte(nil), filler[:before]...), key...), filler[:after]...)
			at := fmt.Sprintf("/%d+%d", before, after)
			for name, enc := range map[string]*base64.Encoding{
				"base64-std": base64.StdEncoding, "base64-std-raw": base64.RawStdEncoding,
				"base64-url": base64.URLEncoding, "base64-url-raw": base64.RawURLEncoding,
			} {
				forms[name+at] = enc.EncodeToString(data)
			}
			forms["base64-mime"+at] = wrap(base64.StdEncoding.EncodeToString(data), 76)
			for name, enc := range map[string]*base32.Encoding{
				"base32-std": base32.StdEncoding, "base32-std-raw": base32.StdEncoding.WithPadding(base32.NoPadding),
				"base32-hex": base32.HexEncoding, "base32-hex-raw": base32.HexEncoding.WithPadding(base32.NoPadding),
			} {
				forms[name+at] = enc.EncodeToString(data)
				forms[name+"-lower"+at] = strings.ToLower(enc.EncodeToString(data))
			}
			forms["go-%v"+at] = fmt.Sprintf("%v", data)
			forms["go-%d"+at] = fmt.Sprintf("%d", data)
			forms["go-%x"+at] = fmt.Sprintf("%x", data)
			forms["go-%X"+at] = fmt.Sprintf("%X", data)
			forms["go-% x"+at] = fmt.Sprintf("% x", data)
			forms["go-%#v"+at] = fmt.Sprintf("%#v", data)
			forms["rust-{:?}"+at] = byteList(data, "%d", ", ", "[", "]")
			forms["rust-{:#?}"+at] = byteList(data, "    %d", ",\n", "[\n", ",\n]")
			forms["rust-{:x?}"+at] = byteList(data, "%x", ", ", "[", "]")
			forms["rust-{:X?}"+at] = byteList(data, "%X", ", ", "[", "]")
			forms["rust-{:#04x?}"+at] = byteList(data, "    0x%02x", ",\n", "[\n", ",\n]")
			forms["c-0x-list"+at] = byteList(data, "0x%02X", ", ", "{", "}")
			forms["colon-hex"+at] = byteList(data, "%02x", ":", "", "")
			forms["percent"+at] = byteList(data, "%%%02X", "", "", "")
			forms["percent-lower"+at] = byteList(data, "%%%02x", "", "", "")
			forms["c-escapes"+at] = byteList(data, `\x%02x`, "", `"`, `"`)
			forms["query-escape"+at] = url.QueryEscape(string(data))
			forms["path-escape"+at] = url.PathEscape(string(data))
			forms["go-%q"+at] = fmt.Sprintf("%q", data)
			ints := make([]int, len(data))
			for i, c := range data {
				ints[i] = int(c)
			}
			j, _ := json.Marshal(ints)
			forms["json-array"+at] = string(j)
			forms["raw"+at] = string(data)
			forms["hex"+at] = hex.EncodeToString(data)
		}
	}
	return forms
}

// TestLeakMatcherFindsEveryForm plants each key in each form, at every alignment and inside a
// diagnostic line, and expects the matcher to find it, both in the whole text and in a stream
// cut into pieces at every place.
func TestLeakMatcherFindsEveryForm(t *testing.T) {
	for name, key := range leakKeys(t) {
		m := newLeakMatcher(key)
		for form, text := range leakForms(key) {
			line := []byte("worker: internal: cannot seal (" + text + ") and gave up\n")
			if !m.match(line) {
				t.Errorf("%s key, form %s: not found in %q", name, form, line)
				continue
			}
			if !strings.HasPrefix(form, "base64-std/1+") {
				continue
			}
			for cut := 1; cut < len(line); cut++ {
				s := leakStream{m: m}
				s.add(line[:cut])
				s.add(line[cut:])
				if !s.seen {
					t.Errorf("%s key, form %s: not found when the stream is cut at %d", name, form, cut)
				}
			}
		}
	}
}

// TestLeakMatcherStreamOneByte feeds a leak one byte at a time, with whitespace between the
// parts of a printed list, as a worker writing small pieces would.
func TestLeakMatcherStreamOneByte(t *testing.T) {
	key := []byte(stubSecret)
	text := []byte("diag " + byteList(key, "    %d", ",\n", "[\n", ",\n]") + " end")
	s := leakStream{m: newLeakMatcher(key)}
	for i := range text {
		s.add(text[i : i+1])
	}
	if !s.seen {
		t.Error("a Rust pretty-printed byte list fed one byte at a time was not found")
	}
}

// TestLeakMatcherNoFalseAlarm shows that the forms of one key, and other text, do not match
// another key's matcher.
func TestLeakMatcherNoFalseAlarm(t *testing.T) {
	keys := leakKeys(t)
	other := make([]byte, 32)
	if _, err := rand.Read(other); err != nil {
		t.Fatal(err)
	}
	m := newLeakMatcher(other)
	for name, key := range keys {
		for form, text := range leakForms(key) {
			if m.match([]byte(text)) {
				t.Errorf("form %s of the %s key matched another key", form, name)
			}
		}
	}
	noise := bytes.Repeat([]byte("0123456789abcdef, [1, 2, 3] %41%42 AAAA====\n"), 200)
	if m.match(noise) {
		t.Error("ordinary text matched a random key")
	}
}
