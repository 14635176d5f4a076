package explore

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/explore/alphabet"
	"github.com/splashv5/conform/conformance/explore/mealy"
	"github.com/splashv5/conform/conformance/explore/replay"
)

// ReferenceMachineFile is the committed machine of the reference worker over the whole
// alphabet, learned by TestReferenceMachineGolden (-update) and re-checked there against the
// live reference worker.
const ReferenceMachineFile = "reference-machine.json"

//go:embed reference-machine.json
var referenceMachineJSON []byte

// machineJSON is the file form of a machine.
type machineJSON struct {
	Inputs  []alphabet.Name     `json:"inputs"`
	Initial int                 `json:"initial"`
	Next    [][]int             `json:"next"`
	Out     [][]alphabet.Output `json:"out"`
}

// EncodeMachine returns the machine as indented JSON.
func EncodeMachine(m *Machine) ([]byte, error) {
	b, err := json.MarshalIndent(machineJSON{m.Inputs, m.Initial, m.Next, m.Out}, "", " ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// DecodeMachine reads a machine written by EncodeMachine and validates it.
func DecodeMachine(data []byte) (*Machine, error) {
	var j machineJSON
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(&j); err != nil {
		return nil, fmt.Errorf("explore: machine file: %w", err)
	}
	m := &Machine{Inputs: j.Inputs, Initial: j.Initial, Next: j.Next, Out: j.Out}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return m, nil
}

// ReferenceMachine returns the committed reference machine.
func ReferenceMachine() (*Machine, error) { return DecodeMachine(referenceMachineJSON) }

// Style returns the drawing style of a machine over the alphabet, with marked transitions.
func Style(name string, marked map[mealy.Transition]bool) mealy.Style[alphabet.Name, alphabet.Output] {
	return mealy.Style[alphabet.Name, alphabet.Output]{Name: name, Marked: marked,
		InputLabel: func(n alphabet.Name) string { return string(n) }, OutputLabel: alphabet.Output.String}
}

// WriteDrawings writes reference.dot, reference.svg, port.dot and port.svg into dir, the
// transitions of every difference marked (EXP-008).
func WriteDrawings(dir string, art *Artifacts) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	expected, observed := mealy.Marks(art.Differences)
	var paths []string
	for _, d := range []struct {
		name   string
		m      *Machine
		marked map[mealy.Transition]bool
	}{{"reference", art.Reference, expected}, {"port", art.Port, observed}} {
		if d.m == nil {
			continue
		}
		var dot, svg bytes.Buffer
		if err := mealy.WriteDOT(&dot, d.m, Style(d.name, d.marked)); err != nil {
			return nil, err
		}
		if err := mealy.WriteSVG(&svg, d.m, Style(d.name, d.marked)); err != nil {
			return nil, err
		}
		for ext, b := range map[string][]byte{".dot": dot.Bytes(), ".svg": svg.Bytes()} {
			p := filepath.Join(dir, d.name+ext)
			if err := os.WriteFile(p, b, 0o644); err != nil {
				return nil, err
			}
			paths = append(paths, p)
		}
	}
	return paths, nil
}

// Figures returns the drawings of both machines for the HTML report, the transitions of every
// difference marked (EXP-008).
func Figures(art *Artifacts) ([]conformance.Figure, error) {
	expected, observed := mealy.Marks(art.Differences)
	var out []conformance.Figure
	for _, d := range []struct {
		name, caption string
		m             *Machine
		marked        map[mealy.Transition]bool
	}{
		{"reference", "The reference worker's machine; red: where the port differs", art.Reference, expected},
		{"port", "The port's learned machine; red: its transitions that differ", art.Port, observed},
	} {
		if d.m == nil {
			continue
		}
		var svg bytes.Buffer
		if err := mealy.WriteSVG(&svg, d.m, Style(d.name, d.marked)); err != nil {
			return nil, err
		}
		out = append(out, conformance.Figure{Caption: d.caption, SVG: svg.Bytes()})
	}
	return out, nil
}

// writeReplay writes f into dir (nothing when dir is empty) and returns its path: a probe
// session's file is named replay-SEED-probe-LAST.json, a walk's replay-SEED-LAST.json.
func writeReplay(dir string, f replay.File) (string, error) {
	if dir == "" {
		return "", nil
	}
	b, err := f.Encode()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	kind := ""
	if f.Probe() {
		kind = "probe-"
	}
	name := fmt.Sprintf("replay-%d-%s%s.json", f.Seed, kind, strings.ReplaceAll(f.Steps[len(f.Steps)-1].Symbol, "_", "-"))
	p := filepath.Join(dir, name)
	return p, os.WriteFile(p, b, 0o644)
}
