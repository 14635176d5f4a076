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
