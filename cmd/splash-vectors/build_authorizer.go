package main

import (
	"fmt"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/vectors/vectorfmt"
)

func buildAuthorizer(c *checker) (string, any, *fileBuilder) {
	b := newFileBuilder(vectorfmt.AuthorizerFile, c)
	groups := map[canonjson.Mode]*vectorfmt.AuthorizerGroup{}
	for _, m := range modes {
		groups[m] = &vectorfmt.AuthorizerGroup{Type: vectorfmt.AuthorizerSequenceType, Mode: m.String(), Tests: []vectorfmt.AuthorizerTest{}}
	}
	for _, row := range authorizerCases() {
		checkAuthorizerRow(b, row)
		runs := []struct {
			mode  canonjson.Mode
			steps []azStep
		}{{canonjson.Preserve, row.steps}}
		if row.lossy != nil {
			runs = append(runs, struct {
				mode  canonjson.Mode
				steps []azStep
			}{canonjson.Lossy, row.lossy})
		}
		if (row.lossy != nil && !sameStepOutcomes(row.steps, row.lossy)) != hasFlag(row.flags, "ModeDependent") {
			b.failf("%q: ModeDependent flag does not match the expectations", row.comment)
		}
		for _, run := range runs {
			testErr := row.manifestErr
			t := vectorfmt.AuthorizerTest{Manifest: b.text(row.manifest), Steps: []vectorfmt.AuthorizerStep{}}
			for _, s := range run.steps {
				if testErr == "" && s.err != "" {
					testErr = s.err
				}
				st := vectorfmt.AuthorizerStep{Op: s.op, Input: b.text(s.input), Instance: s.instance, Repeat: s.repeat, Error: s.err}
				if s.target >= 0 {
					target := s.target
					st.Target = &target
				}
				t.Steps = append(t.Steps, st)
			}
			t.Case = b.newCase(row.meta, testErr)
			groups[run.mode].Tests = append(groups[run.mode].Tests, t)
		}
	}
	doc := vectorfmt.Authorizer{TestGroups: []vectorfmt.AuthorizerGroup{*groups[canonjson.Preserve], *groups[canonjson.Lossy]}}
	doc.Header = b.header()
	return b.name, doc, b
}

func sameStepOutcomes(a, b []azStep) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].err != b[i].err {
			return false
		}
	}
	return true
}

// authorizerOps lists the operations an authorizer step may name.
var authorizerOps = map[string]bool{
	vectorfmt.OpAuthorize: true, vectorfmt.OpAuthorizeOperation: true, vectorfmt.OpAuthorizeReconciliation: true,
	vectorfmt.OpAuthorizeCompensation: true, vectorfmt.OpAuthorizeCancellation: true, vectorfmt.OpValidateResult: true,
	vectorfmt.OpValidateCancellationResult: true, vectorfmt.OpValidateOperationResult: true,
	vectorfmt.OpValidateReconciliationResult: true, vectorfmt.OpValidateCompensationResult: true,
}

// targetOps says which authorize operation must have issued the token each step type uses.
var targetOps = map[string]string{
	vectorfmt.OpAuthorizeCancellation:        vectorfmt.OpAuthorize,
	vectorfmt.OpValidateResult:               vectorfmt.OpAuthorize,
	vectorfmt.OpValidateCancellationResult:   vectorfmt.OpAuthorizeCancellation,
	vectorfmt.OpValidateOperationResult:      vectorfmt.OpAuthorizeOperation,
	vectorfmt.OpValidateReconciliationResult: vectorfmt.OpAuthorizeReconciliation,
	vectorfmt.OpValidateCompensationResult:   vectorfmt.OpAuthorizeCompensation,
}

// checkAuthorizerRow rejects malformed rows: unknown operations, targets that are missing,
// later, repeated, failed or of the wrong kind, and repeats without a placeholder.
func checkAuthorizerRow(b *fileBuilder, row azCase) {
	bad := func(format string, args ...any) { b.failf("%q: %s", row.comment, fmt.Sprintf(format, args...)) }
	if (len(row.steps) == 0) != (row.manifestErr != "") {
		bad("a row has steps exactly when its manifest is valid")
	}
	for _, steps := range [][]azStep{row.steps, row.lossy} {
		for i, s := range steps {
			if !authorizerOps[s.op] {
				bad("step %d: unknown operation %q", i, s.op)
			}
			want, needs := targetOps[s.op]
			switch {
			case needs && (s.target < 0 || s.target >= i):
				bad("step %d: %s needs the token of an earlier step", i, s.op)
			case !needs && s.target >= 0:
				bad("step %d: %s takes no token", i, s.op)
			case needs:
				t := steps[s.target]
				if t.op != want || t.repeat > 0 || t.err != "" {
					bad("step %d: target step %d is not a successful %s", i, s.target, want)
				}
			}
			if s.repeat > 0 && !containsPlaceholder(s.input) {
				bad("step %d: repeated step without %s", i, vectorfmt.RepeatPlaceholder)
			}
			if s.instance != 0 && s.instance != 1 {
				bad("step %d: instance %d", i, s.instance)
			}
		}
	}
}

func containsPlaceholder(s string) bool {
	for i := 0; i+len(vectorfmt.RepeatPlaceholder) <= len(s); i++ {
		if s[i:i+len(vectorfmt.RepeatPlaceholder)] == vectorfmt.RepeatPlaceholder {
			return true
		}
	}
	return false
}
