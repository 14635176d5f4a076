package replay_test

import (
	"strings"
	"testing"

	"github.com/splashv5/conform/vectors"
	"github.com/splashv5/conform/vectors/replay"
	"github.com/splashv5/conform/vectors/vectorfmt"
)

// TestLedgerReplayDetectsChanges checks that the ledger replay notices a changed expectation
// in every group type: a fingerprint, an operation key (both through the unchecked derivation
// and through preparing), an argument check's error kind, a canonical encoding, a decoding
// error kind and a record's error kind.
//
// Spec: RUN-180, RUN-181, RUN-182, RUN-183
func TestLedgerReplayDetectsChanges(t *testing.T) {
	f, err := vectors.LedgerVectors()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, g := range f.TestGroups {
		for i := range g.Tests {
			tc := &g.Tests[i]
			if p := replay.CheckLedgerTest(g.Type, tc); len(p) != 0 {
				t.Fatalf("tcId %d does not replay: %v", tc.TcID, p)
			}
			seen[g.Type]++
			check := func(what string, change func(c *vectorfmt.LedgerTest)) {
				t.Helper()
				c := *tc
				c.Records = append([]vectorfmt.LedgerRecord{}, tc.Records...)
				change(&c)
				if len(replay.CheckLedgerTest(g.Type, &c)) == 0 {
					t.Errorf("tcId %d: a changed %s still replays", tc.TcID, what)
				}
			}
			if tc.Fingerprint != nil {
				check("fingerprint", func(c *vectorfmt.LedgerTest) { c.Fingerprint = flipHex(*tc.Fingerprint) })
			}
			switch {
			case tc.OperationKey != nil:
				check("operation key", func(c *vectorfmt.LedgerTest) { c.OperationKey = flipHex(*tc.OperationKey) })
			case g.Type == vectorfmt.LedgerOperationKeyType:
				check("argument error kind", func(c *vectorfmt.LedgerTest) { c.Error = "PlanMismatch" })
				check("argument outcome", func(c *vectorfmt.LedgerTest) {
					c.Result, c.Error = vectorfmt.Valid, ""
					c.OperationKey, c.Fingerprint = strPtr("op-"+strings.Repeat("0", 64)), strPtr(strings.Repeat("0", 64))
				})
			case tc.Output != nil:
				check("encoding", func(c *vectorfmt.LedgerTest) {
					o := vectorfmt.Text(strings.Replace(string(*tc.Output), `"revision":`, `"revision":1`, 1))
					c.Output = &o
				})
			case g.Type == vectorfmt.LedgerDecodeType:
				check("decoding error kind", func(c *vectorfmt.LedgerTest) { c.Error = "PlanMismatch" })
			}
			for j, r := range tc.Records {
				if r.Error != "" {
					check("record error kind", func(c *vectorfmt.LedgerTest) { c.Records[j].Error = "PlanMismatch" })
					break
				}
			}
		}
	}
	for _, typ := range []string{vectorfmt.LedgerInputFingerprintType, vectorfmt.LedgerOperationKeyType, vectorfmt.LedgerDecodeType, vectorfmt.LedgerRecordType} {
		if seen[typ] == 0 {
			t.Errorf("no %s tests", typ)
		}
	}
}

// TestLedgerKeyPreparedPath checks that a key test whose input is a canonical operation input
// is also replayed through preparing a queued runtime operation: a key that differs only in
// what the unchecked derivation would compute for another nonce must fail on both paths.
//
// Spec: RUN-181, RUN-183
func TestLedgerKeyPreparedPath(t *testing.T) {
	f, err := vectors.LedgerVectors()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range f.TestGroups {
		if g.Type != vectorfmt.LedgerOperationKeyType {
			continue
		}
		for i := range g.Tests {
			tc := g.Tests[i]
			if tc.Result != vectorfmt.Valid || tc.Input == nil || !strings.HasPrefix(string(*tc.Input), "json") {
				continue
			}
			c := tc
			c.Fingerprint = flipHex(*tc.Fingerprint)
			problems := replay.CheckLedgerTest(g.Type, &c)
			joined := strings.Join(problems, "; ")
			if len(problems) < 2 || !strings.Contains(joined, "recorded input fingerprint") {
				t.Errorf("tcId %d: a changed fingerprint is not reported by both paths: %s", tc.TcID, joined)
			}
			return
		}
	}
	t.Fatal("no valid key test with a canonical json input")
}

func flipHex(s string) *string {
	b := []byte(s)
	last := len(b) - 1
	if b[last] == '0' {
		b[last] = '1'
	} else {
		b[last] = '0'
	}
	out := string(b)
	return &out
}

func strPtr(s string) *string { return &s }
