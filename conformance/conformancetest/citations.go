package conformancetest

import (
	"strings"
	"testing"

	"github.com/splashv5/conform/conformance"
)

// CheckCitations fails the test for every verdict of report that cites a requirement ID its
// check does not list (conformance.Result.StrayCitations). The suites' tests call it on every
// run against a faulty or misbehaving peer, so that each failure path they reach is held to the
// rule.
func CheckCitations(t testing.TB, report *conformance.Report) {
	t.Helper()
	for i := range report.Results {
		r := &report.Results[i]
		if stray := r.StrayCitations(); len(stray) > 0 {
			t.Errorf("%s %s cites %s, which the check does not list (%s): %s", r.ID, r.Outcome,
				strings.Join(stray, ", "), strings.Join(r.Requirements, ", "), conformance.Clip(r.Detail, 600))
		}
	}
}
