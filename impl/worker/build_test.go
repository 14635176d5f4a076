package worker_test

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// The default builds of the runtime and of the worker command hold no fault code: the files
// of the faulty build are excluded by their build constraint, they are the only files that
// name a fault, and the faulty build does include them.
func TestDefaultBuildHasNoFaults(t *testing.T) {
	faultName := regexp.MustCompile(`Fault|^fault`)
	for _, tc := range []struct {
		dir         string
		faultyFiles []string
	}{
		{".", []string{"faults.go", "faults_authz.go", "faults_flows.go", "faults_frames.go"}},
		{"../../cmd/splash-worker", []string{"faults.go"}},
	} {
		released, err := build.Default.ImportDir(tc.dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		tagged := build.Default
		tagged.BuildTags = []string{"splashfaults"}
		faulty, err := tagged.ImportDir(tc.dir, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range tc.faultyFiles {
			if slices.Contains(released.GoFiles, f) || !slices.Contains(faulty.GoFiles, f) {
				t.Errorf("%s/%s: in the default build %v, in the faulty build %v; want only the faulty build",
					tc.dir, f, slices.Contains(released.GoFiles, f), slices.Contains(faulty.GoFiles, f))
			}
		}
		fset := token.NewFileSet()
		for _, f := range released.GoFiles {
			file, err := parser.ParseFile(fset, filepath.Join(tc.dir, f), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(file, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok && faultName.MatchString(id.Name) {
					t.Errorf("%s: the default build names %s", fset.Position(id.Pos()), id.Name)
				}
				return true
			})
		}
	}
}
