package worker

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/splashv5/conform/conformance"
)

// This file holds a minimal JSON Schema validator (the subset of draft 2020-12 that the two
// schemas in schema/ use) and the tests that validate produced reports against them.

// schemaValidator validates JSON values against one schema document.
type schemaValidator struct {
	root map[string]any
}

func loadSchema(t testing.TB, name string) *schemaValidator {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "schema", name))
	if err != nil {
		t.Fatal(err)
	}
	var root map[string]any
	if err := json.Unmarshal(data, &root); err != nil {
		t.Fatalf("%s is not JSON: %v", name, err)
	}
	return &schemaValidator{root: root}
}

// supportedKeywords are the keywords the validator implements; a schema using any other
// keyword is rejected, so a schema cannot silently demand more than the test checks.
var supportedKeywords = map[string]bool{
	"$schema": true, "$id": true, "$ref": true, "$defs": true, "title": true, "description": true,
	"type": true, "const": true, "enum": true, "required": true, "properties": true,
	"additionalProperties": true, "items": true, "minItems": true, "pattern": true, "minimum": true,
	"minLength": true, "maxProperties": true, "anyOf": true,
}

// validate returns every violation of value against schema, with JSON-pointer-like paths.
func (v *schemaValidator) validate(schema map[string]any, value any, path string) []string {
	var errs []string
	bad := func(format string, args ...any) { errs = append(errs, path+": "+fmt.Sprintf(format, args...)) }
	for k := range schema {
		if !supportedKeywords[k] {
			bad("schema uses unsupported keyword %q", k)
		}
	}
	if ref, ok := schema["$ref"].(string); ok {
		target, err := v.resolve(ref)
		if err != nil {
			bad("%v", err)
		} else {
			errs = append(errs, v.validate(target, value, path)...)
		}
	}
	if typ, ok := schema["type"].(string); ok && !hasType(value, typ) {
		bad("type %s expected, got %T", typ, value)
		return errs
	}
	if c, ok := schema["const"]; ok && !jsonEqual(c, value) {
		bad("must be %v, got %v", c, value)
	}
	if enum, ok := schema["enum"].([]any); ok {
		found := false
		for _, e := range enum {
			if jsonEqual(e, value) {
				found = true
			}
		}
		if !found {
			bad("must be one of %v, got %v", enum, value)
		}
	}
	if anyOf, ok := schema["anyOf"].([]any); ok {
		matched := false
		for _, s := range anyOf {
			if len(v.validate(s.(map[string]any), value, path)) == 0 {
				matched = true
				break
			}
		}
		if !matched {
			bad("matches none of the anyOf schemas: %v", conformance.Clip(fmt.Sprint(value), 200))
		}
	}
	switch x := value.(type) {
	case map[string]any:
		if req, ok := schema["required"].([]any); ok {
			for _, r := range req {
				if _, ok := x[r.(string)]; !ok {
					bad("missing required member %q", r)
				}
			}
		}
		props, _ := schema["properties"].(map[string]any)
		for k, val := range x {
			if ps, ok := props[k]; ok {
				errs = append(errs, v.validate(ps.(map[string]any), val, path+"/"+k)...)
				continue
			}
			switch ap := schema["additionalProperties"].(type) {
			case bool:
				if !ap {
					bad("unexpected member %q", k)
				}
			case map[string]any:
				errs = append(errs, v.validate(ap, val, path+"/"+k)...)
			}
		}
		if maxP, ok := schema["maxProperties"].(float64); ok && float64(len(x)) > maxP {
			bad("more than %v members", maxP)
		}
	case []any:
		if minI, ok := schema["minItems"].(float64); ok && float64(len(x)) < minI {
			bad("fewer than %v items", minI)
		}
		if items, ok := schema["items"].(map[string]any); ok {
			for i, e := range x {
				errs = append(errs, v.validate(items, e, fmt.Sprintf("%s/%d", path, i))...)
			}
		}
	case string:
		if p, ok := schema["pattern"].(string); ok && !regexp.MustCompile(p).MatchString(x) {
			bad("%q does not match %s", conformance.Clip(x, 80), p)
		}
		if minL, ok := schema["minLength"].(float64); ok && float64(len(x)) < minL {
			bad("shorter than %v", minL)
		}
	case json.Number:
		f, _ := x.Float64()
		if m, ok := schema["minimum"].(float64); ok && f < m {
			bad("below the minimum %v", m)
		}
	}
	return errs
}

func (v *schemaValidator) resolve(ref string) (map[string]any, error) {
	name, ok := strings.CutPrefix(ref, "#/$defs/")
	if !ok {
		return nil, fmt.Errorf("unsupported $ref %q", ref)
	}
	defs, _ := v.root["$defs"].(map[string]any)
	s, ok := defs[name].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("unknown $ref %q", ref)
	}
	return s, nil
}

func hasType(value any, typ string) bool {
	switch typ {
	case "object":
		_, ok := value.(map[string]any)
		return ok
	case "array":
		_, ok := value.([]any)
		return ok
	case "string":
		_, ok := value.(string)
		return ok
	case "boolean":
		_, ok := value.(bool)
		return ok
	case "null":
		return value == nil
	case "number":
		_, ok := value.(json.Number)
		return ok
	case "integer":
		n, ok := value.(json.Number)
		if !ok {
			return false
		}
		_, err := n.Int64()
		return err == nil
	}
	return false
}

// jsonEqual compares a schema literal (decoded without UseNumber) with a value (decoded with
// UseNumber).
func jsonEqual(schemaValue, value any) bool {
	if n, ok := value.(json.Number); ok {
		f, err := n.Float64()
		sf, ok2 := schemaValue.(float64)
		return err == nil && ok2 && f == sf
	}
	return fmt.Sprint(schemaValue) == fmt.Sprint(value)
}

func decodeJSON(t testing.TB, data []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("report is not JSON: %v", err)
	}
	return v
}

// xmlTree converts an XML document into the element-tree form junit.schema.json describes.
func xmlTree(t testing.TB, data []byte) any {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(data))
	type node struct {
		m        map[string]any
		children []any
		text     strings.Builder
	}
	var stack []*node
	var root any
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("JUnit report is not well-formed XML: %v", err)
		}
		switch x := tok.(type) {
		case xml.StartElement:
			attrs := map[string]any{}
			for _, a := range x.Attr {
				attrs[a.Name.Local] = a.Value
			}
			stack = append(stack, &node{m: map[string]any{"element": x.Name.Local, "attributes": attrs}})
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text.Write(x)
			}
		case xml.EndElement:
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if len(n.children) > 0 {
				n.m["children"] = n.children
			}
			if s := n.text.String(); strings.TrimSpace(s) != "" {
				n.m["text"] = s
			}
			if len(stack) == 0 {
				root = n.m
			} else {
				p := stack[len(stack)-1]
				p.children = append(p.children, n.m)
			}
		}
	}
	return root
}

// sampleReport builds a report with one result of every outcome, with text that needs
// escaping in both formats.
func sampleReport() *conformance.Report {
	results := []conformance.Result{
		{ID: "CNF-BOOT-01", Level: conformance.Must, Title: "passes", Requirements: []string{"BOOT-006"}, Outcome: conformance.Pass, Counted: true, Duration: 12 * time.Millisecond},
		{ID: "CNF-FRAME-01", Level: conformance.Must, Title: "fails <&>", Requirements: []string{"FRM-025", "WRK-091"}, Outcome: conformance.Fail, Counted: true,
			Duration: time.Second, Detail: "expected a; got b", Expected: "a \"quoted\"", Actual: "b\x00\x01 & <tag>",
			Stderr: "splash-worker: transport: bad\n\xff", Transcript: []string{"→ worker 1: {}", "← worker 1: ]]>"}},
		{ID: "CNF-CANCEL-01", Level: conformance.Must, Title: "crashes", Requirements: []string{"CAN-006"}, Needs: []Need{NeedCancel}, Outcome: conformance.Crash, Counted: true, Detail: "worker 1 was killed by signal segmentation fault"},
		{ID: "CNF-CANCEL-02", Level: conformance.Must, Title: "times out", Requirements: []string{"CAN-015"}, Needs: []Need{NeedCancel}, Outcome: conformance.Timeout, Counted: true, Detail: "time limit"},
		{ID: "CNF-DURABLE-14", Level: conformance.Must, Title: "skipped", Requirements: []string{"WRK-073"}, Needs: []Need{NeedDurable, NeedJournal}, Outcome: conformance.Skip, Detail: "the worker command does not offer journal"},
		{ID: "CNF-NUMBER-01", Level: conformance.Should, Title: "info", Requirements: []string{"ENC-039"}, Needs: []Need{NeedDurable}, Outcome: conformance.Info, Detail: "deviation"},
	}
	r := &conformance.Report{Suite: Suite(), Worker: []string{"worker", "--journal", "{journal}"}, Offered: []Need{NeedDurable, NeedCancel}, AreaDescriptions: areaDescriptions(),
		Started: time.Date(2025, 1, 2, 3, 4, 5, 6000, time.UTC), Duration: 1500 * time.Millisecond, Results: results}
	r.Summary = conformance.Summarize(results)
	return r
}

// TestReportsMatchSchemas writes a report holding every outcome in both formats and
// validates each against its schema.
func TestReportsMatchSchemas(t *testing.T) {
	validateReports(t, sampleReport())
}

// TestInteropReportMatchesSchemas validates a report shaped like one interop pair's: the
// interop suite and scenario IDs of the form CNF-IOP-AREA-NN.
func TestInteropReportMatchesSchemas(t *testing.T) {
	r := sampleReport()
	r.Suite = conformance.NewSuiteInfo("interop", []conformance.CatalogEntry{{ID: "CNF-IOP-ECHO-01", Level: conformance.Must, Requirements: []string{"IOP-002"}}})
	for i := range r.Results {
		r.Results[i].ID = strings.Replace(r.Results[i].ID, "CNF-", "CNF-IOP-", 1)
	}
	validateReports(t, r)
}

// validateReports checks both renderings of r against the schemas.
func validateReports(t *testing.T, r *conformance.Report) {
	t.Helper()
	var js bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	v := loadSchema(t, "report.schema.json")
	if errs := v.validate(v.root, decodeJSON(t, js.Bytes()), ""); len(errs) > 0 {
		t.Errorf("JSON report violates report.schema.json:\n  %s", strings.Join(errs, "\n  "))
	}
	var xmlOut bytes.Buffer
	if err := r.WriteJUnit(&xmlOut); err != nil {
		t.Fatal(err)
	}
	j := loadSchema(t, "junit.schema.json")
	if errs := j.validate(j.root, xmlTree(t, xmlOut.Bytes()), ""); len(errs) > 0 {
		t.Errorf("JUnit report violates junit.schema.json:\n  %s\n%s", strings.Join(errs, "\n  "), xmlOut.String())
	}
}

// TestJUnitCounts checks the attributes CI systems read: failures are counted FAIL results,
// errors are counted CRASH and TIMEOUT results, skipped are SKIP results, and INFO is neither.
func TestJUnitCounts(t *testing.T) {
	var out bytes.Buffer
	if err := sampleReport().WriteJUnit(&out); err != nil {
		t.Fatal(err)
	}
	var suites junitSuites
	if err := xml.Unmarshal(out.Bytes(), &suites); err != nil {
		t.Fatal(err)
	}
	if suites.Tests != 6 || suites.Failures != 1 || suites.Errors != 2 || suites.Skipped != 1 {
		t.Errorf("testsuites counts = tests %d failures %d errors %d skipped %d; want 6 1 2 1",
			suites.Tests, suites.Failures, suites.Errors, suites.Skipped)
	}
	if !strings.Contains(out.String(), "b\uFFFD\uFFFD &amp; &lt;tag&gt;") {
		t.Errorf("control characters and markup are not escaped:\n%s", out.String())
	}
}

// TestJSONReportSummary checks the summary and exit code of the JSON index.
func TestJSONReportSummary(t *testing.T) {
	var out bytes.Buffer
	r := sampleReport()
	if err := r.WriteJSON(&out); err != nil {
		t.Fatal(err)
	}
	var got struct {
		ExitCode int                 `json:"exit_code"`
		Summary  conformance.Summary `json:"summary"`
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := conformance.Summary{Total: 6, Passed: 1, Failed: 1, Crashed: 1, TimedOut: 1, Skipped: 1, Info: 1, Failing: 3}
	if got.Summary != want || got.ExitCode != 1 {
		t.Errorf("summary %+v exit %d; want %+v exit 1", got.Summary, got.ExitCode, want)
	}
	if line := r.ClosingLine(); line != "2 passed, 3 failed, 1 skipped" {
		t.Errorf("closing line %q", line)
	}
}

// TestValidatorRejects makes sure the validator can fail: a report with a bad outcome, an
// unknown member and a missing member must be rejected.
func TestValidatorRejects(t *testing.T) {
	v := loadSchema(t, "report.schema.json")
	var out bytes.Buffer
	if err := sampleReport().WriteJSON(&out); err != nil {
		t.Fatal(err)
	}
	doc := decodeJSON(t, out.Bytes()).(map[string]any)
	res := doc["results"].([]any)[0].(map[string]any)
	res["outcome"] = "MAYBE"
	res["surprise"] = true
	delete(doc, "summary")
	errs := v.validate(v.root, doc, "")
	joined := strings.Join(errs, "\n")
	for _, want := range []string{"/results/0/outcome", `unexpected member "surprise"`, `missing required member "summary"`} {
		if !strings.Contains(joined, want) {
			t.Errorf("validator did not report %q; it reported:\n%s", want, joined)
		}
	}
}
