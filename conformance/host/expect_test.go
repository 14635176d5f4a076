package host

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/expect"
)

// TestHostExpectations runs splash-conform host with the expectation flags: the written file is
// a host file, a stale entry is reported as fixed (and fails under -expect-strict), a worker
// file is refused, and the reports and -version name the host suite and its catalog digest.
func TestHostExpectations(t *testing.T) {
	driver := referenceDriver(t)
	dir := t.TempDir()
	main := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := Main(append(append([]string{"-run", "^CNF-HBOOT-01$", "-timeout", "20s"}, args...), "--", driver), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	written := filepath.Join(dir, "written.json")
	if code, out, errOut := main("-write-expectations", written); code != conformance.ExitOK {
		t.Fatalf("-write-expectations: exit %d\n%s%s", code, out, errOut)
	}
	data, err := os.ReadFile(written)
	if err != nil {
		t.Fatal(err)
	}
	f, err := expect.Parse(data)
	if err != nil || f.Suite != "host" || len(f.Expectations) != 0 || f.CatalogDigest != Suite().CatalogDigest {
		t.Errorf("written file: %v\n%s", err, data)
	}

	stale := filepath.Join(dir, "stale.json")
	text := `{"format": "splash-conform-expectations", "format_version": 1, "suite": "host", "expectations": [
  {"id": "CNF-HBOOT-01", "outcome": "FAIL", "reason": "fixed since"}]}`
	if err := os.WriteFile(stale, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(dir, "report.json")
	code, out, errOut := main("-expect", stale, "-json", report)
	if code != conformance.ExitOK || !strings.Contains(out, "CNF-HBOOT-01 is now PASS: line 2") {
		t.Errorf("a stale entry: exit %d\n%s%s", code, out, errOut)
	}
	if data, err := os.ReadFile(report); err != nil || !strings.Contains(string(data), `"name": "host"`) || !strings.Contains(string(data), Suite().CatalogDigest) ||
		!strings.Contains(string(data), `"verdict": "fixed"`) {
		t.Errorf("JSON report: %v\n%s", err, data)
	}
	if code, out, _ := main("-expect", stale, "-expect-strict"); code != conformance.ExitFailures {
		t.Errorf("a stale entry under -expect-strict: exit %d\n%s", code, out)
	}
	workerFile := filepath.Join(dir, "worker.json")
	if err := os.WriteFile(workerFile, []byte(strings.Replace(text, `"host"`, `"worker"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := main("-expect", workerFile); code != conformance.ExitUsage || !strings.Contains(errOut, "the file is for the worker suite") {
		t.Errorf("a worker file: exit %d\n%s", code, errOut)
	}
	var version bytes.Buffer
	if code := Main([]string{"-version"}, &version, &version); code != conformance.ExitOK || !strings.Contains(version.String(), "host suite: ") ||
		!strings.Contains(version.String(), Suite().CatalogDigest) {
		t.Errorf("-version: %d %s", code, version.String())
	}
}
