package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// checkSuites are the suites whose checks run on the framework's run loop and command line
// (package conformance): each keeps only its checks and its peer.
var checkSuites = []string{"conformance/worker", "conformance/host", "conformance/interop"}

// frontEnd is what a check suite's sources call and declare: the qualified calls (such as
// "flag.NewFlagSet") and whether each named check type is an alias.
type frontEnd struct {
	calls      []string
	checkTypes map[string]bool // type name → declared as an alias
}

// frontEndRules are the calls the framework makes for every suite, and the ones it requires.
var (
	frameworkOnly  = []string{"flag.NewFlagSet", "signal.Notify", "signal.NotifyContext"}
	frameworkCalls = []string{"conformance.Main", "conformance.RunChecks"}
)

// frontEndViolations says how suite, whose sources show f, keeps a command line, a run loop or
// a check type of its own instead of the framework's.
func frontEndViolations(suite string, f frontEnd) []string {
	var out []string
	for _, c := range frameworkOnly {
		if slices.Contains(f.calls, c) {
			out = append(out, fmt.Sprintf("%s calls %s: the framework's Main parses the one flag table and handles interrupts", suite, c))
		}
	}
	for _, c := range frameworkCalls {
		if !slices.Contains(f.calls, c) {
			out = append(out, fmt.Sprintf("%s never calls %s: its command line or run loop is its own", suite, c))
		}
	}
	for name, alias := range f.checkTypes {
		if !alias {
			out = append(out, fmt.Sprintf("%s declares its own %s type: it must be the framework's conformance.Check", suite, name))
		}
	}
	slices.Sort(out)
	return out
}

// readFrontEnd parses the non-test Go files of dir.
func readFrontEnd(t *testing.T, dir string) frontEnd {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	f := frontEnd{checkTypes: map[string]bool{}}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		imported := map[string]bool{}
		for _, imp := range file.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			local := path[strings.LastIndex(path, "/")+1:]
			if imp.Name != nil {
				local = imp.Name.Name
			}
			imported[local] = true
		}
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && imported[x.Name] {
					f.calls = append(f.calls, x.Name+"."+n.Sel.Name)
				}
			case *ast.TypeSpec:
				if n.Name.Name == "Check" || n.Name.Name == "Scenario" {
					f.checkTypes[n.Name.Name] = n.Assign.IsValid()
				}
			}
			return true
		})
	}
	return f
}

// TestSuitesUseTheFramework fails when a check suite has a command line, a run loop or a check
// type of its own: one flag table, one run loop and one Check serve the three.
func TestSuitesUseTheFramework(t *testing.T) {
	for _, suite := range checkSuites {
		f := readFrontEnd(t, filepath.Join("..", "..", filepath.FromSlash(suite)))
		if len(f.checkTypes) == 0 {
			t.Errorf("%s declares no Check or Scenario type; the rule would guard nothing", suite)
		}
		for _, v := range frontEndViolations(suite, f) {
			t.Error(v)
		}
	}
}

// TestFrontEndRuleCatchesViolations checks that each way of keeping a front end of one's own is
// reported, so that TestSuitesUseTheFramework can fail.
func TestFrontEndRuleCatchesViolations(t *testing.T) {
	good := frontEnd{calls: slices.Clone(frameworkCalls), checkTypes: map[string]bool{"Check": true}}
	if v := frontEndViolations("s", good); len(v) != 0 {
		t.Fatalf("a suite on the framework is reported: %q", v)
	}
	cases := []struct {
		name string
		f    frontEnd
		want string
	}{
		{"own flag set", frontEnd{calls: append(slices.Clone(frameworkCalls), "flag.NewFlagSet")},
			"s calls flag.NewFlagSet: the framework's Main parses the one flag table and handles interrupts"},
		{"own interrupt handling", frontEnd{calls: append(slices.Clone(frameworkCalls), "signal.NotifyContext")},
			"s calls signal.NotifyContext: the framework's Main parses the one flag table and handles interrupts"},
		{"own command line", frontEnd{calls: []string{"conformance.RunChecks"}},
			"s never calls conformance.Main: its command line or run loop is its own"},
		{"own run loop", frontEnd{calls: []string{"conformance.Main"}},
			"s never calls conformance.RunChecks: its command line or run loop is its own"},
		{"own check type", frontEnd{calls: slices.Clone(frameworkCalls), checkTypes: map[string]bool{"Scenario": false}},
			"s declares its own Scenario type: it must be the framework's conformance.Check"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := frontEndViolations("s", c.f); !slices.Contains(got, c.want) {
				t.Fatalf("violations %q lack %q", got, c.want)
			}
		})
	}
}
