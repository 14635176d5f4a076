// Package archtest guards the dependency direction of the module (docs/architecture.md): a
// test fails when a package imports against the layering.
package archtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/splashv5/conform"

// wireCore is the wire core: the packages that frame, seal, encode and bootstrap a session, and
// all the conformance runner may use.
var wireCore = []string{"impl/errkind", "impl/canonjson", "impl/derive", "impl/protocol", "impl/bootstrap", "impl/jsonline"}

// workerOnly are the worker's own packages: the runtime, its journal and the conformance
// adapter profile.
var workerOnly = []string{"impl/worker", "impl/journal", "impl/profile"}

// workerSide is workerOnly and the storage layer the worker's journal (and the host's ledger)
// are kept in.
var workerSide = append([]string{"impl/storage"}, workerOnly...)

// hostSide are the host's packages and the reference host driver. inProcess, the in-process
// transport, is the one host package that runs a worker session; test-support packages
// (transporttest) may start worker processes for tests.
var hostSide = []string{"impl/host", "impl/schema", "impl/ledger", "impl/transport", "impl/workflow", "cmd/splash-host-driver"}

const inProcess = "impl/transport/inprocess"

// suites are the conformance suites on the framework (package conformance): each holds only its
// checks and its peer.
var suites = []string{"conformance/worker", "conformance/host", "conformance/interop", "conformance/explore"}

// checkSuites are the suites whose checks run on the framework's run loop and command line.
var checkSuites = suites[:3]

// suiteOf returns the suite that holds path, or "".
func suiteOf(path string) string {
	for _, s := range suites {
		if under(path, s) {
			return s
		}
	}
	return ""
}

// childproc is the package that starts, kills, classifies and builds child processes.
const childproc = "internal/childproc"

// runnerExternals are the only modules outside the standard library and this module that the
// conformance runner links: BLAKE3 (frame tags) and its CPU feature detection.
var runnerExternals = []string{"lukechampine.com/blake3", "github.com/klauspost/cpuid/v2"}

// pkg is one package of the build graph, with module paths relative to the module.
type pkg struct {
	Path     string   // relative to the module for module packages
	Standard bool     // in the standard library
	Module   bool     // in this module
	Deps     []string // every package it links, relative to the module where they are in it
	Imports  []string // the packages it imports itself, relative like Deps
}

// rule is one layering rule: a check of one package's place in the graph.
type rule struct {
	name  string
	check func(p pkg) error
}

// moduleDeps returns the module packages among deps.
func moduleDeps(p pkg, all map[string]pkg, deps []string) []string {
	var out []string
	for _, d := range deps {
		if all[d].Module && d != p.Path {
			out = append(out, d)
		}
	}
	return out
}

// under reports whether path is dir or below it.
func under(path, dir string) bool { return path == dir || strings.HasPrefix(path, dir+"/") }

// isTestSupport reports whether path is a test-support package, named after its parent plus
// "test" (impl/storage/storagetest), which only tests may import.
func isTestSupport(path string) bool {
	i := strings.LastIndex(path, "/")
	if i < 0 {
		return false
	}
	parent := path[:i]
	return path[i+1:] == parent[strings.LastIndex(parent, "/")+1:]+"test"
}

// rules returns the layering rules over the graph all.
func rules(all map[string]pkg) []rule {
	only := func(p pkg, deps []string, allowed func(string) bool) error {
		var bad []string
		for _, d := range deps {
			if !allowed(d) {
				bad = append(bad, d)
			}
		}
		if len(bad) > 0 {
			return fmt.Errorf("%s links %s", p.Path, strings.Join(bad, ", "))
		}
		return nil
	}
	inWireCore := func(d string) bool { return slices.Contains(wireCore, d) }
	return []rule{
		{"internal/childproc links the standard library only", func(p pkg) error {
			if p.Path != childproc {
				return nil
			}
			return only(p, p.Deps, func(d string) bool { return all[d].Standard })
		}},
		{"a suite never imports another suite", func(p pkg) error {
			own := suiteOf(p.Path)
			if own == "" {
				return nil
			}
			return only(p, moduleDeps(p, all, p.Deps), func(d string) bool { s := suiteOf(d); return s == "" || s == own })
		}},
		{"a suite is built on the framework", func(p pkg) error {
			if !slices.Contains(suites, p.Path) || slices.Contains(p.Imports, "conformance") {
				return nil
			}
			return fmt.Errorf("%s does not import conformance", p.Path)
		}},
		{"a check suite imports no flag package (the framework's Main holds the one flag table)", func(p pkg) error {
			if !slices.Contains(checkSuites, p.Path) || !slices.Contains(p.Imports, "flag") {
				return nil
			}
			return fmt.Errorf("%s imports flag", p.Path)
		}},
		{"the framework imports no suite", func(p pkg) error {
			if !under(p.Path, "conformance") || suiteOf(p.Path) != "" {
				return nil
			}
			return only(p, moduleDeps(p, all, p.Deps), func(d string) bool { return suiteOf(d) == "" })
		}},
		{"only the suites, the host transport and test-support packages import internal/childproc", func(p pkg) error {
			if !slices.Contains(p.Imports, childproc) {
				return nil
			}
			if under(p.Path, "conformance") || p.Path == "impl/transport" || isTestSupport(p.Path) {
				return nil
			}
			return fmt.Errorf("%s imports %s", p.Path, childproc)
		}},
		{"spec imports nothing of the module", func(p pkg) error {
			if p.Path != "spec" {
				return nil
			}
			return only(p, moduleDeps(p, all, p.Deps), func(string) bool { return false })
		}},
		{"impl/canonjson imports nothing of the module", func(p pkg) error {
			if p.Path != "impl/canonjson" {
				return nil
			}
			return only(p, moduleDeps(p, all, p.Deps), func(string) bool { return false })
		}},
		{"impl/errkind imports nothing of the module", func(p pkg) error {
			if p.Path != "impl/errkind" {
				return nil
			}
			return only(p, moduleDeps(p, all, p.Deps), func(string) bool { return false })
		}},
		{"model imports nothing of the module outside model", func(p pkg) error {
			if !under(p.Path, "model") {
				return nil
			}
			return only(p, moduleDeps(p, all, p.Deps), func(d string) bool { return under(d, "model") })
		}},
		{"the wire core links only the wire core", func(p pkg) error {
			if !slices.Contains(wireCore, p.Path) {
				return nil
			}
			return only(p, moduleDeps(p, all, p.Deps), inWireCore)
		}},
		{"conformance links only the wire core and the spec text (the interop relay and the host explorer also the host authorizer and key derivations)", func(p pkg) error {
			if !under(p.Path, "conformance") {
				return nil
			}
			return only(p, moduleDeps(p, all, p.Deps), func(d string) bool {
				return inWireCore(d) || d == "spec" || d == childproc || under(d, "conformance") || relayMayLink(p.Path, d)
			})
		}},
		{"splash-conform links the runner, the wire core, the spec text, the standard library and BLAKE3 only", func(p pkg) error {
			if p.Path != "cmd/splash-conform" {
				return nil
			}
			return only(p, p.Deps, func(d string) bool {
				q := all[d]
				return q.Standard || inWireCore(d) || under(d, "conformance") || d == "spec" || d == childproc || slices.Contains(judgeLinks, d) ||
					slices.ContainsFunc(runnerExternals, func(e string) bool { return under(d, e) })
			})
		}},
		{"impl depends on impl only", func(p pkg) error {
			if !under(p.Path, "impl") {
				return nil
			}
			return only(p, moduleDeps(p, all, p.Deps), func(d string) bool { return under(d, "impl") || d == childproc })
		}},
		{"only sqlitestore links SQLite, only boltstore links bbolt", func(p pkg) error {
			return only(p, p.Deps, func(d string) bool {
				switch {
				case under(d, "modernc.org/sqlite"):
					return under(p.Path, "impl/storage/sqlitestore")
				case under(d, "go.etcd.io/bbolt"):
					return p.Path == "impl/storage/boltstore" || p.Path == "cmd/splash-worker" || p.Path == "cmd/splash-host-driver"
				}
				return true
			})
		}},
		// The worker links etcdstore only when built with tag splashetcd, which this graph
		// (the default build) never sees.
		{"only etcdstore links the etcd client", func(p pkg) error {
			return only(p, p.Deps, func(d string) bool {
				if under(d, "go.etcd.io/etcd") {
					return p.Path == "impl/storage/etcdstore"
				}
				return true
			})
		}},
		{"impl/schema links only canonical JSON and impl/errkind", func(p pkg) error {
			if p.Path != "impl/schema" {
				return nil
			}
			return only(p, moduleDeps(p, all, p.Deps), func(d string) bool { return d == "impl/canonjson" || d == "impl/errkind" })
		}},
		{"the host runtime, its schemas and its transports link no ledger, storage or worker code", func(p pkg) error {
			if p.Path != "impl/host" && p.Path != "impl/schema" && p.Path != "impl/transport" {
				return nil
			}
			return only(p, moduleDeps(p, all, p.Deps), func(d string) bool {
				return !slices.ContainsFunc(append([]string{"impl/ledger", "impl/workflow"}, workerSide...), func(w string) bool { return under(d, w) })
			})
		}},
		{"the host side links no worker code (only transport/inprocess runs a worker session)", func(p pkg) error {
			if !slices.ContainsFunc(hostSide, func(h string) bool { return under(p.Path, h) }) || p.Path == inProcess || isTestSupport(p.Path) {
				return nil
			}
			return only(p, moduleDeps(p, all, p.Deps), func(d string) bool {
				return !slices.ContainsFunc(workerOnly, func(w string) bool { return under(d, w) })
			})
		}},
		{"only tests import test-support packages", func(p pkg) error {
			if isTestSupport(p.Path) {
				return nil
			}
			return only(p, moduleDeps(p, all, p.Deps), func(d string) bool { return !isTestSupport(d) })
		}},
	}
}

// violations applies every rule to every module package of all.
func violations(all map[string]pkg) []string {
	var out []string
	for _, r := range rules(all) {
		for _, p := range all {
			if !p.Module {
				continue
			}
			if err := r.check(p); err != nil {
				out = append(out, r.name+": "+err.Error())
			}
		}
	}
	slices.Sort(out)
	return out
}

// load lists the module's packages and everything they link, without tests.
func load(t *testing.T) map[string]pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-json=ImportPath,Standard,Module,Deps,Imports", module+"/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	rel := func(path string) string {
		if path == module {
			return "."
		}
		return strings.TrimPrefix(path, module+"/")
	}
	all := map[string]pkg{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var raw struct {
			ImportPath string
			Standard   bool
			Module     *struct{ Path string }
			Deps       []string
			Imports    []string
		}
		if err := dec.Decode(&raw); err != nil {
			t.Fatal(err)
		}
		p := pkg{Path: rel(raw.ImportPath), Standard: raw.Standard, Module: raw.Module != nil && raw.Module.Path == module}
		for _, d := range raw.Deps {
			p.Deps = append(p.Deps, rel(d))
		}
		for _, d := range raw.Imports {
			p.Imports = append(p.Imports, rel(d))
		}
		all[p.Path] = p
	}
	return all
}

// TestLayering fails when a package of the module imports against the architecture.
func TestLayering(t *testing.T) {
	all := load(t)
	for _, must := range append([]string{"cmd/splash-conform", "conformance", "conformance/worker", "conformance/host", "conformance/interop", "model", "impl/storage/sqlitestore", "impl/storage/boltstore", "impl/storage/etcdstore",
		"impl/host", "impl/schema", "impl/ledger", "impl/transport", inProcess, "impl/workflow", "cmd/splash-host-driver"}, wireCore...) {
		if !all[must].Module {
			t.Fatalf("package %s is not in the graph; the rules would guard nothing", must)
		}
	}
	for _, v := range violations(all) {
		t.Error(v)
	}
}

// TestRulesCatchViolations builds graphs that break each rule and checks that each is
// reported, so that TestLayering can fail.
func TestRulesCatchViolations(t *testing.T) {
	mod := func(path string, deps ...string) pkg { return pkg{Path: path, Module: true, Deps: deps} }
	ext := func(path string) pkg { return pkg{Path: path} }
	cases := []struct {
		name string
		pkgs []pkg
		want string
	}{
		{"canonjson imports the module", []pkg{mod("impl/canonjson", "impl/derive"), mod("impl/derive")},
			"impl/canonjson imports nothing of the module: impl/canonjson links impl/derive"},
		{"errkind imports the module", []pkg{mod("impl/errkind", "impl/canonjson"), mod("impl/canonjson")},
			"impl/errkind imports nothing of the module: impl/errkind links impl/canonjson"},
		{"model imports impl", []pkg{mod("model/flow", "impl/protocol"), mod("impl/protocol")},
			"model imports nothing of the module outside model: model/flow links impl/protocol"},
		{"conformance imports storage", []pkg{mod("conformance", "impl/storage"), mod("impl/storage")},
			"conformance links only the wire core and the spec text (the interop relay and the host explorer also the host authorizer and key derivations): conformance links impl/storage"},
		{"the host suite imports the authorizer", []pkg{mod("conformance/host", "impl/authorizer"), mod("impl/authorizer")},
			"conformance links only the wire core and the spec text (the interop relay and the host explorer also the host authorizer and key derivations): conformance/host links impl/authorizer"},
		{"the interop relay imports the worker", []pkg{mod("conformance/interop", "impl/worker"), mod("impl/worker")},
			"conformance links only the wire core and the spec text (the interop relay and the host explorer also the host authorizer and key derivations): conformance/interop links impl/worker"},
		{"the runner links SQLite", []pkg{mod("cmd/splash-conform", "conformance", "modernc.org/sqlite"), mod("conformance"), ext("modernc.org/sqlite")},
			"splash-conform links the runner, the wire core, the spec text, the standard library and BLAKE3 only: cmd/splash-conform links modernc.org/sqlite"},
		{"the worker links SQLite", []pkg{mod("cmd/splash-worker", "modernc.org/sqlite"), ext("modernc.org/sqlite")},
			"only sqlitestore links SQLite, only boltstore links bbolt: cmd/splash-worker links modernc.org/sqlite"},
		{"the default worker links the etcd client", []pkg{mod("cmd/splash-worker", "impl/storage/etcdstore", "go.etcd.io/etcd/client/v3"), mod("impl/storage/etcdstore", "go.etcd.io/etcd/client/v3"), ext("go.etcd.io/etcd/client/v3")},
			"only etcdstore links the etcd client: cmd/splash-worker links go.etcd.io/etcd/client/v3"},
		{"impl imports conformance", []pkg{mod("impl/worker", "conformance"), mod("conformance")},
			"impl depends on impl only: impl/worker links conformance"},
		{"a command imports a test-support package", []pkg{mod("cmd/splash-worker", "impl/storage/storagetest"), mod("impl/storage/storagetest")},
			"only tests import test-support packages: cmd/splash-worker links impl/storage/storagetest"},
		{"the schema compiler imports the host", []pkg{mod("impl/schema", "impl/host"), mod("impl/host")},
			"impl/schema links only canonical JSON and impl/errkind: impl/schema links impl/host"},
		{"the host runtime imports storage", []pkg{mod("impl/host", "impl/storage"), mod("impl/storage")},
			"the host runtime, its schemas and its transports link no ledger, storage or worker code: impl/host links impl/storage"},
		{"the host transports import the ledger", []pkg{mod("impl/transport", "impl/ledger"), mod("impl/ledger")},
			"the host runtime, its schemas and its transports link no ledger, storage or worker code: impl/transport links impl/ledger"},
		{"the host transports import the worker", []pkg{mod("impl/transport", "impl/worker"), mod("impl/worker")},
			"the host runtime, its schemas and its transports link no ledger, storage or worker code: impl/transport links impl/worker"},
		{"the host driver links the journal", []pkg{mod("cmd/splash-host-driver", "impl/journal"), mod("impl/journal")},
			"the host side links no worker code (only transport/inprocess runs a worker session): cmd/splash-host-driver links impl/journal"},
		{"the step engine links the worker", []pkg{mod("impl/workflow", "impl/worker"), mod("impl/worker")},
			"the host side links no worker code (only transport/inprocess runs a worker session): impl/workflow links impl/worker"},
		{"the interop suite imports the host suite", []pkg{mod("conformance/interop", "conformance/host", "conformance"), mod("conformance/host", "conformance"), mod("conformance")},
			"a suite never imports another suite: conformance/interop links conformance/host"},
		{"a suite beside the framework", []pkg{mod("conformance/host", "conformance/driver"), mod("conformance/driver")},
			"a suite is built on the framework: conformance/host does not import conformance"},
		{"a suite parses its own flags", []pkg{{Path: "conformance/interop", Module: true, Deps: []string{"conformance", "flag"}, Imports: []string{"conformance", "flag"}}, mod("conformance"), ext("flag")},
			"a check suite imports no flag package (the framework's Main holds the one flag table): conformance/interop imports flag"},
		{"the framework imports the worker suite", []pkg{mod("conformance", "conformance/worker"), mod("conformance/worker")},
			"the framework imports no suite: conformance links conformance/worker"},
		{"childproc imports the module", []pkg{mod("internal/childproc", "impl/protocol"), mod("impl/protocol")},
			"internal/childproc links the standard library only: internal/childproc links impl/protocol"},
		{"the worker runtime imports childproc", []pkg{{Path: "impl/worker", Module: true, Deps: []string{"internal/childproc"}, Imports: []string{"internal/childproc"}}, mod("internal/childproc")},
			"only the suites, the host transport and test-support packages import internal/childproc: impl/worker imports internal/childproc"},
		{"the wire core imports the worker", []pkg{mod("impl/protocol", "impl/worker"), mod("impl/worker")},
			"the wire core links only the wire core: impl/protocol links impl/worker"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			all := map[string]pkg{}
			for _, p := range c.pkgs {
				all[p.Path] = p
			}
			got := violations(all)
			if !slices.Contains(got, c.want) {
				t.Fatalf("violations %q lack %q", got, c.want)
			}
		})
	}
}

// TestEtcdWorkerBuild checks that the worker built with tag splashetcd links the etcd
// backend, so that the rule above guards a real difference between the two builds.
func TestEtcdWorkerBuild(t *testing.T) {
	out, err := exec.Command("go", "list", "-tags", "splashetcd", "-deps", module+"/cmd/splash-worker").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(strings.Fields(string(out)), module+"/impl/storage/etcdstore") {
		t.Fatal("the splashetcd build of the worker does not link impl/storage/etcdstore")
	}
}

// judgeLinks are the packages beyond the wire core that a judge of the host may link: the
// authorizer, whose rules are pure functions of the manifest and the session's counters
// (IOP-003, the host explorer's authorized invariant), and the key derivations, pure functions
// of the plan and a step's inputs (the host explorer's keys-derived invariant).
var judgeLinks = []string{"impl/authorizer", "impl/opkey"}

// relayMayLink reports whether package p of the conformance tree may link d beyond the wire
// core: only the interop package and the host explorer, and only judgeLinks. The worker and
// host suites judge their peer with the wire core alone.
func relayMayLink(p, d string) bool {
	return (under(p, "conformance/interop") || under(p, "conformance/explore/hostexplore")) && slices.Contains(judgeLinks, d)
}
