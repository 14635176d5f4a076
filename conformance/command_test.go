package conformance

import (
	"strings"
	"testing"
)

// TestCommandTranscriptShowsEveryMember checks that a start command with a manifest far longer
// than the bound still shows its plan, scope and state, with id and op first and the cut value
// followed by its length.
func TestCommandTranscriptShowsEveryMember(t *testing.T) {
	c := map[string]any{
		"op": "start", "id": 7, "command": []string{"/bin/worker", "--x"},
		"manifest": map[string]any{"session_id": strings.Repeat("m", 2000)},
		"plan":     map[string]any{"fingerprint": "fp", "steps": []string{"a", "b"}},
		"scope":    "hconf-tenant", "state": "/tmp/state", "deadline_ms": 400,
	}
	got := CommandTranscript(c, 100)
	for _, want := range []string{`{"id":7,"op":"start",`, `"deadline_ms":400`, `"plan":{"fingerprint":"fp","steps":["a","b"]}`,
		`"scope":"hconf-tenant"`, `"state":"/tmp/state"`, `"command":["/bin/worker","--x"]`, "…(2017 bytes)"} {
		if !strings.Contains(got, want) {
			t.Errorf("the transcript line lacks %s:\n%s", want, got)
		}
	}
	if strings.Index(got, `"state"`) > strings.Index(got, `"manifest"`) {
		t.Errorf("a bulky member comes before a short one:\n%s", got)
	}
	if len(got) > 600 {
		t.Errorf("%d bytes: the manifest was not cut at the bound:\n%s", len(got), got)
	}
}

// TestOutcomeTranscriptKeepsShortLinesAndEveryMember checks that a short outcome line is shown
// byte for byte and that a long one shows the members after its long payload.
func TestOutcomeTranscriptKeepsShortLinesAndEveryMember(t *testing.T) {
	short := `{"id":3, "ok":true,"payload":{"format":"text","value":"pong"}}`
	if got := OutcomeTranscript([]byte(short), 200); got != short {
		t.Errorf("a short line became %s", got)
	}
	long := `{"payload":{"format":"text","value":"` + strings.Repeat("x", 500) + `"},"id":4,"ok":true,"key":"op-1","status":{"state":"succeeded"}}`
	got := OutcomeTranscript([]byte(long), 200)
	for _, want := range []string{`{"id":4,"ok":true,`, `"key":"op-1"`, `"status":{"state":"succeeded"}`, "…(528 bytes)"} {
		if !strings.Contains(got, want) {
			t.Errorf("the transcript line lacks %s:\n%s", want, got)
		}
	}
	if got := OutcomeTranscript([]byte(strings.Repeat("y", 300)), 200); got != strings.Repeat("y", 200)+"…" {
		t.Errorf("a line that is no object: %s", got)
	}
}
