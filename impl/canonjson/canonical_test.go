package canonjson

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// The verifier may only accept text that parses and writes back to itself; these tests hold
// it to that, and check that it accepts the canonical text the writer produces, so the fast
// path is actually taken.

// Spec: ENC-001, ENC-052
func TestVerifyCanonicalAccepts(t *testing.T) {
	for _, text := range []string{
		`[]`, `{}`, `[1]`, `[-7,0,12,123456789012345678]`, `{"a":1,"b":[true,false,null]}`,
		`{"":0,"a":{"":[]}}`, `["\"\\\b\f\n\r\t\u0000\u001f"]`, "[\"\x7f\"]", `["é€😀","\u0001"]`,
		`[1.5,-0.0,0.1,1e+16,1.5e-7]`, `{"blob":"` + strings.Repeat("x", 100) + `"}`,
		`[["` + strings.Repeat("ab", 40) + `"]]`,
	} {
		for _, m := range []Mode{Preserve, Lossy} {
			end, _, _, ok := verifyCanonical(text, 0, 0, m)
			if !ok || end != len(text) {
				t.Errorf("%v: verifyCanonical(%s) = %d, %v; want %d, true", m, text, end, ok, len(text))
			}
		}
	}
}

// Spec: ENC-052
func TestVerifyCanonicalRejects(t *testing.T) {
	both := []string{
		`[ 1]`, "[1,\n2]", `{"b":1,"a":2}`, `{"a":1,"a":2}`, `["\/"]`, `["\u0041"]`, `["\u001F"]`,
		`["\u000a"]`, `["\u007f"]`, "[\"\n\"]", "[\"\x01\"]", `["\ud83d\ude00"]`, `{"a\u0062":1}`, `[01]`, `[-0]`,
		`[1.]`, `[tru]`, `[1,]`, `{"a":1,}`, `{"a"}`, `[1`, `{"a":1`, "[\"\xff\"]", "[\"\xed\xa0\x80\"]",
		`{"$serde_json::private::Number":"1"}`, `[1E2]`, `[1e2]`,
		`["unterminated]`, `[1]x`[0:3] + `2`,
	}
	for _, text := range both {
		for _, m := range []Mode{Preserve, Lossy} {
			if end, _, _, ok := verifyCanonical(text, 0, 0, m); ok && end == len(text) {
				t.Errorf("%v: verifyCanonical accepted %q", m, text)
			}
		}
	}
	// Tokens canonical in one mode only.
	if _, _, _, ok := verifyCanonical(`[0.10]`, 0, 0, Lossy); ok {
		t.Error("Lossy accepted 0.10 (written 0.1)")
	}
	if _, _, _, ok := verifyCanonical(`[0.10]`, 0, 0, Preserve); !ok {
		t.Error("Preserve rejected 0.10 (kept verbatim)")
	}
	if _, _, _, ok := verifyCanonical(`[18446744073709551616]`, 0, 0, Lossy); ok {
		t.Error("Lossy accepted 2^64 (written as a float)")
	}
	if _, _, _, ok := verifyCanonical(`[18446744073709551616]`, 0, 0, Preserve); !ok {
		t.Error("Preserve rejected 2^64 (kept verbatim)")
	}
	if _, _, _, ok := verifyCanonical(`[1e400]`, 0, 0, Lossy); ok {
		t.Error("Lossy accepted an out-of-range number")
	}
}

// Spec: ENC-021, ENC-052
func TestVerifyCanonicalNestingAndDepth(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	if _, depth, _, ok := verifyCanonical(deep(127), 0, 0, Preserve); !ok || depth != 127 {
		t.Errorf("127 nested arrays: depth %d, ok %v; want 127, true", depth, ok)
	}
	if _, _, _, ok := verifyCanonical(deep(128), 0, 0, Preserve); ok {
		t.Error("accepted 128 nested arrays")
	}
	if _, _, _, ok := verifyCanonical(deep(120), 0, 7, Preserve); !ok {
		t.Error("rejected 120 nested arrays inside 7 open containers (127 in all)")
	}
	if _, _, _, ok := verifyCanonical(deep(121), 0, 7, Preserve); ok {
		t.Error("accepted 121 nested arrays inside 7 open containers (128 in all)")
	}
	// Key order is checked at every depth, also past the nesting the verifier keeps on its
	// stack, and an outer object's last key survives the nesting inside it.
	for _, n := range []int{1, 15, 16, 17, 40, 125} {
		wrap := func(inner string) string {
			return strings.Repeat(`{"k":`, n) + inner + strings.Repeat("}", n)
		}
		if _, depth, _, ok := verifyCanonical(wrap(`{"a":1,"b":[2]}`), 0, 0, Preserve); !ok || depth != n+3 {
			t.Errorf("%d nested objects: depth %d, ok %v; want %d, true", n, depth, ok, n+3)
		}
		if _, _, _, ok := verifyCanonical(wrap(`{"b":1,"a":2}`), 0, 0, Preserve); ok {
			t.Errorf("%d nested objects: accepted keys out of order at the bottom", n)
		}
		if _, _, _, ok := verifyCanonical(`{"m":`+wrap(`1`)+`,"a":0}`, 0, 0, Preserve); ok {
			t.Errorf("%d nested objects: accepted an outer key out of order after them", n)
		}
		if _, _, _, ok := verifyCanonical(`{"m":`+wrap(`1`)+`,"z":0}`, 0, 0, Preserve); !ok {
			t.Errorf("%d nested objects: rejected an outer key in order after them", n)
		}
	}
	for text, want := range map[string]int{`[]`: 1, `[1]`: 2, `{"a":[1]}`: 3, `[[],[[]]]`: 3, `{"a":{}}`: 2} {
		if _, depth, _, ok := verifyCanonical(text, 0, 0, Preserve); !ok || depth != want {
			t.Errorf("%s: depth %d, ok %v; want %d", text, depth, ok, want)
		}
	}
}

// randomJSON writes a random JSON value, sometimes canonical and sometimes slightly off.
func randomJSON(r *rand.Rand, b *strings.Builder, depth int) {
	pieces := []string{`0`, `-7`, `12.5`, `-0.0`, `1e+16`, `1E2`, `0.10`, `-0`, `1.5e-7`, `123456789012345678901`,
		`true`, `false`, `null`, `""`, `"a"`, `"\u0000"`, `"\u000a"`, `"\n"`, `"\/"`, `"é"`, `"\"x\\"`, `"\ud800"`}
	switch k := r.IntN(10); {
	case depth > 4 || k < 4:
		b.WriteString(pieces[r.IntN(len(pieces))])
	case k < 7:
		b.WriteByte('[')
		for i := range r.IntN(4) {
			if i > 0 {
				b.WriteByte(',')
			}
			randomJSON(r, b, depth+1)
		}
		b.WriteByte(']')
	default:
		b.WriteByte('{')
		keys := []string{"a", "b", "c", "", "é", "$serde_json::private::Number", "a"}
		for i := range r.IntN(4) {
			if i > 0 {
				b.WriteByte(',')
			}
			k := keys[r.IntN(len(keys))]
			if r.IntN(5) > 0 {
				k = keys[min(i, 2)] // mostly sorted
			}
			b.WriteString(`"` + k + `":`)
			randomJSON(r, b, depth+1)
		}
		b.WriteByte('}')
	}
}

// TestVerifyCanonicalSound checks on random documents that whatever the verifier accepts
// parses, converts, and writes back to exactly the same bytes, and that a deferred Value
// built from it equals the eagerly parsed one.
//
// Spec: ENC-001, ENC-052
func TestVerifyCanonicalSound(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	accepted := 0
	for range 20000 {
		var b strings.Builder
		b.WriteByte('[')
		randomJSON(r, &b, 1)
		b.WriteByte(']')
		text := b.String()
		for _, m := range []Mode{Preserve, Lossy} {
			end, depth, nums, ok := verifyCanonical(text, 0, 0, m)
			if !ok {
				continue
			}
			accepted++
			if end != len(text) {
				t.Fatalf("%v: %s: end %d, want %d", m, text, end, len(text))
			}
			v, err := ParseValue([]byte(text), m)
			if err != nil {
				t.Fatalf("%v: accepted %s, but it does not parse: %v", m, text, err)
			}
			if got := string(v.JSON()); got != text {
				t.Fatalf("%v: accepted %s, but it writes back as %s", m, text, got)
			}
			if !v.WithinDepth(depth) || depth > 1 && v.WithinDepth(depth-1) {
				t.Fatalf("%v: %s: measured depth %d disagrees with the value", m, text, depth)
			}
			if nums.textOnly != (m == Preserve && HoldsPreserveOnlyNumber(v)) {
				t.Fatalf("%v: %s: verifier saw Preserve-only numbers: %v; the parsed value: %v", m, text, nums.textOnly, HoldsPreserveOnlyNumber(v))
			}
			if tok, _ := FirstNonPortableNumber(text); nums.nonPortable != tok {
				t.Fatalf("%v: %s: verifier's first non-portable number %q, the scan's %q", m, text, nums.nonPortable, tok)
			}
			d := deferredValue(v.Kind(), text, m, depth, nums)
			if !Equal(d, v) || string(d.JSON()) != text {
				t.Fatalf("%v: deferred %s differs from the parsed value", m, text)
			}
		}
	}
	if accepted < 2000 {
		t.Fatalf("only %d documents accepted; the generator no longer exercises the verifier", accepted)
	}
}

// Spec: ENC-052
func TestParseDeferring(t *testing.T) {
	doc := []byte(`{"x":[1],"value":{"b":1,"a":2},"y":{"value":[1,{"k":"v"}]},"value":[ 1]}`)
	var ps Parser
	n, err := ps.ParseDeferring(doc, "value", Preserve)
	if err != nil {
		t.Fatal(err)
	}
	kinds := []NodeKind{}
	for _, m := range n.Members {
		kinds = append(kinds, m.Value.Kind)
	}
	// The first "value" is not sorted and the last has a space: both are parsed; the nested
	// one is canonical and kept as text.
	want := []NodeKind{NodeArray, NodeObject, NodeObject, NodeArray}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("member kinds %v, want %v", kinds, want)
		}
	}
	inner := n.Members[2].Value.Members[0].Value
	if inner.Kind != NodeRaw || inner.Text != `[1,{"k":"v"}]` || inner.RawContainerKind() != NodeArray {
		t.Fatalf("nested value: kind %v text %q", inner.Kind, inner.Text)
	}
	v, err := FromNode(inner, Preserve)
	if err != nil || !v.IsDeferred() || v.Kind() != KindArray {
		t.Fatalf("FromNode(raw) = %v deferred %v, %v", v.Kind(), v.IsDeferred(), err)
	}
	if e := v.Elems(); len(e) != 2 || string(e[1].JSON()) != `{"k":"v"}` {
		t.Fatalf("built elements %v", e)
	}
	// A raw node converted in the other mode is expanded and converted normally.
	if v, err := FromNode(inner, Lossy); err != nil || v.IsDeferred() || string(v.JSON()) != inner.Text {
		t.Fatalf("FromNode(raw, Lossy) = %s deferred %v, %v", v.JSON(), v.IsDeferred(), err)
	}
	if e := Expand(inner); e.Kind != NodeArray || len(e.Elems) != 2 {
		t.Fatalf("Expand = %v", e.Kind)
	}
	// Errors are those of Parse.
	bad := []byte(`{"value":[1,2}`)
	_, err1 := Parse(bad)
	_, err2 := ps.ParseDeferring(bad, "value", Preserve)
	if err1 == nil || err2 == nil || err1.Error() != err2.Error() {
		t.Fatalf("errors differ: %v / %v", err1, err2)
	}
}

// A failed verification is charged for everything it read, so nested "value" members
// that each fail at the end of one long token cannot make the parse quadratic: once the
// budget (the document's length) is spent, no more verifications run.
//
// Spec: ENC-052
func TestDeferBudgetChargesWhatWasRead(t *testing.T) {
	long := strings.Repeat("x", 1<<16)
	for _, tail := range []string{`"` + long + `\/"`, strings.Repeat("1", 1<<16) + `.50e0`, `"` + long + "\x01\""} {
		const nesting = 50
		doc := strings.Repeat(`{"value":[`, nesting) + tail + strings.Repeat(`]}`, nesting)
		var ps Parser
		p := &ps.p
		p.data, p.text, p.deferKey, p.deferMode, p.deferBudget = []byte(doc), doc, "value", Lossy, len(doc)
		p.pos = len(`{"value":`)
		if n := p.tryDefer(); n != nil {
			t.Fatalf("deferred a non-canonical value")
		}
		if spent := len(doc) - p.deferBudget; spent < 1<<16 {
			t.Fatalf("a failed verification that read a %d-byte token was charged %d bytes", 1<<16, spent)
		}
		// The whole parse gives the same result as Parse.
		if _, err := ps.ParseDeferring([]byte(doc), "value", Lossy); err != nil {
			if _, err2 := Parse([]byte(doc)); err2 == nil || err.Error() != err2.Error() {
				t.Fatalf("ParseDeferring error %v, Parse error %v", err, err2)
			}
		}
	}
}

// A deferred value may be shared: concurrent readers build its tree once and all see it.
//
// Spec: ENC-052
func TestDeferredValueConcurrentReaders(t *testing.T) {
	text := `{"a":[1,2,{"b":"c"}],"d":1.5}`
	v := deferredValue(KindObject, text, Preserve, 4, numberFacts{})
	want, err := ParseValue([]byte(text), Preserve)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan bool)
	for range 8 {
		go func() {
			a, ok := v.Get("a")
			done <- ok && Equal(v, want) && len(a.Elems()) == 3 && string(v.JSON()) == text
		}()
	}
	for range 8 {
		if !<-done {
			t.Fatal("a concurrent reader saw a different value")
		}
	}
}

// TestBuildCanonicalMatchesParse checks on random documents that the direct builder of
// deferred values accepts every text the verifier accepts (so deferred values never fall
// back to the general parser) and builds exactly the value parsing and converting gives.
//
// Spec: ENC-052
func TestBuildCanonicalMatchesParse(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	texts := []string{
		`[]`, `{}`, `[[],{}]`, `{"a":"\"\\\b\f\n\r\t\u0000\u001f x é"}`, `["é\"", "\\"]`,
		`{"items":[{"id":0,"name":"item-0","note":"text with \"quotes\" and é","score":0.5,"tags":["alpha","beta"]}]}`,
		`[1.5,-2,1e+30,18446744073709551615,-9223372036854775808,0.1,true,false,null]`,
		`[0.5,10.25,0.0,100.125,-1.5,1.5e+3,1234567890123456789.5,12345678901234567890.25,{"a":7.75}]`,
	}
	for range 20000 {
		var b strings.Builder
		b.WriteByte('[')
		randomJSON(r, &b, 1)
		b.WriteByte(']')
		texts = append(texts, b.String())
	}
	accepted := 0
	for _, text := range texts {
		for _, m := range []Mode{Preserve, Lossy} {
			if end, _, _, ok := verifyCanonical(text, 0, 0, m); !ok || end != len(text) {
				continue
			}
			accepted++
			want, err := ParseValue([]byte(text), m)
			if err != nil {
				t.Fatalf("%v: %s: %v", m, text, err)
			}
			got, ok := buildCanonical(text, m)
			if !ok {
				t.Fatalf("%v: the builder gave up on verified text %s", m, text)
			}
			if !Equal(got, want) || string(got.JSON()) != text || HoldsPreserveOnlyNumber(got) != HoldsPreserveOnlyNumber(want) {
				t.Fatalf("%v: built %s, parsed %s", m, got.JSON(), want.JSON())
			}
		}
	}
	if accepted < 2000 {
		t.Fatalf("only %d documents accepted", accepted)
	}
	for _, bad := range []string{`[`, `[1,]`, `{"a"}`, `{"b":1,"a":2}`, `{"a":1,"a":2}`, `["\/"]`, `["\u0041"]`, `{"a\"":1}`, `[1]x`, `"`, `["x`, `[tru]`, `[-]`, `[1.]`, `[1.5.5]`, `[01.5]`, `[1.5e]`, `[1.5-]`, `[0.5`} {
		if _, ok := buildCanonical(bad, Preserve); ok {
			t.Errorf("the builder accepted %s", bad)
		}
	}
}
