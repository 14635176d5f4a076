package fuzz

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/vectors"
	"github.com/splashv5/conform/vectors/vectorfmt"
)

// This file turns the golden vectors (package vectors) into seed inputs for the fuzzers, so
// that every fuzzer starts from the valid and invalid inputs the vectors pin down. Each
// helper returns the distinct inputs of one kind in vector order; a vector file that does
// not load fails the calling test or fuzzer.
//
// Tests flagged LargeInput (lines and messages at the 1 MiB limit) are seeds only when the
// corpus is replayed (go test). While fuzzing they are left out: each execution of such an
// input costs as much as thousands of ordinary ones, and the engine would spend its time
// minimizing mutants of them.

// largeInputFlag marks vector tests whose inputs are near the 1 MiB frame limit.
const largeInputFlag = "LargeInput"

// modalSeed is a seed input with the number mode of the vector group it comes from.
type modalSeed struct {
	data  []byte
	lossy bool
}

// manifestPairSeed is a manifest and a manifest attenuation to apply to it.
type manifestPairSeed struct {
	manifest, attenuation []byte
}

// fuzzing reports whether this test binary runs a fuzzer (-test.fuzz set) rather than
// replaying the seed corpus.
func fuzzing() bool {
	f := flag.Lookup("test.fuzz")
	return f != nil && f.Value.String() != ""
}

// skipCase reports whether the seeds of c are left out in this run.
func skipCase(c *vectorfmt.Case) bool {
	return fuzzing() && slices.Contains(c.Flags, largeInputFlag)
}

// The vector files, each decoded at most once per test binary and shared read-only by the
// seed helpers.
var (
	canonicalJSONVectors = sync.OnceValues(vectors.CanonicalJSON)
	messageVectors       = sync.OnceValues(vectors.Messages)
	framesSealVectors    = sync.OnceValues(vectors.FramesSeal)
	framesOpenVectors    = sync.OnceValues(vectors.FramesOpen)
	bootstrapVectors     = sync.OnceValues(vectors.Bootstrap)
	manifestVectors      = sync.OnceValues(vectors.Manifests)
	attenuationVectors   = sync.OnceValues(vectors.Attenuation)
	fingerprintVectors   = sync.OnceValues(vectors.Fingerprints)
)

// loadVectors loads one vector file or fails tb.
func loadVectors[T any](tb testing.TB, load func() (*T, error)) *T {
	tb.Helper()
	doc, err := load()
	if err != nil {
		tb.Fatalf("loading vectors: %v", err)
	}
	return doc
}

// textOrHex returns the bytes of a vector input given as text or as lowercase hex, and
// false when neither is present.
func textOrHex(tb testing.TB, text *vectorfmt.Text, hexText *string) ([]byte, bool) {
	tb.Helper()
	switch {
	case text != nil:
		return []byte(*text), true
	case hexText != nil:
		return decodeHex(tb, *hexText), true
	}
	return nil, false
}

func decodeHex(tb testing.TB, s string) []byte {
	tb.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		tb.Fatalf("vector hex %q: %v", s, err)
	}
	return b
}

// isLossy maps a vector group's mode name to the lossy flag of the fuzzers.
func isLossy(tb testing.TB, mode string) bool {
	tb.Helper()
	switch mode {
	case "preserve":
		return false
	case "lossy":
		return true
	}
	tb.Fatalf("vector group with unknown mode %q", mode)
	return false
}

// byteSeeds collects distinct byte-string seeds in first-seen order.
type byteSeeds struct {
	seen map[string]bool
	list [][]byte
}

func (s *byteSeeds) add(b []byte) {
	if s.seen == nil {
		s.seen = map[string]bool{}
	}
	if !s.seen[string(b)] {
		s.seen[string(b)] = true
		s.list = append(s.list, b)
	}
}

func (s *byteSeeds) addText(t *vectorfmt.Text) {
	if t != nil {
		s.add([]byte(*t))
	}
}

// modalSeeds collects distinct (input, mode) seeds in first-seen order.
type modalSeeds struct {
	seen map[modalKey]bool
	list []modalSeed
}

type modalKey struct {
	data  string
	lossy bool
}

func (s *modalSeeds) add(b []byte, lossy bool) {
	if s.seen == nil {
		s.seen = map[modalKey]bool{}
	}
	if k := (modalKey{string(b), lossy}); !s.seen[k] {
		s.seen[k] = true
		s.list = append(s.list, modalSeed{data: b, lossy: lossy})
	}
}

func (s *modalSeeds) addText(t *vectorfmt.Text, lossy bool) {
	if t != nil {
		s.add([]byte(*t), lossy)
	}
}

// addSeeds adds every input to the seed corpus of a fuzzer of one []byte argument.
func addSeeds(f *testing.F, seeds [][]byte) {
	for _, s := range seeds {
		f.Add(s)
	}
}

// addModalSeeds adds every input and its mode to the seed corpus of a fuzzer of the
// arguments (input []byte, lossy bool).
func addModalSeeds(f *testing.F, seeds []modalSeed) {
	for _, s := range seeds {
		f.Add(s.data, s.lossy)
	}
}

// canonicalJSONSeeds returns JSON documents from the vectors: every input and output of
// canonical_json.json (valid and invalid, including the non-UTF-8 inputs) and every tool
// payload envelope of fingerprints.json.
func canonicalJSONSeeds(tb testing.TB) [][]byte {
	tb.Helper()
	var out byteSeeds
	for _, g := range loadVectors(tb, canonicalJSONVectors).TestGroups {
		for i := range g.Tests {
			t := &g.Tests[i]
			if skipCase(&t.Case) {
				continue
			}
			if in, ok := textOrHex(tb, t.Input, t.InputHex); ok {
				out.add(in)
			}
			out.addText(t.Output)
		}
	}
	for _, g := range loadVectors(tb, fingerprintVectors).TestGroups {
		for i := range g.Tests {
			if t := &g.Tests[i]; !skipCase(&t.Case) {
				out.addText(t.Payload)
			}
		}
	}
	return out.list
}

// messageJSONSeeds returns worker messages from the vectors, each in the number mode of its
// group: every input and canonical output of messages.json, every message sealed in
// frames_seal.json and every message opened in frames_open.json.
func messageJSONSeeds(tb testing.TB) []modalSeed {
	tb.Helper()
	var out modalSeeds
	for _, g := range loadVectors(tb, messageVectors).TestGroups {
		lossy := isLossy(tb, g.Mode)
		for i := range g.Tests {
			t := &g.Tests[i]
			if skipCase(&t.Case) {
				continue
			}
			if in, ok := textOrHex(tb, t.Input, t.InputHex); ok {
				out.add(in, lossy)
			}
			out.addText(t.Output, lossy)
		}
	}
	for _, g := range loadVectors(tb, framesSealVectors).TestGroups {
		lossy := isLossy(tb, g.Mode)
		for i := range g.Tests {
			t := &g.Tests[i]
			if skipCase(&t.Case) {
				continue
			}
			for _, m := range t.Messages {
				out.add([]byte(m), lossy)
			}
		}
	}
	for _, g := range loadVectors(tb, framesOpenVectors).TestGroups {
		lossy := isLossy(tb, g.Mode)
		for i := range g.Tests {
			t := &g.Tests[i]
			if skipCase(&t.Case) {
				continue
			}
			for _, r := range t.Results {
				out.addText(r.Message, lossy)
			}
		}
	}
	return out.list
}

// frameLineSeeds returns frame lines from the vectors, each in the number mode of its
// group: every line opened in frames_open.json (accepted, tampered, replayed, wrongly keyed,
// not UTF-8) and every line sealed in frames_seal.json.
func frameLineSeeds(tb testing.TB) []modalSeed {
	tb.Helper()
	var out modalSeeds
	for _, g := range loadVectors(tb, framesOpenVectors).TestGroups {
		lossy := isLossy(tb, g.Mode)
		for i := range g.Tests {
			t := &g.Tests[i]
			if skipCase(&t.Case) {
				continue
			}
			for _, l := range t.Lines {
				out.add([]byte(l), lossy)
			}
			for _, h := range t.LinesHex {
				out.add(decodeHex(tb, h), lossy)
			}
		}
	}
	for _, g := range loadVectors(tb, framesSealVectors).TestGroups {
		lossy := isLossy(tb, g.Mode)
		for i := range g.Tests {
			t := &g.Tests[i]
			if skipCase(&t.Case) {
				continue
			}
			for _, r := range t.Results {
				out.addText(r.Line, lossy)
			}
		}
	}
	return out.list
}

// openTargetSeeds returns the vector frame lines that a fresh receiver of this package's
// fuzzers (key 32 x 0x07, session "session-1", Preserve mode; see receiver) opens as they
// are: the first line of every frames_open.json test that opens it, and every line of
// frames_seal.json, each with the receiving role and the sequence it must expect.
func openTargetSeeds(tb testing.TB) []openTarget {
	tb.Helper()
	vectorKeyHex := hex.EncodeToString(bytes.Repeat([]byte{7}, protocol.SessionKeyBytes))
	fits := func(keyHex, session, mode string) bool {
		return keyHex == vectorKeyHex && session == "session-1" && mode == "preserve"
	}
	var out []openTarget
	seen := map[string]bool{}
	add := func(line []byte, receiver protocol.Role, next uint64) {
		k := fmt.Sprintf("%d/%d/%s", receiver, next, line)
		if !seen[k] {
			seen[k] = true
			out = append(out, openTarget{line: line, receiver: receiver, next: next})
		}
	}
	for _, g := range loadVectors(tb, framesOpenVectors).TestGroups {
		if !fits(g.KeyHex, g.SessionID, g.Mode) {
			continue
		}
		role := parseRole(tb, g.Role)
		for i := range g.Tests {
			t := &g.Tests[i]
			if skipCase(&t.Case) || len(t.Lines) == 0 || len(t.Results) == 0 || t.Results[0].Error != "" {
				continue
			}
			next := uint64(1)
			if t.StartSequence != nil {
				next = *t.StartSequence
			}
			add([]byte(t.Lines[0]), role, next)
		}
	}
	for _, g := range loadVectors(tb, framesSealVectors).TestGroups {
		if !fits(g.KeyHex, g.SessionID, g.Mode) {
			continue
		}
		receiver := protocol.RoleWorker
		if parseRole(tb, g.Role) == protocol.RoleWorker {
			receiver = protocol.RoleHost
		}
		for i := range g.Tests {
			t := &g.Tests[i]
			if skipCase(&t.Case) {
				continue
			}
			for _, r := range t.Results {
				if r.Error == "" && r.Line != nil {
					add([]byte(*r.Line), receiver, r.Sequence)
				}
			}
		}
	}
	return out
}

func parseRole(tb testing.TB, role string) protocol.Role {
	tb.Helper()
	switch role {
	case "host":
		return protocol.RoleHost
	case "worker":
		return protocol.RoleWorker
	}
	tb.Fatalf("vector group with unknown role %q", role)
	return 0
}

// bootstrapSeeds returns byte streams from bootstrap.json: every reader input (valid,
// truncated, malformed, followed by a frame) and every preamble the writer produced.
func bootstrapSeeds(tb testing.TB) [][]byte {
	tb.Helper()
	var out byteSeeds
	for _, g := range loadVectors(tb, bootstrapVectors).TestGroups {
		for i := range g.Tests {
			t := &g.Tests[i]
			if skipCase(&t.Case) {
				continue
			}
			if t.InputHex != nil {
				out.add(decodeHex(tb, *t.InputHex))
			}
			if t.OutputHex != nil {
				out.add(decodeHex(tb, *t.OutputHex))
			}
		}
	}
	return out.list
}

// identityAttenuation is the manifest attenuation that keeps every grant as it is.
const identityAttenuation = `{"grants":{}}`

// manifestSeedPairs returns manifests and manifest attenuations from the vectors:
//   - every (manifest, attenuation) pair of attenuation.json's manifest tests;
//   - every grant test of attenuation.json as a one-grant manifest of session "session-1"
//     and a manifest attenuation that applies the grant attenuation to that grant's tool;
//   - every input and output of manifests.json and every grant of fingerprints.json (as a
//     one-grant manifest), each with the identity attenuation.
func manifestSeedPairs(tb testing.TB) []manifestPairSeed {
	tb.Helper()
	var out []manifestPairSeed
	seen := map[[2]string]bool{}
	add := func(m, a []byte) {
		if k := [2]string{string(m), string(a)}; !seen[k] {
			seen[k] = true
			out = append(out, manifestPairSeed{manifest: m, attenuation: a})
		}
	}
	addText := func(m *vectorfmt.Text) {
		if m != nil {
			add([]byte(*m), []byte(identityAttenuation))
		}
	}
	for _, g := range loadVectors(tb, attenuationVectors).TestGroups {
		for i := range g.Tests {
			t := &g.Tests[i]
			if skipCase(&t.Case) || t.Attenuation == nil {
				continue
			}
			switch {
			case t.Manifest != nil:
				add([]byte(*t.Manifest), []byte(*t.Attenuation))
			case t.Grant != nil:
				m := oneGrantManifest(*t.Grant)
				if tool, ok := grantTool(*t.Grant); ok {
					add(m, grantAttenuationFor(tool, *t.Attenuation))
				} else {
					add(m, []byte(identityAttenuation))
				}
			}
		}
	}
	for _, g := range loadVectors(tb, manifestVectors).TestGroups {
		for i := range g.Tests {
			if t := &g.Tests[i]; !skipCase(&t.Case) {
				addText(t.Input)
				addText(t.Output)
			}
		}
	}
	for _, g := range loadVectors(tb, fingerprintVectors).TestGroups {
		for i := range g.Tests {
			if t := &g.Tests[i]; t.Grant != nil && !skipCase(&t.Case) {
				add(oneGrantManifest(*t.Grant), []byte(identityAttenuation))
			}
		}
	}
	return out
}

// oneGrantManifest embeds the grant JSON text, byte for byte, as the only grant of a
// protocol 5 manifest of session "session-1".
func oneGrantManifest(grant vectorfmt.Text) []byte {
	return []byte(`{"protocol_version":5,"session_id":"session-1","grants":[` + string(grant) + `]}`)
}

// grantAttenuationFor embeds the grant attenuation JSON text, byte for byte, as the
// attenuation of tool in a manifest attenuation.
func grantAttenuationFor(tool string, attenuation vectorfmt.Text) []byte {
	return []byte(`{"grants":{` + jsonString(tool) + `:` + string(attenuation) + `}}`)
}

// jsonString returns s as a JSON string literal.
func jsonString(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}

// grantTool returns the tool named by a grant in object or positional-array form. The
// second result is false when the text is not such a grant.
func grantTool(grant vectorfmt.Text) (string, bool) {
	var obj struct {
		Tool *string `json:"tool"`
	}
	if json.Unmarshal([]byte(grant), &obj) == nil && obj.Tool != nil {
		return *obj.Tool, true
	}
	var arr []json.RawMessage
	if json.Unmarshal([]byte(grant), &arr) == nil && len(arr) > 0 {
		var tool string
		if json.Unmarshal(arr[0], &tool) == nil {
			return tool, true
		}
	}
	return "", false
}

// Fixed members of the journal seeds built from the vectors.
const (
	journalSeedScope = "tenant-release"
	// journalSeedFingerprint is reference anchor A7's input fingerprint, used where a vector
	// gives no fingerprint of its own.
	journalSeedFingerprint = "47a67a884b85e9385cedfd6cb717c9ff4f361ac2fee1f2085096df0902e4936d"
	// journalSeedGrant is reference anchor A5's grant fingerprint.
	journalSeedGrant = "b4586b43cee35f3490e1be033cf424c5d927417c4e5af7cd685123764a8c8be9"
)

// journalSeeds returns operation journals (format 2) built from vector material, since the
// vectors hold no journal of their own:
//   - one single-record journal per tool payload of fingerprints.json (valid and invalid),
//     as the payload of a succeeded operation whose input fingerprint is the vector's;
//   - one journal holding a record per valid payload (up to the 64-record limit);
//   - one single-record journal per operation status of the valid operation_result and
//     reconciled_operation messages of messages.json;
//   - one journal per compensation status of the valid compensation_result messages and per
//     grant fingerprint of fingerprints.json, as the compensation of a succeeded operation.
func journalSeeds(tb testing.TB) [][]byte {
	tb.Helper()
	var out byteSeeds
	var valid [][]byte
	journal := func(records ...[]byte) []byte {
		return []byte(`{"format_version":2,"scope":"` + journalSeedScope + `","records":[` +
			string(bytes.Join(records, []byte(","))) + `]}`)
	}
	record := func(key, fingerprint string, state, comp []byte) []byte {
		r := `{"tool":"math.add","operation_key":` + jsonString(key) +
			`,"input_fingerprint":"` + fingerprint + `","state":` + string(state)
		if comp != nil {
			r += `,"compensation":` + string(comp)
		}
		return []byte(r + "}")
	}
	compensation := func(grantFingerprint string, state []byte) []byte {
		return []byte(`{"compensation_key":"cmp-undo-1","input_fingerprint":"` + journalSeedFingerprint +
			`","grant_fingerprint":"` + grantFingerprint + `","state":` + string(state) + "}")
	}
	succeeded := []byte(`{"state":"succeeded","payload":{"format":"text","value":"done"}}`)

	for _, g := range loadVectors(tb, fingerprintVectors).TestGroups {
		for i := range g.Tests {
			t := &g.Tests[i]
			if skipCase(&t.Case) {
				continue
			}
			switch {
			case t.Payload != nil:
				fp := journalSeedFingerprint
				if t.Fingerprint != nil {
					fp = *t.Fingerprint
				}
				state := []byte(`{"state":"succeeded","payload":` + string(*t.Payload) + "}")
				out.add(journal(record("op-"+strconv.Itoa(t.TcID), fp, state, nil)))
				if t.Result == vectorfmt.Valid {
					valid = append(valid, record("op-"+strconv.Itoa(t.TcID), fp, state, nil))
				}
			case t.Grant != nil && t.Fingerprint != nil:
				pending := compensation(*t.Fingerprint, []byte(`{"state":"pending"}`))
				out.add(journal(record("op-1", journalSeedFingerprint, succeeded, pending)))
			}
		}
	}
	if len(valid) > protocol.MaxWorkerOperationRecords {
		valid = valid[:protocol.MaxWorkerOperationRecords]
	}
	out.add(journal(valid...))

	for _, g := range loadVectors(tb, messageVectors).TestGroups {
		for i := range g.Tests {
			t := &g.Tests[i]
			if t.Result != vectorfmt.Valid || t.Output == nil || skipCase(&t.Case) {
				continue
			}
			status, ok := resultStatus(*t.Output)
			if !ok {
				continue
			}
			switch t.MessageType {
			case string(protocol.TypeOperationResult), string(protocol.TypeReconciledOperation):
				out.add(journal(record("op-7", journalSeedFingerprint, status, nil)))
			case string(protocol.TypeCompensationResult):
				out.add(journal(record("op-7", journalSeedFingerprint, succeeded, compensation(journalSeedGrant, status))))
			}
		}
	}
	return out.list
}

// resultStatus returns, byte for byte, the "status" member of the "result" object of a
// canonical message, and false when there is none.
func resultStatus(message vectorfmt.Text) ([]byte, bool) {
	var m struct {
		Result struct {
			Status json.RawMessage `json:"status"`
		} `json:"result"`
	}
	if json.Unmarshal([]byte(message), &m) != nil || m.Result.Status == nil {
		return nil, false
	}
	return m.Result.Status, true
}

// The seed helpers find seeds of every kind, and the open targets open as they are (FuzzOpen
// requires it of its targets).
func TestVectorSeeds(t *testing.T) {
	targets := openTargetSeeds(t)
	for _, c := range []struct {
		kind string
		n    int
	}{
		{"canonical JSON", len(canonicalJSONSeeds(t))},
		{"message", len(messageJSONSeeds(t))},
		{"frame line", len(frameLineSeeds(t))},
		{"open target", len(targets)},
		{"bootstrap", len(bootstrapSeeds(t))},
		{"manifest pair", len(manifestSeedPairs(t))},
		{"journal", len(journalSeeds(t))},
	} {
		if c.n == 0 {
			t.Errorf("no %s seeds", c.kind)
		}
		t.Logf("%d %s seeds", c.n, c.kind)
	}
	for i, target := range targets {
		if _, err := receiver(target).Open(target.line); err != nil {
			t.Errorf("open target %d (%v receiving, sequence %d) does not open: %v\n%s",
				i, target.receiver, target.next, err, target.line)
		}
	}
}
