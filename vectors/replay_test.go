package vectors_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/splashv5/conform/vectors"
	"github.com/splashv5/conform/vectors/replay"
	"github.com/splashv5/conform/vectors/vectorfmt"
)

// TestReplay replays every test of every vector file against the implementation.
//
// Spec: ENC-041, FP-013, ERR-007, ERR-010, ERR-011
func TestReplay(t *testing.T) {
	report := replay.Run(vectors.FS)
	for _, f := range report.Files {
		t.Run(f.Name, func(t *testing.T) {
			if f.Valid+f.Invalid == 0 {
				t.Fatalf("no tests replayed")
			}
			for _, fail := range f.Failures {
				t.Errorf("tcId %d (%s): %s", fail.TcID, fail.Comment, fail.Detail)
			}
			t.Logf("%d passed of %d (%d valid, %d invalid)", f.Passed, f.Valid+f.Invalid, f.Valid, f.Invalid)
		})
	}
	if report.Failed() == 0 && report.Passed() < replay.MinTotalTests {
		t.Errorf("only %d tests passed", report.Passed())
	}
}

// TestStructure checks counts, tcId uniqueness, flags, notes and requirement citations.
func TestStructure(t *testing.T) {
	for _, p := range replay.Verify(vectors.FS) {
		t.Error(p)
	}
}

// TestTypedLoaders loads every file through its typed loader (which rejects unknown members).
func TestTypedLoaders(t *testing.T) {
	loaders := map[string]func() error{
		vectorfmt.CanonicalJSONFile:   func() error { _, err := vectors.CanonicalJSON(); return err },
		vectorfmt.MessagesFile:        func() error { _, err := vectors.Messages(); return err },
		vectorfmt.FramesSealFile:      func() error { _, err := vectors.FramesSeal(); return err },
		vectorfmt.FramesOpenFile:      func() error { _, err := vectors.FramesOpen(); return err },
		vectorfmt.BootstrapFile:       func() error { _, err := vectors.Bootstrap(); return err },
		vectorfmt.ManifestsFile:       func() error { _, err := vectors.Manifests(); return err },
		vectorfmt.AttenuationFile:     func() error { _, err := vectors.Attenuation(); return err },
		vectorfmt.FingerprintsFile:    func() error { _, err := vectors.Fingerprints(); return err },
		vectorfmt.AuthorizerFile:      func() error { _, err := vectors.Authorizer(); return err },
		vectorfmt.JournalFile:         func() error { _, err := vectors.Journal(); return err },
		vectorfmt.StorageFile:         func() error { _, err := vectors.Storage(); return err },
		vectorfmt.HostScenariosFile:   func() error { _, err := vectors.HostScenarioFile(); return err },
		vectorfmt.LedgerFile:          func() error { _, err := vectors.LedgerVectors(); return err },
		vectorfmt.SecretsFile:         func() error { _, err := vectors.SecretVectors(); return err },
		vectorfmt.ScriptsFile:         func() error { _, err := vectors.ScriptVectors(); return err },
		vectorfmt.ContractSchemasFile: func() error { _, err := vectors.ContractSchemaVectors(); return err },
	}
	for _, name := range vectorfmt.FileNames {
		if err := loaders[name](); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	entries, err := vectors.FS.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(vectorfmt.FileNames) {
		t.Errorf("%d embedded files, want %d", len(entries), len(vectorfmt.FileNames))
	}
}

// TestSchemas checks that every file's JSON Schema exists, parses, and declares the file's
// schema name as its $id.
func TestSchemas(t *testing.T) {
	for _, name := range append([]string{"common.json"}, vectorfmt.FileNames...) {
		schemaName := vectorfmt.SchemaName(name)
		data, err := os.ReadFile(filepath.Join("schema", schemaName))
		if err != nil {
			t.Errorf("%s: %v", schemaName, err)
			continue
		}
		var doc struct {
			ID     string `json:"$id"`
			Schema string `json:"$schema"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Errorf("%s: %v", schemaName, err)
			continue
		}
		if doc.ID != schemaName || !strings.Contains(doc.Schema, "2020-12") {
			t.Errorf("%s: $id %q, $schema %q", schemaName, doc.ID, doc.Schema)
		}
	}
}

// TestReferenceAnchors checks that the outputs recorded by running the Rust reference
// (reference anchors A1 to A10 in docs/reference-anchors.md) appear verbatim in the vector
// files, which must flag such tests ReferenceAnchor, and in the anchor list itself. The values
// are written here independently of the generator.
//
// Spec: FRM-007, FRM-014, FP-008, FP-017, BOOT-001, JRN-001, JRN-002, STO-010, STO-012
func TestReferenceAnchors(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "reference-anchors.md"))
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string][]string{
		vectorfmt.FramesSealFile: {
			"c245f7bb012c51fb328dd620b870798900db933a7a747c22ef4bf04e2cc32bc2",
			"70209704d1ff86ee58dfad32edcb35e016cdcd8f164ee4ccaede013517f8d464",
			"c17e3e50b056e4000bf1dcc6f32ceec63297441803f6547538a6ee7c28477273",
			"148b5385a523fa46ecb687094ddc6aa2a52ee9965479863441d21496b5c2dc28",
			`{"domain":"splash-worker-auth-v5","protocol_version":5,"sender":"host","sequence":1,"session_id":"session-1","message":{"type":"open_session","manifest":{"protocol_version":5,"session_id":"session-1","grants":[{"tool":"text.echo","format":"text","max_calls":1,"max_input_bytes":16384,"max_output_bytes":65536,"max_compensations":0,"resources":[]}]}}}`,
		},
		vectorfmt.FingerprintsFile: {
			"b4586b43cee35f3490e1be033cf424c5d927417c4e5af7cd685123764a8c8be9",
			"74657874000000000000000668c3a96c6c6f",
			"47a67a884b85e9385cedfd6cb717c9ff4f361ac2fee1f2085096df0902e4936d",
			"5cc121e4a0ce2f79ae6b83397eb4f81a66bf12a9b1fe5836835a8118de24d578",
			"0863df8e1f3ba253e930752934309d977cdd44d9641dbfdfbed5f1267ea0995b",
			"6a736f6e0000000000000061",
		},
		vectorfmt.BootstrapFile: {
			"53504c50424f4f54010973657373696f6e2d31abababababababababababababababababababababababababababababababab",
		},
		vectorfmt.JournalFile: {
			`{"format_version":2,"scope":"tenant-release","records":[{"tool":"release.publish","operation_key":"release-42-add","input_fingerprint":"47a67a884b85e9385cedfd6cb717c9ff4f361ac2fee1f2085096df0902e4936d","state":{"state":"succeeded","payload":{"format":"json","value":{"total":42}}},"compensation":{"compensation_key":"cmp-undo-1","input_fingerprint":"5cc121e4a0ce2f79ae6b83397eb4f81a66bf12a9b1fe5836835a8118de24d578","grant_fingerprint":"b4586b43cee35f3490e1be033cf424c5d927417c4e5af7cd685123764a8c8be9","state":{"state":"pending"}}}]}`,
		},
		vectorfmt.StorageFile: {
			`{"format_version":1,"key_id":"storage-v1","revision":1,"payload":"aGVsbG8","auth_tag":"364a8f1bc9e6cdeca3b4612a14dc81029d96c050c62886c46140a43b7776eecd"}`,
		},
	}
	for name, want := range anchors {
		g, err := vectorfmt.LoadGeneric(vectors.FS, name)
		if err != nil {
			t.Fatal(err)
		}
		flagged := 0
		for _, grp := range g.TestGroups {
			for _, c := range grp.Tests {
				for _, f := range c.Flags {
					if f == "ReferenceAnchor" {
						flagged++
					}
				}
			}
		}
		if flagged == 0 {
			t.Errorf("%s: no test is flagged ReferenceAnchor", name)
		}
		data, err := vectors.FS.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range want {
			quoted, _ := json.Marshal(a)
			inner := bytes.Trim(quoted, `"`)
			if !bytes.Contains(data, inner) {
				t.Errorf("%s: reference anchor value %.60s… not found", name, a)
			}
			if !bytes.Contains(doc, []byte(a)) {
				t.Errorf("docs/reference-anchors.md: value %.60s… not listed", a)
			}
		}
	}
}

// TestSchemasDescribeEveryField checks that every member name used in the vector files is
// declared as a property in the JSON Schemas, so that a new field cannot be added to the
// files without describing it.
func TestSchemasDescribeEveryField(t *testing.T) {
	declared := map[string]bool{}
	entries, err := os.ReadDir("schema")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join("schema", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		collectProperties(doc, declared)
	}
	for _, name := range vectorfmt.FileNames {
		data, err := vectors.FS.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatal(err)
		}
		used := map[string]bool{}
		collectKeys(doc, used)
		for k := range used {
			if !declared[k] {
				t.Errorf("%s: member %q is not declared in any schema", name, k)
			}
		}
	}
}

// collectProperties gathers the keys of every "properties" object of a schema.
func collectProperties(v any, into map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if k == "properties" {
				if props, ok := val.(map[string]any); ok {
					for name := range props {
						into[name] = true
					}
				}
			}
			collectProperties(val, into)
		}
	case []any:
		for _, e := range x {
			collectProperties(e, into)
		}
	}
}

// collectKeys gathers member names of a vector file, skipping the free-form notes.
func collectKeys(v any, into map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			into[k] = true
			if k != "notes" {
				collectKeys(val, into)
			}
		}
	case []any:
		for _, e := range x {
			collectKeys(e, into)
		}
	}
}
