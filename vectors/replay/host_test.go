package replay_test

import (
	"strings"
	"testing"

	"github.com/splashv5/conform/vectors"
	"github.com/splashv5/conform/vectors/replay"
	"github.com/splashv5/conform/vectors/vectorfmt"
)

// TestHostScenarioReplayDetectsChanges checks that the host scenario replay notices a changed
// expectation: an idempotency key, an audit record, an error kind, an audit export and a
// registration error kind.
func TestHostScenarioReplayDetectsChanges(t *testing.T) {
	f, err := vectors.HostScenarioFile()
	if err != nil {
		t.Fatal(err)
	}
	var keyed, audited, refused, exported, registered *vectorfmt.HostScenarioTest
	for i := range f.TestGroups[0].Tests {
		tc := &f.TestGroups[0].Tests[i]
		if len(replay.CheckHostScenario(tc)) != 0 {
			t.Fatalf("tcId %d does not replay", tc.TcID)
		}
		for _, s := range tc.Steps {
			switch {
			case keyed == nil && s.Expect.Invocation != nil:
				keyed = tc
			case audited == nil && len(s.Expect.Audit) > 0:
				audited = tc
			case refused == nil && s.Expect.Error == "NotClaimed":
				refused = tc
			case exported == nil && len(s.Expect.Exported) > 0:
				exported = tc
			case registered == nil && s.Expect.Error == "InvalidPolicy":
				registered = tc
			}
		}
	}
	if keyed == nil || audited == nil || refused == nil || exported == nil || registered == nil {
		t.Fatal("the file lacks a keyed, an audited, a refused, an exporting or a registering step")
	}
	mutate := func(tc *vectorfmt.HostScenarioTest, change func(*vectorfmt.HostExpect) bool) {
		t.Helper()
		c := *tc
		c.Steps = append([]vectorfmt.HostStep{}, tc.Steps...)
		for i := range c.Steps {
			e := c.Steps[i].Expect
			if change(&e) {
				c.Steps[i].Expect = e
				break
			}
		}
		if len(replay.CheckHostScenario(&c)) == 0 {
			t.Errorf("tcId %d: a changed expectation still replays", tc.TcID)
		}
	}
	mutate(keyed, func(e *vectorfmt.HostExpect) bool {
		if e.Invocation == nil {
			return false
		}
		inv := *e.Invocation
		inv.IdempotencyKey = strings.Replace(inv.IdempotencyKey, "-", "_", 1)
		e.Invocation = &inv
		return true
	})
	mutate(audited, func(e *vectorfmt.HostExpect) bool {
		if len(e.Audit) == 0 {
			return false
		}
		e.Audit = append([]vectorfmt.HostAuditEvent{}, e.Audit...)
		e.Audit[0].EventSequence++
		return true
	})
	mutate(refused, func(e *vectorfmt.HostExpect) bool {
		if e.Error != "NotClaimed" {
			return false
		}
		e.Error = "NotExternal"
		return true
	})
	mutate(exported, func(e *vectorfmt.HostExpect) bool {
		if len(e.Exported) == 0 {
			return false
		}
		e.Exported = e.Exported[1:]
		return true
	})
	mutate(registered, func(e *vectorfmt.HostExpect) bool {
		if e.Error != "InvalidPolicy" {
			return false
		}
		e.Error = "Duplicate"
		return true
	})
}
