package mealy_test

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/splashv5/conform/conformance/explore/mealy"
	"github.com/splashv5/conform/conformance/explore/mealy/mealytest"
)

// toggle is a two-state machine over {a, b}: a toggles and answers the state it left, b answers
// the current state and stays.
func toggle() *mealy.Machine[string, string] {
	m := mealy.New[string, string]([]string{"a", "b"}, 2)
	m.Set(0, 0, 1, "x0")
	m.Set(0, 1, 0, "y0")
	m.Set(1, 0, 0, "x1")
	m.Set(1, 1, 1, "y1")
	return m
}

func TestRunAndStateAfter(t *testing.T) {
	m := toggle()
	got, ok := m.Run([]string{"a", "b", "a", "b"})
	if !ok || !slices.Equal(got, []string{"x0", "y1", "x1", "y0"}) {
		t.Fatalf("Run = %v, %v; want [x0 y1 x1 y0], true", got, ok)
	}
	if got, ok := m.Run([]string{"a", "zz", "b"}); ok || !slices.Equal(got, []string{"x0"}) {
		t.Fatalf("Run with a foreign input = %v, %v; want [x0], false", got, ok)
	}
	if s := m.StateAfter([]string{"a", "a", "a"}); s != 1 {
		t.Fatalf("StateAfter(aaa) = %d, want 1", s)
	}
}

func TestValidateRefusesBrokenMachines(t *testing.T) {
	cases := map[string]func(m *mealy.Machine[string, string]){
		"no state":        func(m *mealy.Machine[string, string]) { m.Next, m.Out = nil, nil },
		"bad initial":     func(m *mealy.Machine[string, string]) { m.Initial = 2 },
		"bad target":      func(m *mealy.Machine[string, string]) { m.Next[1][0] = 7 },
		"short row":       func(m *mealy.Machine[string, string]) { m.Next[0] = m.Next[0][:1] },
		"repeated input":  func(m *mealy.Machine[string, string]) { m.Inputs[1] = "a" },
		"missing outputs": func(m *mealy.Machine[string, string]) { m.Out = m.Out[:1] },
	}
	for name, breakIt := range cases {
		m := toggle()
		breakIt(m)
		if err := m.Validate(); !errors.Is(err, mealy.ErrInvalid) {
			t.Errorf("%s: Validate = %v, want ErrInvalid", name, err)
		}
	}
	if err := toggle().Validate(); err != nil {
		t.Fatalf("valid machine: %v", err)
	}
}

// allWords returns every word over inputs of length 1..n, shortest first, in lexicographic
// order of the alphabet within a length.
func allWords(inputs []int, n int) [][]int {
	var out [][]int
	layer := [][]int{{}}
	for range n {
		var next [][]int
		for _, w := range layer {
			for _, x := range inputs {
				next = append(next, append(slices.Clone(w), x))
			}
		}
		out = append(out, next...)
		layer = next
	}
	return out
}

// bruteDistinguish returns the first word, in the order of allWords, on which a and b differ.
func bruteDistinguish(a, b *mealy.Machine[int, int], maxLen int) ([]int, bool) {
	for _, w := range allWords(a.Inputs, maxLen) {
		x, _ := a.Run(w)
		y, _ := b.Run(w)
		if !slices.Equal(x, y) {
			return w, true
		}
	}
	return nil, false
}

// Spec: EXP-004 — the difference reported is the shortest word that shows it.
func TestDistinguishIsShortestAgainstBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		n := 1 + r.IntN(5)
		a := mealytest.Random(r, n, 2, 2)
		b := mealytest.Random(r, 1+r.IntN(5), 2, 2)
		b.Inputs = a.Inputs
		// Product has at most 25 states: a shortest difference, if any, is at most 25 long,
		// but brute force is bounded; compare within 9 inputs and require agreement there.
		want, wantOK := bruteDistinguish(a, b, 9)
		got, gotOK, err := mealy.Distinguish(a, b)
		if err != nil {
			t.Fatal(err)
		}
		if wantOK != gotOK && len(got) <= 9 {
			t.Fatalf("trial %d: Distinguish ok=%v (%v), brute force ok=%v (%v)", trial, gotOK, got, wantOK, want)
		}
		if wantOK && !slices.Equal(got, want) {
			t.Fatalf("trial %d: Distinguish = %v, brute force shortest = %v", trial, got, want)
		}
	}
}

// Spec: EXP-004
func TestDifferencesReportsEveryDifferingTransition(t *testing.T) {
	a := toggle()
	b := toggle()
	b.Out[1][1] = "BROKEN" // b after a
	b.Out[0][1] = "ALSO"   // b from the start
	diffs, err := mealy.Differences(a, b, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) != 2 {
		t.Fatalf("got %d differences, want 2: %+v", len(diffs), diffs)
	}
	d0, d1 := diffs[0], diffs[1]
	if !slices.Equal(d0.Word, []string{"b"}) || !slices.Equal(d0.Expected, []string{"y0"}) || !slices.Equal(d0.Observed, []string{"ALSO"}) {
		t.Errorf("first difference = %+v; want word [b], expected [y0], observed [ALSO]", d0)
	}
	if !slices.Equal(d1.Word, []string{"a", "b"}) || !slices.Equal(d1.Expected, []string{"x0", "y1"}) || !slices.Equal(d1.Observed, []string{"x0", "BROKEN"}) {
		t.Errorf("second difference = %+v; want word [a b], expected [x0 y1], observed [x0 BROKEN]", d1)
	}
	if d1.StateA != 1 || d1.StateB != 1 || d1.Input != 1 {
		t.Errorf("second difference at (%d,%d,%d), want (1,1,1)", d1.StateA, d1.StateB, d1.Input)
	}
	ma, mb := mealy.Marks(diffs)
	if len(ma) != 2 || !ma[mealy.Transition{State: 0, Input: 1}] || !ma[mealy.Transition{State: 1, Input: 1}] || len(mb) != 2 {
		t.Errorf("marks %v, %v", ma, mb)
	}
	if got, _ := mealy.Differences(a, b, 1); len(got) != 1 {
		t.Errorf("limit 1 gave %d differences", len(got))
	}
	c := toggle()
	c.Inputs = []string{"a", "c"}
	if _, err := mealy.Differences(a, c, 0); !errors.Is(err, mealy.ErrAlphabet) {
		t.Errorf("different alphabets: err = %v, want ErrAlphabet", err)
	}
}

func TestDifferenceBehindANextStateOnlyChange(t *testing.T) {
	// Same outputs on the first input, but b goes to the wrong state: the difference shows one
	// input later.
	a := toggle()
	b := toggle()
	b.Next[0][0] = 0
	w, ok, err := mealy.Distinguish(a, b)
	if err != nil || !ok || !slices.Equal(w, []string{"a", "a"}) {
		t.Fatalf("Distinguish = %v, %v, %v; want [a a]", w, ok, err)
	}
}

func TestMinimizeAgainstBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 200 {
		m := mealytest.Random(r, 1+r.IntN(8), 1+r.IntN(3), 2)
		// Duplicate every state so that minimization has something to merge.
		n := m.States()
		big := mealy.New[int, int](m.Inputs, 2*n)
		for s := range n {
			for i := range m.Inputs {
				big.Set(s, i, m.Next[s][i]+n*(s%2), m.Out[s][i])
				big.Set(s+n, i, m.Next[s][i]+n*((s+1)%2), m.Out[s][i])
			}
		}
		min, err := mealy.Minimize(big)
		if err != nil {
			t.Fatal(err)
		}
		if w, ok, _ := mealy.Distinguish(big, min); ok {
			t.Fatalf("trial %d: minimized machine differs on %v", trial, w)
		}
		// Minimal: every two states are distinguishable.
		for p := range min.States() {
			for q := p + 1; q < min.States(); q++ {
				x, y := min.Clone(), min.Clone()
				x.Initial, y.Initial = p, q
				if _, ok, _ := mealy.Distinguish(x, y); !ok {
					t.Fatalf("trial %d: states %d and %d of the minimized machine are equivalent", trial, p, q)
				}
			}
		}
		if min.States() > n {
			t.Fatalf("trial %d: %d states after minimizing a %d-state machine doubled", trial, min.States(), n)
		}
		if again, _ := mealy.Minimize(min); !mealy.Equal(again, min) {
			t.Fatalf("trial %d: minimizing twice changed the machine", trial)
		}
	}
}

func TestCanonicalIsIsomorphismInvariant(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for range 100 {
		m := mealytest.Random(r, 1+r.IntN(10), 3, 3)
		perm := r.Perm(m.States())
		p := mealy.New[int, int](m.Inputs, m.States())
		for s := range m.States() {
			for i := range m.Inputs {
				p.Set(perm[s], i, perm[m.Next[s][i]], m.Out[s][i])
			}
		}
		p.Initial = perm[m.Initial]
		if !mealy.Equal(m.Canonical(), p.Canonical()) {
			t.Fatal("canonical forms of isomorphic machines differ")
		}
	}
}

func TestRandomMinimalHasExactlyNStates(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for n := 1; n <= 30; n += 7 {
		m := mealytest.RandomMinimal(r, n, 3, 2)
		if m.States() != n {
			t.Fatalf("RandomMinimal(%d) has %d states", n, m.States())
		}
	}
}

// Spec: EXP-008 — drawings are deterministic and mark differences.
func TestWriteDOTGolden(t *testing.T) {
	m := toggle()
	m.Next[1][1] = 0 // b from s1 now goes back: parallel edges s1→s0 merge
	var b bytes.Buffer
	st := mealy.Style[string, string]{Name: "toggle", Marked: map[mealy.Transition]bool{{State: 1, Input: 1}: true}}
	if err := mealy.WriteDOT(&b, m, st); err != nil {
		t.Fatal(err)
	}
	want := `digraph "toggle" {
  rankdir=LR;
  node [shape=circle];
  __start [shape=point, label=""];
  s0 [label="s0", shape=doublecircle];
  s1 [label="s1"];
  __start -> s0;
  s0 -> s1 [label="a / x0"];
  s0 -> s0 [label="b / y0"];
  s1 -> s0 [label="a / x1\nb / y1", color=red, fontcolor=red];
}
`
	if b.String() != want {
		t.Fatalf("DOT:\n%s\nwant:\n%s", b.String(), want)
	}
}

// Spec: EXP-008
func TestWriteSVGIsWellFormedDeterministicAndMarks(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	m := mealytest.RandomMinimal(r, 12, 4, 3)
	st := mealy.Style[int, int]{
		Name:        `a<b>&"c"`,
		InputLabel:  func(i int) string { return "in" + string(rune('A'+i)) + "\x01" },
		OutputLabel: func(o int) string { return "<out" + string(rune('0'+o)) + ">" },
		Marked:      map[mealy.Transition]bool{{State: 3, Input: 2}: true},
	}
	var one, two bytes.Buffer
	if err := mealy.WriteSVG(&one, m, st); err != nil {
		t.Fatal(err)
	}
	if err := mealy.WriteSVG(&two, m, st); err != nil {
		t.Fatal(err)
	}
	if one.String() != two.String() {
		t.Fatal("two renderings of the same machine differ")
	}
	d := xml.NewDecoder(bytes.NewReader(one.Bytes()))
	circles, texts := 0, 0
	var box [4]int
	attr := func(se xml.StartElement, name string) string {
		for _, a := range se.Attr {
			if a.Name.Local == name {
				return a.Value
			}
		}
		return ""
	}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			switch se.Name.Local {
			case "svg":
				if _, err := fmt.Sscanf(attr(se, "viewBox"), "%d %d %d %d", &box[0], &box[1], &box[2], &box[3]); err != nil {
					t.Fatalf("viewBox %q: %v", attr(se, "viewBox"), err)
				}
			case "text":
				// Every label starts inside the picture.
				x, _ := strconv.Atoi(attr(se, "x"))
				y, _ := strconv.Atoi(attr(se, "y"))
				if x < box[0] || x > box[0]+box[2] || y < box[1] || y > box[1]+box[3] {
					t.Errorf("text at (%d,%d) outside the view box %v", x, y, box)
				}
			case "circle":
				circles++
			case "tspan":
				texts++
			}
		}
	}
	// One circle per state plus the initial state's inner ring; one tspan per transition.
	if circles != m.States()+1 {
		t.Errorf("%d circles, want %d", circles, m.States()+1)
	}
	if texts != m.States()*len(m.Inputs) {
		t.Errorf("%d transition labels, want %d", texts, m.States()*len(m.Inputs))
	}
	svg := one.String()
	if strings.Count(svg, `fill="#c62828">`) != 1 {
		t.Errorf("want exactly one marked label in\n%s", svg)
	}
	if !strings.Contains(svg, "&lt;out") || strings.Contains(svg, "<out") {
		t.Error("labels are not escaped")
	}
	if strings.Contains(svg, "http://") && !strings.HasPrefix(svg, `<svg xmlns="http://www.w3.org/2000/svg"`) {
		t.Error("the picture refers to something outside itself")
	}
}
