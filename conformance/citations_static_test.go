package conformance_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/splashv5/conform/conformance/host"
	"github.com/splashv5/conform/conformance/interop"
	"github.com/splashv5/conform/conformance/worker"
	"github.com/splashv5/conform/spec"
)

// TestCheckBodiesCiteOnlyTheirRequirements reads the source of every check and scenario of the
// three suites: a string literal in its body that cites a requirement ID the check does not list
// fails the test. It complements the run-time rule (Result.StrayCitations, which the suites'
// tests apply to every verdict their faulty peers provoke): it also sees the failure paths no
// fault reaches. Transcript lines (Logf) and citations through Cite, which keeps only the
// check's own IDs, are left out; so are checks built by a helper from arguments.
func TestCheckBodiesCiteOnlyTheirRequirements(t *testing.T) {
	lists := map[string][]string{}
	for _, c := range worker.Catalog() {
		lists[c.ID] = c.Requirements
	}
	for _, c := range host.Catalog() {
		lists[c.ID] = c.Requirements
	}
	for _, s := range interop.Catalog() {
		lists[s.ID] = s.Requirements
	}
	citation := regexp.MustCompile(spec.CitationPattern)
	seen := 0
	for _, dir := range []string{"worker", "host", "interop"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			file, err := parser.ParseFile(fset, f, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(file, func(n ast.Node) bool {
				lit, ok := n.(*ast.CompositeLit)
				if !ok {
					return true
				}
				id, body := checkLiteral(lit)
				reqs, known := lists[id]
				if body == nil || !known {
					return true
				}
				seen++
				ast.Inspect(body, func(n ast.Node) bool {
					switch n := n.(type) {
					case *ast.CallExpr:
						if sel, ok := n.Fun.(*ast.SelectorExpr); ok && slices.Contains([]string{"Logf", "Cite"}, sel.Sel.Name) {
							return false
						}
					case *ast.BasicLit:
						if n.Kind != token.STRING {
							return true
						}
						s, err := strconv.Unquote(n.Value)
						if err != nil {
							return true
						}
						for _, cited := range citation.FindAllString(s, -1) {
							if !slices.Contains(reqs, cited) {
								t.Errorf("%s: %s cites %s, which it does not list (%s); cite it through t.cite, or list it",
									fset.Position(n.Pos()), id, cited, strings.Join(reqs, ", "))
							}
						}
					}
					return true
				})
				return true
			})
		}
	}
	t.Logf("%d of %d checks scanned", seen, len(lists))
	if seen < len(lists)/2 {
		t.Errorf("only %d of %d checks found in the sources: the scan no longer recognises how checks are written", seen, len(lists))
	}
}

// checkLiteral returns the ID and the run function of a check or scenario literal
// ({ID: "CNF-…", …, Run: func(t *T) {…}}, or Run: a call that builds it), or a nil body.
func checkLiteral(lit *ast.CompositeLit) (string, ast.Expr) {
	var id string
	var body ast.Expr
	for _, elt := range lit.Elts {
		kv, ok := elt.(*ast.KeyValueExpr)
		if !ok {
			continue
		}
		key, ok := kv.Key.(*ast.Ident)
		if !ok {
			continue
		}
		switch key.Name {
		case "ID":
			if b, ok := kv.Value.(*ast.BasicLit); ok && b.Kind == token.STRING {
				id, _ = strconv.Unquote(b.Value)
			}
		case "Run":
			body = kv.Value
		}
	}
	return id, body
}
