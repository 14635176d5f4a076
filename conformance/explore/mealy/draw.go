package mealy

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Transition names one transition: the input of index Input taken from State.
type Transition struct{ State, Input int }

// Style says how to draw a machine.
type Style[I, O comparable] struct {
	// Name is the graph's name (DOT) or title (SVG); "mealy" when empty.
	Name string
	// InputLabel and OutputLabel render an input and an output; fmt.Sprint when nil.
	InputLabel  func(I) string
	OutputLabel func(O) string
	// Marked transitions are drawn in the mark colour (differences).
	Marked map[Transition]bool
}

func (st Style[I, O]) name() string {
	if st.Name == "" {
		return "mealy"
	}
	return st.Name
}

func (st Style[I, O]) label(m *Machine[I, O], s, i int) string {
	in := fmt.Sprint(m.Inputs[i])
	if st.InputLabel != nil {
		in = st.InputLabel(m.Inputs[i])
	}
	out := fmt.Sprint(m.Out[s][i])
	if st.OutputLabel != nil {
		out = st.OutputLabel(m.Out[s][i])
	}
	return in + " / " + out
}

// edge is one drawn arrow: every transition between the same two states, merged.
type edge struct {
	from, to int
	labels   []string
	marked   []bool
	anyMark  bool
}

// edges merges parallel transitions into one edge per (from, to) pair, in state order and, for
// each state, in the order of first appearance over the alphabet.
func edges[I, O comparable](m *Machine[I, O], st Style[I, O]) []edge {
	var out []edge
	for s := range m.Next {
		at := map[int]int{}
		for i, t := range m.Next[s] {
			k, ok := at[t]
			if !ok {
				k = len(out)
				at[t] = k
				out = append(out, edge{from: s, to: t})
			}
			mk := st.Marked[Transition{s, i}]
			out[k].labels = append(out[k].labels, st.label(m, s, i))
			out[k].marked = append(out[k].marked, mk)
			out[k].anyMark = out[k].anyMark || mk
		}
	}
	return out
}

// WriteDOT writes m as a Graphviz digraph: one node per state (the initial one doubled),
// parallel transitions merged into one edge whose label lists them, marked ones red.
func WriteDOT[I, O comparable](w io.Writer, m *Machine[I, O], st Style[I, O]) error {
	if err := m.Validate(); err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %s {\n", strconv.Quote(st.name()))
	b.WriteString("  rankdir=LR;\n  node [shape=circle];\n")
	b.WriteString("  __start [shape=point, label=\"\"];\n")
	for s := range m.Next {
		shape := ""
		if s == m.Initial {
			shape = ", shape=doublecircle"
		}
		fmt.Fprintf(&b, "  s%d [label=\"s%d\"%s];\n", s, s, shape)
	}
	fmt.Fprintf(&b, "  __start -> s%d;\n", m.Initial)
	for _, e := range edges(m, st) {
		attrs := "label=" + strconv.Quote(strings.Join(e.labels, "\n"))
		if e.anyMark {
			attrs += ", color=red, fontcolor=red"
		}
		fmt.Fprintf(&b, "  s%d -> s%d [%s];\n", e.from, e.to, attrs)
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// Drawing geometry of the SVG renderer.
const (
	svgRadius    = 22
	svgColumn    = 230 // horizontal distance between layers
	svgRow       = 120 // vertical distance between states of a layer
	svgMargin    = 40
	svgLine      = 13 // label line height
	svgCharWidth = 7  // estimated width of a label character
	svgMarkHex   = "#c62828"
)

// WriteSVG writes m as a self-contained SVG picture with a simple layered layout: a state's
// layer is its breadth-first distance from the initial state, layers are columns from left to
// right, and states keep their breadth-first order inside a layer. Transitions are labelled
// "input / output"; parallel transitions share one arrow whose label lists them; self-loops
// are drawn above their state; marked transitions are drawn in red.
func WriteSVG[I, O comparable](w io.Writer, m *Machine[I, O], st Style[I, O]) error {
	if err := m.Validate(); err != nil {
		return err
	}
	n := m.States()
	layer := make([]int, n)
	for s := range layer {
		layer[s] = -1
	}
	layer[m.Initial] = 0
	order := []int{m.Initial}
	for k := 0; k < len(order); k++ {
		for _, t := range m.Next[order[k]] {
			if layer[t] < 0 {
				layer[t] = layer[order[k]] + 1
				order = append(order, t)
			}
		}
	}
	// Unreachable states go to a last column of their own.
	maxLayer := 0
	for _, s := range order {
		maxLayer = max(maxLayer, layer[s])
	}
	for s := range n {
		if layer[s] < 0 {
			layer[s] = maxLayer + 1
			order = append(order, s)
		}
	}
	rowOf := make([]int, n)
	rows := map[int]int{}
	maxRows := 0
	for _, s := range order {
		rowOf[s] = rows[layer[s]]
		rows[layer[s]]++
		maxRows = max(maxRows, rows[layer[s]])
	}
	cols := 0
	for _, l := range layer {
		cols = max(cols, l+1)
	}
	x := func(s int) int { return svgMargin + 40 + layer[s]*svgColumn + svgRadius }
	y := func(s int) int {
		// centre each column vertically
		off := (maxRows - rows[layer[s]]) * svgRow / 2
		return svgMargin + 60 + off + rowOf[s]*svgRow + svgRadius
	}
	es := edges(m, st)
	width := svgMargin*2 + 40 + cols*svgColumn
	height := svgMargin*2 + 60 + maxRows*svgRow + 40

	// The body is drawn first so that the picture's box can cover every label.
	var b strings.Builder
	minX, minY, maxX, maxY := 0, 0, width, height
	grow := func(x0, y0, x1, y1 int) {
		minX, minY, maxX, maxY = min(minX, x0), min(minY, y0), max(maxX, x1), max(maxY, y1)
	}
	b.WriteString(`<defs>`)
	for _, c := range []struct{ id, color string }{{"arrow", "#333"}, {"arrowmark", svgMarkHex}} {
		fmt.Fprintf(&b, `<marker id="%s" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="%s"/></marker>`, c.id, c.color)
	}
	b.WriteString("</defs>\n")
	// Start arrow.
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#333" marker-end="url(#arrow)"/>`+"\n",
		x(m.Initial)-svgRadius-36, y(m.Initial), x(m.Initial)-svgRadius, y(m.Initial))
	for _, e := range es {
		color, marker := "#333", "arrow"
		if e.anyMark {
			color, marker = svgMarkHex, "arrowmark"
		}
		var lx, ly int
		if e.from == e.to {
			cx, cy := x(e.from), y(e.from)
			fmt.Fprintf(&b, `<path d="M%d,%d C%d,%d %d,%d %d,%d" fill="none" stroke="%s" marker-end="url(#%s)"/>`+"\n",
				cx-10, cy-svgRadius+2, cx-30, cy-svgRadius-40, cx+30, cy-svgRadius-40, cx+10, cy-svgRadius+2, color, marker)
			lx, ly = cx, cy-svgRadius-36-len(e.labels)*svgLine
		} else {
			x1, y1, x2, y2 := x(e.from), y(e.from), x(e.to), y(e.to)
			// Bend every arrow to its left so that the two directions between a pair of states
			// and arrows skipping layers stay apart.
			dx, dy := float64(x2-x1), float64(y2-y1)
			l := math.Hypot(dx, dy)
			ux, uy := dx/l, dy/l
			bend := 30.0
			if layer[e.to] <= layer[e.from] || layer[e.to]-layer[e.from] > 1 {
				bend = 60
			}
			mx, my := float64(x1+x2)/2-uy*bend, float64(y1+y2)/2+ux*bend
			sx, sy := float64(x1)+ux*svgRadius, float64(y1)+uy*svgRadius
			ex, ey := float64(x2)-ux*svgRadius, float64(y2)-uy*svgRadius
			fmt.Fprintf(&b, `<path d="M%.1f,%.1f Q%.1f,%.1f %.1f,%.1f" fill="none" stroke="%s" marker-end="url(#%s)"/>`+"\n",
				sx, sy, mx, my, ex, ey, color, marker)
			// The curve's midpoint is halfway between the chord's midpoint and the control point.
			lx = int((float64(x1+x2)/2 + mx) / 2)
			ly = int((float64(y1+y2)/2+my)/2) - (len(e.labels)-1)*svgLine/2
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">`, lx, ly)
		for k, label := range e.labels {
			half := len([]rune(label)) * svgCharWidth / 2
			grow(lx-half-svgMargin/2, ly+(k-1)*svgLine-svgMargin/2, lx+half+svgMargin/2, ly+k*svgLine+svgMargin/2)
			fill := "#333"
			if e.marked[k] {
				fill = svgMarkHex
			}
			dy := 0
			if k > 0 {
				dy = svgLine
			}
			fmt.Fprintf(&b, `<tspan x="%d" dy="%d" fill="%s">%s</tspan>`, lx, dy, fill, xmlEscape(label))
		}
		b.WriteString("</text>\n")
	}
	states := slices.Clone(order)
	slices.Sort(states)
	for _, s := range states {
		fmt.Fprintf(&b, `<circle cx="%d" cy="%d" r="%d" fill="#fff" stroke="#333"/>`, x(s), y(s), svgRadius)
		if s == m.Initial {
			fmt.Fprintf(&b, `<circle cx="%d" cy="%d" r="%d" fill="none" stroke="#333"/>`, x(s), y(s), svgRadius-4)
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle" font-size="12">s%d</text>`+"\n", x(s), y(s)+4, s)
	}
	b.WriteString("</svg>\n")
	var head strings.Builder
	w2, h2 := maxX-minX, maxY-minY
	fmt.Fprintf(&head, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="%d %d %d %d" font-family="monospace" font-size="11">`+"\n", w2, h2, minX, minY, w2, h2)
	fmt.Fprintf(&head, "<title>%s</title>\n", xmlEscape(st.name()))
	_, err := io.WriteString(w, head.String()+b.String())
	return err
}

func xmlEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '"':
			b.WriteString("&quot;")
		case '\'':
			b.WriteString("&#39;")
		default:
			if r < 0x20 && r != '\t' && r != '\n' {
				// XML 1.0 admits no other control character, not even as a reference.
				fmt.Fprintf(&b, "\\x%02x", r)
				continue
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}
