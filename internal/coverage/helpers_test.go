package coverage

import (
	"sync"
	"testing"

	"github.com/splashv5/conform/spec"
)

// built is the coverage of the module these tests run in, built once: Build reads every
// chapter, catalog, vector and test file.
var built = sync.OnceValues(func() (*builtModule, error) {
	root, err := spec.FindModuleRoot(".")
	if err != nil {
		return nil, err
	}
	cov, err := Build(root)
	if err != nil {
		return nil, err
	}
	return &builtModule{root: root, cov: cov}, nil
})

type builtModule struct {
	root string
	cov  *Coverage
}

// moduleCoverage returns the module root and its coverage, or fails the test.
func moduleCoverage(t *testing.T) (string, *Coverage) {
	t.Helper()
	m, err := built()
	if err != nil {
		t.Fatal(err)
	}
	return m.root, m.cov
}
