package coverage

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/splashv5/conform/spec"
)

var citation = regexp.MustCompile(spec.CitationPattern)

// modelInvariants returns, per requirement ID, the invariants and properties of the models in
// dir (the Go files of model/, tests left out) that cite it, as "model/FILE: NAME". An invariant
// is a composite literal with a Name field (a string or a string constant) and a Spec field (a
// string of requirement IDs), as model.Invariant and the liveness properties are written.
func modelInvariants(root string) (map[string][]string, error) {
	dir := filepath.Join(root, "model")
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	parsed := map[string]*ast.File{}
	consts := map[string]string{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			return nil, err
		}
		parsed[f] = file
		// String constants, so that a Name given as a constant is shown by its text.
		ast.Inspect(file, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, name := range vs.Names {
				if i < len(vs.Values) {
					if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
						if s, err := strconv.Unquote(lit.Value); err == nil {
							consts[name.Name] = s
						}
					}
				}
			}
			return true
		})
	}
	out := map[string][]string{}
	names := make([]string, 0, len(parsed))
	for f := range parsed {
		names = append(names, f)
	}
	slices.Sort(names)
	for _, f := range names {
		rel := "model/" + filepath.Base(f)
		ast.Inspect(parsed[f], func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok {
				return true
			}
			var name, ids string
			for _, el := range lit.Elts {
				kv, ok := el.(*ast.KeyValueExpr)
				if !ok {
					continue
				}
				key, ok := kv.Key.(*ast.Ident)
				if !ok {
					continue
				}
				switch key.Name {
				case "Name":
					name = stringValue(kv.Value, consts)
				case "Spec":
					ids = stringValue(kv.Value, consts)
				}
			}
			if name == "" || ids == "" {
				return true
			}
			for _, id := range citation.FindAllString(ids, -1) {
				out[id] = append(out[id], rel+": "+name)
			}
			return true
		})
	}
	return out, nil
}

// stringValue returns the text of a string literal or of an identifier naming a string constant.
func stringValue(e ast.Expr, consts map[string]string) string {
	switch v := e.(type) {
	case *ast.BasicLit:
		if v.Kind == token.STRING {
			s, _ := strconv.Unquote(v.Value)
			return s
		}
	case *ast.Ident:
		return consts[v.Name]
	}
	return ""
}

// funcIndex names the function of a Go file that holds a line: the declaration whose doc
// comment or body covers it, as "path: Name" (methods as "path: Type.Name"); a citation outside
// every function is named by the file alone. Files are parsed once.
type funcIndex struct {
	root  string
	fset  *token.FileSet
	cache map[string][]funcSpan
}

type funcSpan struct {
	name       string
	start, end int
}

func newFuncIndex(root string) *funcIndex {
	return &funcIndex{root: root, fset: token.NewFileSet(), cache: map[string][]funcSpan{}}
}

func (x *funcIndex) at(rel string, line int) string {
	spans, ok := x.cache[rel]
	if !ok {
		spans = x.parse(rel)
		x.cache[rel] = spans
	}
	for _, s := range spans {
		if line >= s.start && line <= s.end {
			return rel + ": " + s.name
		}
	}
	return rel
}

func (x *funcIndex) parse(rel string) []funcSpan {
	src, err := os.ReadFile(filepath.Join(x.root, filepath.FromSlash(rel)))
	if err != nil {
		return nil
	}
	file, err := parser.ParseFile(x.fset, rel, src, parser.ParseComments)
	if err != nil {
		return nil
	}
	var spans []funcSpan
	for _, d := range file.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		start := fd.Pos()
		if fd.Doc != nil {
			start = fd.Doc.Pos()
		}
		name := fd.Name.Name
		if fd.Recv != nil && len(fd.Recv.List) == 1 {
			t := fd.Recv.List[0].Type
			if star, ok := t.(*ast.StarExpr); ok {
				t = star.X
			}
			if id, ok := t.(*ast.Ident); ok {
				name = id.Name + "." + name
			}
		}
		spans = append(spans, funcSpan{name: name, start: x.fset.Position(start).Line, end: x.fset.Position(fd.End()).Line})
	}
	return spans
}
