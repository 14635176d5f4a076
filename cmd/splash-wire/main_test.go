package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/splashv5/conform/vectors"
	"github.com/splashv5/conform/vectors/vectorfmt"
)

const key07 = "0707070707070707070707070707070707070707070707070707070707070707"

// Messages and tags of reference anchors A1 to A4 (docs/reference-anchors.md, recorded by
// running the Rust reference), written out here independently of the vector generator.
const (
	anchorOpen     = `{"type":"open_session","manifest":{"protocol_version":5,"session_id":"session-1","grants":[{"tool":"text.echo","format":"text","max_calls":1,"max_input_bytes":16384,"max_output_bytes":65536,"max_compensations":0,"resources":[]}]}}`
	anchorInvoke   = "{\"type\":\"invoke\",\"invocation\":{\"protocol_version\":5,\"session_id\":\"session-1\",\"request_id\":\"request-1\",\"tool\":\"text.echo\",\"payload\":{\"format\":\"text\",\"value\":\"hi \\\"there\\\"\\né\"}}}"
	anchorResult   = `{"type":"result","result":{"protocol_version":5,"session_id":"session-1","request_id":"request-1","payload":{"format":"text","value":"ok"}}}`
	anchorClose    = `{"type":"close_session","protocol_version":5,"session_id":"session-1"}`
	anchorDispatch = "{\"type\":\"dispatch_operation\",\"request\":{\"protocol_version\":5,\"session_id\":\"session-1\",\"request_id\":\"dispatch-1\",\"tool\":\"math.add\",\"operation_key\":\"op-7\",\"payload\":{\"format\":\"json\",\"value\":{\"\":true,\"B\":null,\"a\":[1e+16,100,-0.0,1.5e-7,18446744073709551615,-42],\"z\":0.1,\"é\":\"\\u0001\x7f/<>\"}}}}"
	tag1           = "c245f7bb012c51fb328dd620b870798900db933a7a747c22ef4bf04e2cc32bc2"
	tag2           = "70209704d1ff86ee58dfad32edcb35e016cdcd8f164ee4ccaede013517f8d464"
	tag3           = "c17e3e50b056e4000bf1dcc6f32ceec63297441803f6547538a6ee7c28477273"
	tag4           = "148b5385a523fa46ecb687094ddc6aa2a52ee9965479863441d21496b5c2dc28"
)

// exec runs the command lines through run and decodes one result per line.
func exec(t *testing.T, args []string, lines ...any) []map[string]any {
	t.Helper()
	var in bytes.Buffer
	for _, l := range lines {
		switch v := l.(type) {
		case string:
			in.WriteString(v)
		default:
			b, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			in.Write(b)
		}
		in.WriteByte('\n')
	}
	var out bytes.Buffer
	if code := run(&in, &out, args); code != 0 {
		t.Fatalf("exit %d: %s", code, out.String())
	}
	var results []map[string]any
	dec := json.NewDecoder(&out)
	for dec.More() {
		var r map[string]any
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		results = append(results, r)
	}
	if len(results) != len(lines) {
		t.Fatalf("%d results for %d commands", len(results), len(lines))
	}
	return results
}

func steps(t *testing.T, r map[string]any) []map[string]any {
	t.Helper()
	raw, ok := r["results"].([]any)
	if !ok {
		t.Fatalf("no results in %v", r)
	}
	var out []map[string]any
	for _, x := range raw {
		out = append(out, x.(map[string]any))
	}
	return out
}

func errKind(r map[string]any) string {
	e, ok := r["error"].(map[string]any)
	if !ok {
		return ""
	}
	return e["kind"].(string)
}

// TestSealReferenceAnchorTags seals the frames of reference anchors A1 to A4 in both number
// modes.
//
// Spec: FRM-007, FRM-014, FRM-015, FRM-021
func TestSealReferenceAnchorTags(t *testing.T) {
	for _, mode := range []string{"preserve", "lossy"} {
		host := exec(t, []string{"-mode", mode},
			map[string]any{"op": "seal", "key_hex": key07, "session_id": "session-1", "role": "host", "messages": []string{anchorOpen, anchorInvoke}},
			map[string]any{"op": "seal", "key_hex": key07, "session_id": "session-1", "role": "host", "messages": []string{anchorClose, anchorDispatch}},
			map[string]any{"op": "seal", "key_hex": key07, "session_id": "session-1", "role": "worker", "messages": []string{anchorResult}},
		)
		got := []string{
			steps(t, host[0])[0]["tag"].(string), steps(t, host[0])[1]["tag"].(string),
			steps(t, host[1])[1]["tag"].(string), steps(t, host[2])[0]["tag"].(string),
		}
		want := []string{tag1, tag2, tag4, tag3}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s: frame %d: tag %s, want %s", mode, i, got[i], want[i])
			}
		}
		first := steps(t, host[0])[0]
		if first["line"] != `{"sequence":1,"message":`+anchorOpen+`,"auth_tag":"`+tag1+`"}` {
			t.Errorf("%s: line %v", mode, first["line"])
		}
		if first["auth_payload"] != `{"domain":"splash-worker-auth-v5","protocol_version":5,"sender":"host","sequence":1,"session_id":"session-1","message":`+anchorOpen+`}` {
			t.Errorf("%s: auth_payload %v", mode, first["auth_payload"])
		}
		if seq := steps(t, host[1])[1]["sequence"]; seq != 2.0 {
			t.Errorf("%s: sequence %v", mode, seq)
		}
	}
}

// TestOpenSequenceAndErrors opens a valid frame, its replay, a reflected frame and a
// tampered one.
//
// Spec: FRM-025, FRM-026, FRM-028
func TestOpenSequenceAndErrors(t *testing.T) {
	line1 := `{"sequence":1,"message":` + anchorOpen + `,"auth_tag":"` + tag1 + `"}`
	tampered := strings.Replace(line1, `"max_calls":1`, `"max_calls":2`, 1)
	rs := exec(t, nil,
		map[string]any{"op": "open", "id": "a", "key_hex": key07, "session_id": "session-1", "role": "worker", "lines": []string{tampered, line1, line1}},
		map[string]any{"op": "open", "key_hex": key07, "session_id": "session-1", "role": "host", "lines": []string{line1}},
	)
	if rs[0]["id"] != "a" {
		t.Errorf("id not echoed: %v", rs[0])
	}
	s := steps(t, rs[0])
	if errKind(s[0]) != "InvalidAuthenticationTag" || s[1]["message"] != anchorOpen || s[1]["message_type"] != "open_session" || errKind(s[2]) != "UnexpectedSequence" {
		t.Errorf("worker opens: %v", s)
	}
	if k := errKind(steps(t, rs[1])[0]); k != "InvalidAuthenticationTag" {
		t.Errorf("reflected frame: %s", k)
	}
}

// TestDecodeAndCanonical covers decode, decode_message and canonical_json in both modes.
//
// Spec: FRM-003, FRM-004, ENC-024, ENC-028
func TestDecodeAndCanonical(t *testing.T) {
	line := `{"sequence":9,"message":` + anchorClose + `,"auth_tag":"` + strings.Repeat("0", 64) + `"}`
	rs := exec(t, nil,
		map[string]any{"op": "decode", "line": line},
		map[string]any{"op": "decode_message", "input": ` ["close_session",5,"session-1"] `},
		map[string]any{"op": "canonical_json", "input": `{"b":[1.50,-0],"a":1e2}`},
		map[string]any{"op": "canonical_json", "mode": "lossy", "input": `{"b":[1.50,-0],"a":1e2}`},
		map[string]any{"op": "canonical_json", "input": `[1e400]`, "mode": "lossy"},
	)
	if rs[0]["sequence"] != 9.0 || rs[0]["message"] != anchorClose || rs[0]["session_id"] != "session-1" {
		t.Errorf("decode: %v", rs[0])
	}
	if rs[1]["message"] != anchorClose {
		t.Errorf("decode_message: %v", rs[1])
	}
	if rs[2]["output"] != `{"a":1e+2,"b":[1.50,0]}` || rs[3]["output"] != `{"a":100.0,"b":[1.5,-0.0]}` {
		t.Errorf("canonical_json: %v / %v", rs[2], rs[3])
	}
	if errKind(rs[4]) != "Serialization" {
		t.Errorf("1e400 in lossy mode: %v", rs[4])
	}
}

// TestFingerprintsAndBootstrap checks the canonical bytes, fingerprints and bootstrap bytes of
// reference anchors A5, A6, A7 and A9.
//
// Spec: FP-002, FP-008, FP-017, BOOT-001, BOOT-012
func TestFingerprintsAndBootstrap(t *testing.T) {
	grant := `{"tool":"release.publish","format":"json","max_calls":1,"max_input_bytes":16384,"max_output_bytes":65536,"max_compensations":1,"resources":[{"kind":"file_root","id":"aa"},{"kind":"file_root","id":"zz"},{"kind":"network_origin","id":"release-api"},{"kind":"secret","id":"release-token"}]}`
	boot := "53504c50424f4f54010973657373696f6e2d31" + strings.Repeat("ab", 32)
	rs := exec(t, nil,
		map[string]any{"op": "canonical_input", "payload": `{"format":"text","value":"héllo"}`},
		map[string]any{"op": "canonical_input", "payload": `{"format":"json","value":{"b":[1,{"z":1,"a":"x"}],"a":null,"B":true}}`},
		`{"op":"grant_fingerprint","grant":`+grant+`}`,
		map[string]any{"op": "bootstrap_write", "session_id": "session-1", "key_hex": strings.Repeat("ab", 32)},
		map[string]any{"op": "bootstrap_read", "hex": boot + "7b7d0a"},
		map[string]any{"op": "canonical_input", "payload": `{"format":"json","value":5}`},
	)
	if rs[0]["canonical_hex"] != "74657874000000000000000668c3a96c6c6f" {
		t.Errorf("text canonical input: %v", rs[0])
	}
	if rs[1]["fingerprint"] != "47a67a884b85e9385cedfd6cb717c9ff4f361ac2fee1f2085096df0902e4936d" {
		t.Errorf("json fingerprint: %v", rs[1])
	}
	if rs[2]["fingerprint"] != "b4586b43cee35f3490e1be033cf424c5d927417c4e5af7cd685123764a8c8be9" {
		t.Errorf("grant fingerprint: %v", rs[2])
	}
	if rs[3]["hex"] != boot {
		t.Errorf("bootstrap_write: %v", rs[3])
	}
	if rs[4]["session_id"] != "session-1" || rs[4]["consumed"] != 51.0 {
		t.Errorf("bootstrap_read: %v", rs[4])
	}
	if _, leaked := rs[4]["key_hex"]; leaked {
		t.Errorf("bootstrap_read returned the key")
	}
	if errKind(rs[5]) != "InvalidJsonEnvelope" {
		t.Errorf("scalar payload: %v", rs[5])
	}
}

// TestManifestOperations covers validation and both attenuations.
//
// Spec: MAN-006, MAN-016, MAN-024
func TestManifestOperations(t *testing.T) {
	grant := `{"tool":"a.tool","format":"text","max_calls":3,"max_input_bytes":100,"max_output_bytes":200}`
	manifest := `{"protocol_version":5,"session_id":"s","grants":[` + grant + `,{"tool":"b.tool","format":"json","max_calls":1,"max_input_bytes":1,"max_output_bytes":1}]}`
	rs := exec(t, nil,
		map[string]any{"op": "manifest_validate", "manifest": manifest},
		map[string]any{"op": "manifest_attenuate", "manifest": manifest, "attenuation": `{"allowed_tools":["a.tool"],"grants":{"b.tool":{"max_calls":9}}}`},
		map[string]any{"op": "grant_attenuate", "grant": grant, "attenuation": `{"max_calls":4}`},
		map[string]any{"op": "grant_attenuate", "grant": grant, "attenuation": `{"max_calls":1}`},
		map[string]any{"op": "manifest_validate", "manifest": strings.Replace(manifest, `:5,`, `:4,`, 1)},
	)
	wantGrant := `{"tool":"a.tool","format":"text","max_calls":3,"max_input_bytes":100,"max_output_bytes":200,"max_compensations":0,"resources":[]}`
	if !strings.Contains(rs[0]["manifest"].(string), wantGrant) {
		t.Errorf("manifest_validate: %v", rs[0])
	}
	if rs[1]["manifest"] != `{"protocol_version":5,"session_id":"s","grants":[`+wantGrant+`]}` {
		t.Errorf("manifest_attenuate: %v", rs[1])
	}
	if errKind(rs[2]) != "AttenuationWidensLimits" || !strings.Contains(rs[3]["grant"].(string), `"max_calls":1,`) {
		t.Errorf("grant_attenuate: %v / %v", rs[2], rs[3])
	}
	if errKind(rs[4]) != "UnsupportedVersion" {
		t.Errorf("bad version: %v", rs[4])
	}
}

// TestNonPortablePolicy checks the default sending policy and the override flag.
//
// Spec: ENC-037, ERR-004
func TestNonPortablePolicy(t *testing.T) {
	msg := `{"type":"invoke","invocation":{"protocol_version":5,"session_id":"s","request_id":"r","tool":"t","payload":{"format":"json","value":[1.50]}}}`
	cmd := map[string]any{"op": "seal", "key_hex": key07, "session_id": "s", "role": "host", "messages": []string{msg}}
	if k := errKind(steps(t, exec(t, nil, cmd)[0])[0]); k != "NonPortableNumber" {
		t.Errorf("default policy: %s", k)
	}
	s := steps(t, exec(t, []string{"-allow-nonportable"}, cmd)[0])[0]
	if !strings.Contains(s["line"].(string), "[1.50]") {
		t.Errorf("allowed: %v", s)
	}
}

// TestSealAfterReceivedProof: frames the peer sent, opened first, can prove a text-keeping
// peer, after which a non-portable number seals; a received line that does not open fails the
// command.
//
// Spec: ENC-053
func TestSealAfterReceivedProof(t *testing.T) {
	invoke := `{"type":"invoke","invocation":{"protocol_version":5,"session_id":"s","request_id":"r","tool":"t","payload":{"format":"json","value":[0.10]}}}`
	result := `{"type":"result","result":{"protocol_version":5,"session_id":"s","request_id":"r","payload":{"format":"json","value":[0.10]}}}`
	sealed := steps(t, exec(t, []string{"-allow-nonportable"},
		map[string]any{"op": "seal", "key_hex": key07, "session_id": "s", "role": "host", "messages": []string{invoke}})[0])[0]
	line := sealed["line"].(string)
	cmd := map[string]any{"op": "seal", "key_hex": key07, "session_id": "s", "role": "worker", "messages": []string{result}}
	if k := errKind(steps(t, exec(t, nil, cmd)[0])[0]); k != "NonPortableNumber" {
		t.Errorf("without the received frame: %s", k)
	}
	cmd["received"] = []string{line}
	if s := steps(t, exec(t, nil, cmd)[0])[0]; !strings.Contains(fmt.Sprint(s["line"]), "[0.10]") {
		t.Errorf("after the proof: %v", s)
	}
	cmd["received"] = []string{strings.Replace(line, `"sequence":1`, `"sequence":2`, 1)}
	if k := errKind(exec(t, nil, cmd)[0]); k != "InvalidAuthenticationTag" {
		t.Errorf("a received frame that does not open: %s", k)
	}
}

// TestErrorsNeverEchoKeys checks that bad key material is not repeated in any output.
//
// Spec: ERR-014, ERR-015, FRM-040
func TestErrorsNeverEchoKeys(t *testing.T) {
	secretish := strings.Repeat("5a", 31)
	rs := exec(t, nil,
		map[string]any{"op": "seal", "key_hex": secretish, "session_id": "s", "role": "host", "messages": []string{}},
		map[string]any{"op": "seal", "key_hex": secretish + "zz", "session_id": "s", "role": "host", "messages": []string{}},
		map[string]any{"op": "bootstrap_write", "session_id": "Bad", "key_hex": strings.Repeat("5a", 32)},
		map[string]any{"op": "seal", "key_hex": strings.Repeat("00", 32), "session_id": "s", "role": "host", "messages": []string{}},
	)
	// The writer reports an invalid session id as the bare InvalidToken (BOOT-003).
	kinds := []string{"InvalidSessionKeyLength", "BadCommand", "InvalidToken", "WeakSessionKey"}
	for i, r := range rs {
		if errKind(r) != kinds[i] {
			t.Errorf("command %d: %v, want %s", i, r, kinds[i])
		}
		b, _ := json.Marshal(r)
		if strings.Contains(strings.ToLower(string(b)), "5a5a") {
			t.Errorf("command %d echoes key material: %s", i, b)
		}
	}
	if w, ok := rs[2]["error"].(map[string]any)["wrapped"]; ok {
		t.Errorf("wrapped %v; want the bare kind", w)
	}
}

// TestBadInput covers malformed commands, unknown ops and the line bound.
func TestBadInput(t *testing.T) {
	huge := `{"op":"canonical_json","input":"` + strings.Repeat("a", MaxCommandBytes) + `"}`
	rs := exec(t, nil, `not json`, `{"op":"nope"}`, `{"op":"open","bogus":1}`, huge, `{"op":"canonical_json","input":"[1]"}`)
	for i, want := range []string{"BadCommand", "BadCommand", "BadCommand", "CommandTooLarge"} {
		if errKind(rs[i]) != want {
			t.Errorf("command %d: %v, want %s", i, rs[i], want)
		}
	}
	if rs[4]["output"] != "[1]" {
		t.Errorf("processing did not resume after an over-long line: %v", rs[4])
	}
	var out bytes.Buffer
	if code := run(strings.NewReader(""), &out, []string{"-mode", "exact"}); code != 2 {
		t.Errorf("bad mode: exit %d", code)
	}
}

// TestLedgerOperations runs every ledger fingerprint and operation key vector through the
// oracle and compares its answers with the vectors' expected values, which the generator
// computes independently.
//
// Spec: RUN-181
func TestLedgerOperations(t *testing.T) {
	file, err := vectors.LedgerVectors()
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, g := range file.TestGroups {
		if g.Type != vectorfmt.LedgerInputFingerprintType && g.Type != vectorfmt.LedgerOperationKeyType {
			continue
		}
		for _, c := range g.Tests {
			input := []byte{}
			switch {
			case c.Input != nil:
				input = []byte(*c.Input)
			case c.InputHex != nil:
				if input, err = hex.DecodeString(*c.InputHex); err != nil {
					t.Fatal(err)
				}
			}
			cmd := map[string]any{"op": "ledger_input_fingerprint", "input_hex": hex.EncodeToString(input)}
			if g.Type == vectorfmt.LedgerOperationKeyType {
				cmd = map[string]any{"op": "ledger_operation_key", "input_hex": hex.EncodeToString(input),
					"plan_fingerprint": *c.PlanFingerprint, "plan_steps": c.PlanSteps, "step_id": *c.StepID,
					"tool": *c.Tool, "nonce_hex": *c.NonceHex}
			}
			r := exec(t, nil, cmd)[0]
			ran++
			switch {
			case c.Result == vectorfmt.Invalid:
				if errKind(r) != c.Error {
					t.Errorf("tcId %d (%s): error %v, want %s", c.TcID, c.Comment, r, c.Error)
				}
			case g.Type == vectorfmt.LedgerInputFingerprintType:
				if r["fingerprint"] != *c.Fingerprint {
					t.Errorf("tcId %d (%s): %v, want fingerprint %s", c.TcID, c.Comment, r, *c.Fingerprint)
				}
			default:
				if r["operation_key"] != *c.OperationKey || r["input_fingerprint"] != *c.Fingerprint {
					t.Errorf("tcId %d (%s): %v, want %s and %s", c.TcID, c.Comment, r, *c.OperationKey, *c.Fingerprint)
				}
			}
		}
	}
	if ran < 20 {
		t.Fatalf("only %d ledger vectors ran", ran)
	}
}

// TestNumberClass classifies tokens for sending and for proof. The expectations are written
// by hand: 1.4651248189898814e+246 is the shortest layout of its binary64 value (so a Lossy
// writer writes it and it proves nothing), yet the Lossy reader misreads it by one unit in the
// last place, so it is not portable either.
//
// Spec: ENC-053, ENC-034
func TestNumberClass(t *testing.T) {
	for _, c := range []struct {
		input, preserve, lossy string
		portable, preserveOnly bool
	}{
		{"1.4651248189898814e+246", "1.4651248189898814e+246", "1.4651248189898816e+246", false, false},
		{"0.10", "0.10", "0.1", false, true},
		{"0.1", "0.1", "0.1", true, false},
		{"1e2", "1e+2", "100.0", false, true},
		{"18446744073709551616", "18446744073709551616", "1.8446744073709552e+19", false, true},
		{"-0", "0", "-0.0", false, false},
		{"1e400", "1e+400", "", false, true},
	} {
		r := exec(t, nil, map[string]any{"op": "number_class", "input": c.input})[0]
		lossy, _ := r["lossy"].(string)
		if r["preserve"] != c.preserve || lossy != c.lossy || r["portable"] != c.portable || r["preserve_only"] != c.preserveOnly {
			t.Errorf("%s: %v", c.input, r)
		}
	}
	if k := errKind(exec(t, nil, map[string]any{"op": "number_class", "input": "[1]"})[0]); k != "BadCommand" {
		t.Errorf("an array: %s", k)
	}
}
