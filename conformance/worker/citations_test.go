package worker

import (
	"strings"
	"testing"

	"github.com/splashv5/conform/conformance"
)

// TestStrayCitations checks what counts as a stray citation: an ID of the spec's prefixes in
// the detail, expected or actual text that the check does not list, once each.
func TestStrayCitations(t *testing.T) {
	r := conformance.Result{Requirements: []string{"FRM-012", "WRK-091"},
		Detail: "expected x (FRM-012); got y (HDR-043, FRM-012)", Expected: "x (FRM-012)", Actual: "y (HDR-043) SHA-256 CNF-FRAME-01 WRK-0910 TRN-012"}
	got := strings.Join(r.StrayCitations(), ",")
	if got != "HDR-043,TRN-012" {
		t.Errorf("stray citations %q, want HDR-043,TRN-012", got)
	}
}
