package worker

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/splashv5/conform/conformance"
)

// TestTagMismatchShowsTheHashedTagInput checks that a frame whose tag does not verify is
// reported with the tag input the runner hashed, so a worker author can compare it with
// their own. The echo fake sends the host's frames back, tagged for the host role.
func TestTagMismatchShowsTheHashedTagInput(t *testing.T) {
	r := runFakeSuite(t, "echo", "^CNF-PROFILE-01$", 10*time.Second)
	res := resultOf(t, r, "CNF-PROFILE-01")
	want := `the runner hashed this tag input: {"domain":"splash-worker-auth-v5","protocol_version":5,"sender":"worker","sequence":1,"session_id":"conf-`
	if res.Outcome != conformance.Fail || !strings.Contains(res.Actual, "InvalidAuthenticationTag") || !strings.Contains(res.Actual, want) {
		t.Fatalf("%s %q; want a tag mismatch that quotes %s", res.Outcome, res.Actual, want)
	}
	if !strings.Contains(res.Actual, `"message":{"type":"open_session"`) {
		t.Errorf("the quoted tag input does not hold the canonical message: %q", res.Actual)
	}
}

// TestFullFramesInTranscripts checks that with FullFrames (set by -v and -json) a transcript
// line carries a long frame whole, and that without it the line is cut.
func TestFullFramesInTranscripts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the reference worker")
	}
	deep := `"x_deep":` + nestedArrays(deepLevels, "")
	for _, full := range []bool{true, false} {
		cfg := referenceConfig(t)
		cfg.Run, cfg.Verbose, cfg.FullFrames = "^CNF-DECODE-09$", true, full
		report, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		res := resultOf(t, report, "CNF-DECODE-09")
		found := false
		for _, line := range res.Transcript {
			found = found || strings.Contains(line, deep)
		}
		if found != full {
			t.Errorf("FullFrames %v: the transcript holds the whole frame: %v\n%s", full, found, strings.Join(res.Transcript, "\n"))
		}
	}
}
