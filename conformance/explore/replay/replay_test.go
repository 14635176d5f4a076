package replay_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/splashv5/conform/conformance/explore/replay"
)

func sample() replay.File {
	return replay.File{
		Version: 1, Suite: "worker", Needs: []string{"cancel", "durable"}, Numbers: "preserve", Seed: 7,
		Level: "MUST", Spec: []string{"CAN-010", "CAN-005"},
		Steps: []replay.Step{
			{Symbol: "open_cancellable", Expected: "-", Observed: "-"},
			{Symbol: "invoke_slow", Expected: "-", Observed: "-"},
			{Symbol: "close_session", Mutation: &replay.Mutation{Kind: "reorder_keys", Seed: 3}, Expected: "exit 5", Observed: "exit 0"},
		},
	}
}

// Spec: EXP-010 — the replay file format.
func TestReplayRoundTripAndGolden(t *testing.T) {
	data, err := sample().Encode()
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "version": 1,
  "suite": "worker",
  "needs": [
    "cancel",
    "durable"
  ],
  "numbers": "preserve",
  "seed": 7,
  "level": "MUST",
  "spec": [
    "CAN-005",
    "CAN-010"
  ],
  "steps": [
    {
      "symbol": "open_cancellable",
      "expected": "-",
      "observed": "-"
    },
    {
      "symbol": "invoke_slow",
      "expected": "-",
      "observed": "-"
    },
    {
      "symbol": "close_session",
      "mutation": {
        "kind": "reorder_keys",
        "seed": 3
      },
      "expected": "exit 5",
      "observed": "exit 0"
    }
  ]
}
`
	if string(data) != want {
		t.Fatalf("replay file:\n%s\nwant:\n%s", data, want)
	}
	f, err := replay.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.Symbols(), []string{"open_cancellable", "invoke_slow", "close_session"}) {
		t.Fatalf("symbols %v", f.Symbols())
	}
	if strings.Contains(string(data), "auth_tag") || strings.Contains(string(data), `"sequence"`) {
		t.Fatal("the replay file holds frame or key material")
	}
}

// Spec: EXP-010
func TestReplayRefusesInconsistentFiles(t *testing.T) {
	breakers := map[string]func(f *replay.File){
		"version":       func(f *replay.File) { f.Version = 2 },
		"suite":         func(f *replay.File) { f.Suite = "interop" },
		"numbers":       func(f *replay.File) { f.Numbers = "float" },
		"level":         func(f *replay.File) { f.Level = "MAY" },
		"no steps":      func(f *replay.File) { f.Steps = nil },
		"no symbol":     func(f *replay.File) { f.Steps[0].Symbol = "" },
		"early diff":    func(f *replay.File) { f.Steps[1].Observed = "exit 5" },
		"no diff":       func(f *replay.File) { f.Steps[2].Observed = "exit 5" },
		"mutation kind": func(f *replay.File) { f.Steps[2].Mutation.Kind = "" },
		"problem":       func(f *replay.File) { f.Problem = "a walk has no problem member" },
		"session":       func(f *replay.File) { f.Session = "walk" },
	}
	for name, b := range breakers {
		f := sample()
		f.Steps = slices.Clone(f.Steps)
		m := *f.Steps[2].Mutation
		f.Steps[2].Mutation = &m
		b(&f)
		if _, err := f.Encode(); !errors.Is(err, replay.ErrFile) {
			t.Errorf("%s: Encode err = %v, want ErrFile", name, err)
		}
	}
	data, _ := sample().Encode()
	for name, text := range map[string]string{
		"unknown field": strings.Replace(string(data), `"seed": 7,`, `"seed": 7, "frames": [],`, 1),
		"trailing":      string(data) + "[]",
		"not json":      "version 1",
	} {
		if _, err := replay.Decode([]byte(text)); !errors.Is(err, replay.ErrFile) {
			t.Errorf("%s: Decode err = %v, want ErrFile", name, err)
		}
	}
}

// probeSample is a probe session whose difference is in the effect log: every step's output
// is the reference's.
func probeSample() replay.File {
	return replay.File{
		Version: 1, Suite: "worker", Session: replay.SessionProbe, Needs: []string{"durable"}, Numbers: "preserve", Seed: 3,
		Level: "MUST", Spec: []string{"WRK-041", "EXP-019"},
		Steps: []replay.Step{
			{Symbol: "open_probe", Expected: "-", Observed: "-"},
			{Symbol: "dispatch", Expected: "operation_result", Observed: "operation_result"},
			{Symbol: "dispatch_again", Expected: "operation_result", Observed: "operation_result"},
			{Symbol: "end_of_input", Expected: "exit 0", Observed: "exit 0"},
		},
		Problem: "the effect log: expected 1 line(s), observed 2 line(s)",
	}
}

// Spec: EXP-010, EXP-019 — a probe session's replay file: the session member, the steps with
// the reference's output as expected and the port's as observed (no step need differ), and
// the problem; it holds no frame, tag or key either.
func TestReplayProbeRoundTrip(t *testing.T) {
	data, err := probeSample().Encode()
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	for _, want := range []string{`"session": "probe",`, `"problem": "the effect log: expected 1 line(s), observed 2 line(s)"`, `"spec": [
    "EXP-019",
    "WRK-041"
  ]`} {
		if !strings.Contains(text, want) {
			t.Errorf("replay file lacks %s:\n%s", want, text)
		}
	}
	f, err := replay.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if !f.Probe() || f.Problem != probeSample().Problem || len(f.Steps) != 4 {
		t.Fatalf("decoded %+v", f)
	}
	if !slices.Equal(f.Symbols(), []string{"open_probe", "dispatch", "dispatch_again", "end_of_input"}) {
		t.Fatalf("symbols %v", f.Symbols())
	}
	again, err := f.Encode()
	if err != nil || string(again) != text {
		t.Fatalf("encoded again (%v):\n%s", err, again)
	}
	// A walk file has neither member: the version 1 walk format is unchanged.
	walk, _ := sample().Encode()
	if strings.Contains(string(walk), `"session"`) || strings.Contains(string(walk), `"problem"`) {
		t.Fatalf("a walk file:\n%s", walk)
	}
	if f, err := replay.Decode(walk); err != nil || f.Probe() {
		t.Fatalf("a walk file decoded as probe %v (%v)", f.Probe(), err)
	}
}

// Spec: EXP-010, EXP-019
func TestReplayRefusesBadProbeFiles(t *testing.T) {
	breakers := map[string]func(f *replay.File){
		"session":       func(f *replay.File) { f.Session = "walk" },
		"host suite":    func(f *replay.File) { f.Suite = "host" },
		"no problem":    func(f *replay.File) { f.Problem = "" },
		"blank problem": func(f *replay.File) { f.Problem = " \n" },
		"no steps":      func(f *replay.File) { f.Steps = nil },
		"no symbol":     func(f *replay.File) { f.Steps[1].Symbol = "" },
		"no expected":   func(f *replay.File) { f.Steps[0].Expected = "" },
		"no observed":   func(f *replay.File) { f.Steps[3].Observed = "" },
		"mutation":      func(f *replay.File) { f.Steps[1].Mutation = &replay.Mutation{Kind: "flip", Seed: 1} },
		"level":         func(f *replay.File) { f.Level = "INFO" },
	}
	for name, b := range breakers {
		f := probeSample()
		f.Steps = slices.Clone(f.Steps)
		b(&f)
		if _, err := f.Encode(); !errors.Is(err, replay.ErrFile) {
			t.Errorf("%s: Encode err = %v, want ErrFile", name, err)
		}
	}
	data, _ := probeSample().Encode()
	for name, text := range map[string]string{
		"session case":  strings.Replace(string(data), `"session": "probe"`, `"session": "Probe"`, 1),
		"problem type":  strings.Replace(string(data), `"problem": "the effect log`, `"problem": ["the effect log"], "x": "`, 1),
		"unknown field": strings.Replace(string(data), `"seed": 3,`, `"seed": 3, "frames": [],`, 1),
		"trailing":      string(data) + "{}",
		"over 1 MiB":    strings.Replace(string(data), `"problem": "`, `"problem": "`+strings.Repeat("x", replay.MaxBytes), 1),
	} {
		if _, err := replay.Decode([]byte(text)); !errors.Is(err, replay.ErrFile) {
			t.Errorf("%s: Decode err = %v, want ErrFile", name, err)
		}
	}
}
