package canonjson

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// RebuildFromReader reads the whole token stream of r and returns the Value the tokens
// describe (numbers converted with NumberToken under m), the text they spell when written
// back with the separators and keys between them, and the greatest token depth. It checks
// the stream's structure on the way: depths, keys only on object members, the end token
// of each container, nothing after the top-level value, and no error from the Reader.
func RebuildFromReader(r *Reader, m Mode) (v Value, text string, maxDepth int, err error) {
	var b tokenRebuilder
	if !r.Next() {
		return Value{}, "", 0, fmt.Errorf("no token (err %v)", r.Err())
	}
	if v, err = b.value(r, m, 1); err != nil {
		return Value{}, "", 0, err
	}
	if r.Next() {
		return Value{}, "", 0, fmt.Errorf("token %v after the top-level value", r.Kind())
	}
	if r.Err() != nil || r.Kind() != TokenNone || r.Depth() != 0 || r.Key() != "" {
		return Value{}, "", 0, fmt.Errorf("after the last token: kind %v depth %d key %q err %v",
			r.Kind(), r.Depth(), r.Key(), r.Err())
	}
	return v, string(b.out), b.maxDepth, nil
}

type tokenRebuilder struct {
	out      []byte
	maxDepth int
}

// value rebuilds the value whose first token is current, expected at depth.
func (b *tokenRebuilder) value(r *Reader, m Mode, depth int) (Value, error) {
	if r.Depth() != depth {
		return Value{}, fmt.Errorf("%v token at depth %d, want %d", r.Kind(), r.Depth(), depth)
	}
	b.maxDepth = max(b.maxDepth, depth)
	switch r.Kind() {
	case TokenNull:
		b.out = append(b.out, "null"...)
		return Null(), nil
	case TokenBool:
		b.out = fmt.Appendf(b.out, "%t", r.Bool())
		return Bool(r.Bool()), nil
	case TokenNumber:
		b.out = append(b.out, r.NumberText()...)
		return NumberToken(r.NumberText(), m)
	case TokenString:
		s := r.Str()
		if appended := r.AppendStr([]byte("pre")); string(appended) != "pre"+s {
			return Value{}, fmt.Errorf("AppendStr gives %q, Str %q", appended, s)
		}
		b.out = AppendString(b.out, s)
		return String(s), nil
	case TokenBeginArray:
		b.out = append(b.out, '[')
		var elems []Value
		for {
			if !r.Next() {
				return Value{}, fmt.Errorf("array not closed (err %v)", r.Err())
			}
			if r.Kind() == TokenEndArray {
				break
			}
			if r.Key() != "" {
				return Value{}, fmt.Errorf("array element with key %q", r.Key())
			}
			if len(elems) > 0 {
				b.out = append(b.out, ',')
			}
			e, err := b.value(r, m, depth+1)
			if err != nil {
				return Value{}, err
			}
			elems = append(elems, e)
		}
		b.out = append(b.out, ']')
		return Array(elems...), b.end(r, depth)
	case TokenBeginObject:
		b.out = append(b.out, '{')
		var ents []Entry
		for {
			if !r.Next() {
				return Value{}, fmt.Errorf("object not closed (err %v)", r.Err())
			}
			if r.Kind() == TokenEndObject {
				break
			}
			if len(ents) > 0 {
				b.out = append(b.out, ',')
			}
			key := r.Key()
			b.out = append(AppendString(b.out, key), ':')
			e, err := b.value(r, m, depth+1)
			if err != nil {
				return Value{}, err
			}
			ents = append(ents, Entry{Key: key, Value: e})
		}
		b.out = append(b.out, '}')
		return Object(ents...), b.end(r, depth)
	}
	return Value{}, fmt.Errorf("%v token where a value starts", r.Kind())
}

// end checks the end token of a container opened at depth.
func (b *tokenRebuilder) end(r *Reader, depth int) error {
	if r.Depth() != depth || r.Key() != "" {
		return fmt.Errorf("%v token at depth %d with key %q, want depth %d and no key", r.Kind(), r.Depth(), r.Key(), depth)
	}
	return nil
}

// FuzzReader reads every container the verifier accepts: the token stream must describe
// the value the text builds to and spell the text back exactly, its greatest depth must be
// the depth the verifier measured, Skip on the first token must land on the last, and
// reading the built value must give the same stream. Text the verifier rejects, which no
// Reader is given, must still not make one panic or loop.
//
// Spec: ENC-052
func FuzzReader(f *testing.F) {
	for _, s := range []string{
		`[]`, `{}`, `[1,"a\n",{"":[]}]`, `{"a":[[],{}],"b":"\u0000\\\"x"}`, `[1.5,-0.0,1e+16,-7]`,
		`[18446744073709551616,0.10]`, `["é€😀","\u001f"]`, `[[[[null,true,false]]]]`,
		benchItems(256), benchRecords(300),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		text := string(data)
		if text == "" || text[0] != '[' && text[0] != '{' {
			return
		}
		kind := KindArray
		if text[0] == '{' {
			kind = KindObject
		}
		readAnything(t, deferredValue(kind, text, Preserve, 1, numberFacts{}))
		for _, m := range []Mode{Preserve, Lossy} {
			end, depth, nums, ok := verifyCanonical(text, 0, 0, m)
			if !ok || end != len(text) {
				continue
			}
			want, ok := buildCanonical(text, m)
			if !ok {
				var err error
				if want, err = ParseValue(data, m); err != nil {
					t.Fatalf("%s: verified text does not parse: %v", m, err)
				}
			}
			v := deferredValue(kind, text, m, depth, nums)
			got, out, maxDepth, err := RebuildFromReader(NewReader(v), m)
			if err != nil {
				t.Fatalf("%s %q: %v", m, text, err)
			}
			if !Equal(got, want) {
				t.Fatalf("%s %q: tokens rebuild %s, want %s", m, text, got.JSON(), want.JSON())
			}
			if out != text {
				t.Fatalf("%s %q: tokens write back %q", m, text, out)
			}
			if maxDepth != depth {
				t.Fatalf("%s %q: greatest token depth %d, verifier measured %d", m, text, maxDepth, depth)
			}
			if _, builtOut, _, err := RebuildFromReader(NewReader(want), m); err != nil || builtOut != text {
				t.Fatalf("%s %q: reading the built value gives %q, %v", m, text, builtOut, err)
			}
			r := NewReader(v)
			r.Next()
			r.Skip()
			if r.Kind() != TokenEndArray && r.Kind() != TokenEndObject || r.Depth() != 1 || r.Next() || r.Err() != nil {
				t.Fatalf("%s %q: Skip at the top ends on %v at depth %d, err %v", m, text, r.Kind(), r.Depth(), r.Err())
			}
		}
	})
}

// readAnything reads v calling every accessor on every token and skipping every other
// container, and fails if the stream has more tokens than its text has bytes.
func readAnything(t *testing.T, v Value) {
	r, text := NewReader(v), v.AppendJSON(nil)
	var buf []byte
	for n := 0; r.Next(); n++ {
		if n > len(text) {
			t.Fatalf("%q: more tokens than bytes", text)
		}
		_, _, _, _, _ = r.Key(), r.Str(), r.Bool(), r.NumberText(), r.Depth()
		buf = r.AppendStr(buf[:0])
		if n%2 == 1 {
			r.Skip()
		}
	}
}

// Text that is not canonical, which only a bug could hand a Reader, ends the token stream
// with a SyntaxError at the offending byte, never with a panic.
func TestReaderStopsAtUnexpectedText(t *testing.T) {
	for _, tc := range []struct {
		text   string
		offset int
	}{
		{`[1,`, 3}, {`[1`, 2}, {`{"a"}`, 1}, {`{"a":}`, 5}, {`[tru]`, 1}, {`["\x"]`, 2},
		{`["a`, 3}, {`[1]]`, 3}, {`[1] `, 3}, {`[1;2]`, 2}, {`["a":1]`, 4},
		{`[x]`, 1}, {`[1}`, 2}, {`{"a":1]`, 6}, {`[{"a":[}]]`, 7}, {"[\"\x01\"]", 2}, {`["\u0`, 2}, {`[`, 1}, {`{`, 1}, {`{"a":1,2}`, 7},
	} {
		kind := KindArray
		if tc.text[0] == '{' {
			kind = KindObject
		}
		r := NewReader(deferredValue(kind, tc.text, Preserve, 1, numberFacts{}))
		n := 0
		for r.Next() {
			if n++; n > len(tc.text) {
				t.Fatalf("%q: more tokens than bytes", tc.text)
			}
		}
		var se *SyntaxError
		if err := r.Err(); !errors.Is(err, ErrSyntax) || !errors.As(err, &se) || se.Offset != tc.offset {
			t.Errorf("%q: err %v, want a SyntaxError at offset %d", tc.text, err, tc.offset)
		}
		if r.Kind() != TokenNone || r.Next() {
			t.Errorf("%q: the stream goes on after the error", tc.text)
		}
	}
	// Skip over an unterminated container or string.
	for _, text := range []string{`[[1,2]`, `[["]]`, `[["\q"]]`} {
		r := NewReader(deferredValue(KindArray, text, Preserve, 1, numberFacts{}))
		r.Next()
		r.Skip()
		if r.Kind() != TokenNone || !errors.Is(r.Err(), ErrSyntax) {
			t.Errorf("Skip over %q: kind %v, err %v", text, r.Kind(), r.Err())
		}
	}
}

// Reading a deferred value whose strings hold no escapes allocates nothing once the Reader
// exists, whatever accessors are used; so does reading a built value when no string from
// its text is kept, because the Reader's buffer is then reused.
//
// Spec: ENC-052
func TestReaderDoesNotAllocate(t *testing.T) {
	text := benchRecords(4 << 10)
	if strings.Contains(text, `\`) {
		t.Fatal("the payload holds escapes")
	}
	end, depth, nums, ok := verifyCanonical(text, 0, 0, Preserve)
	if !ok || end != len(text) {
		t.Fatal("not canonical")
	}
	deferred := deferredValue(KindArray, text, Preserve, depth, nums)
	built, ok := buildCanonical(text, Preserve)
	if !ok {
		t.Fatal("not built")
	}
	r := NewReader(deferred)
	buf := make([]byte, 0, 64)
	var tokens, sum int
	readAll := func() {
		tokens = 0
		for r.Next() {
			tokens++
			sum += len(r.Key()) + r.Depth()
			switch r.Kind() {
			case TokenString:
				buf = r.AppendStr(buf[:0])
				sum += len(r.Str())
			case TokenNumber:
				sum += len(r.NumberText())
			case TokenBool:
				if r.Bool() {
					sum++
				}
			case TokenBeginObject:
				if r.Key() == "tags" || sum%7 == 0 {
					r.Skip()
				}
			}
		}
	}
	if allocs := testing.AllocsPerRun(50, func() { r.Reset(deferred); readAll() }); allocs != 0 || tokens < 100 || r.Err() != nil {
		t.Fatalf("reading a deferred value: %v allocations, %d tokens, err %v", allocs, tokens, r.Err())
	}
	quiet := func() {
		r.Reset(built)
		for r.Next() {
			if r.Kind() == TokenString {
				buf = r.AppendStr(buf[:0])
			}
		}
	}
	quiet() // sizes the buffer
	if allocs := testing.AllocsPerRun(50, quiet); allocs != 0 {
		t.Fatalf("reading a built value without keeping strings: %v allocations", allocs)
	}
}
