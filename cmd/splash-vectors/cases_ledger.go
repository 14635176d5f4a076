package main

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/splashv5/conform/vectors/vectorfmt"
)

// The durable ledger case table (RUN-180 to RUN-182). Every expected canonical ledger is laid
// out here from the field order of RUN-180; fingerprints and keys inside expectations come
// from independent_ledger.go. New rows are appended at the end of ledgerCases only.

// ledgerPlan is the plan fingerprint of most ledger cases, and ledgerSteps its steps.
const ledgerPlan = "7d2c9f0e4b8a1536d0e7f2a94c3b5e8106a9d4c7e2f1b8350c6e9a7d2f4b1c08"

var ledgerSteps = []string{"fetch", "transform", "publish"}

// Fixed fingerprints for stored documents (decoding does not recompute them).
var (
	ledgerFP1   = strings.Repeat("0f", 32)
	ledgerFP2   = strings.Repeat("e3", 32)
	ledgerGrant = strings.Repeat("9c", 32)
)

// Limits of RUN-180 and RUN-181, written here independently of impl/host.
const (
	ledgerMaxBytes      = 65536
	ledgerMaxOperations = 64
	ledgerMaxInput      = 262144
	ledgerMaxNonce      = 128
)

// ledgerRecordRow is one Ledger.Record call of a record test.
type ledgerRecordRow struct {
	step, tool, key, input, err string
}

// ledgerRow is one test of ledger.json; kind is its group type.
type ledgerRow struct {
	meta
	kind string
	// input is the canonical operation input (fingerprint and key rows) or the stored
	// document (decode rows).
	input string
	// Key rows.
	plan        string
	steps       []string
	step, tool  string
	nonce       string
	err         string
	output      string // decode and record rows: the expected canonical ledger
	records     []ledgerRecordRow
	recordsPlan string
	// Compensation key rows: the original operation key, tenant scope and grant fingerprint
	// (plan, tool, input and nonce as for key rows).
	opKey, tenant, grant string
	// Plan fingerprint rows: the step sources, one per step ID in steps.
	sources []string
	// Compensation record rows: the stored ledger and the intents recorded into it.
	ledger string
	comps  []ledgerCompRow
	obs    []ledgerObsRow
}

// ledgerObsRow is one Ledger.ApplyVerifiedCompensation call of an observation test: the
// request and result messages, the expected state or the expected error.
type ledgerObsRow struct {
	req, res, state, err string
}

// ledgerCompRow is one Ledger.RecordCompensation call of a compensation record test.
type ledgerCompRow struct {
	opKey, tool, tenant, grant, ckey, input, err string
}

// ldoc lays out a ledger in the member order of RUN-180.
func ldoc(plan string, revision string, ops ...string) string {
	return `{"format_version":2,"revision":` + revision + `,"plan_fingerprint":"` + plan +
		`","operations":[` + strings.Join(ops, ",") + `]}`
}

// lop lays out one operation; comp is a compensation record or "" for null.
func lop(step, tool, key, fp, state, comp string) string {
	if comp == "" {
		comp = "null"
	}
	return `{"step_id":"` + step + `","tool":"` + tool + `","operation_key":"` + key +
		`","input_fingerprint":"` + fp + `","state":"` + state + `","compensation":` + comp + `}`
}

// lcomp lays out one compensation record.
func lcomp(key, fp, tenant, grant, state string) string {
	return `{"compensation_key":"` + key + `","input_fingerprint":"` + fp + `","tenant_scope":"` + tenant +
		`","grant_fingerprint":"` + grant + `","state":"` + state + `"}`
}

// canonicalInputOf is the canonical operation input layout: format || u64be(len) || body.
func canonicalInputOf(format, body string) string {
	return format + string(binary.BigEndian.AppendUint64(nil, uint64(len(body)))) + body
}

// nonceBytes returns n bytes 0, 1, 2, … (mod 256).
func nonceBytes(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	return string(b)
}

// opOne is the canonical single pending operation used by many decode rows.
var opOne = lop("fetch", "remote", "op-1", ledgerFP1, "pending", "")

// compOne is a valid compensation record.
var compOne = lcomp("cmp-1", ledgerFP2, "tenant-a", ledgerGrant, "pending")

// ledgerOps returns n distinct pending operations op-01 … op-NN on step fetch.
func ledgerOps(n int) []string {
	ops := make([]string, n)
	for i := range ops {
		ops[i] = lop("fetch", "remote", fmt.Sprintf("op-%02d", i+1), ledgerFP1, "pending", "")
	}
	return ops
}

// padLedger inserts spaces after the opening brace so that the document is exactly size bytes.
func padLedger(doc string, size int) string {
	return doc[:1] + strings.Repeat(" ", size-len(doc)) + doc[1:]
}

// ledgerEstimateDoc is a ledger that decodes (under 65,536 bytes) but whose encoding the
// reference refuses by its conservative size estimate: 64 succeeded operations, each with a
// compensation and long identifiers. It returns the document and the estimate
// 224 + Σ(256 + identifiers) + Σ(320 + compensation identifiers).
func ledgerEstimateDoc() (string, int) {
	estimate := 192 + 32
	ops := make([]string, ledgerMaxOperations)
	step, tool := strings.Repeat("s", 100), strings.Repeat("t", 100)
	tenant := strings.Repeat("a", 54)
	for i := range ops {
		key := "op-" + strings.Repeat("k", 95) + fmt.Sprintf("%02d", i)
		ckey := "cmp-" + strings.Repeat("c", 48) + fmt.Sprintf("%02d", i)
		ops[i] = lop(step, tool, key, ledgerFP1, "succeeded", lcomp(ckey, ledgerFP2, tenant, ledgerGrant, "pending"))
		estimate += 256 + len(step) + len(tool) + len(key) + 64
		estimate += 320 + len(ckey) + 64 + len(tenant) + 64
	}
	return ldoc(ledgerPlan, "64", ops...), estimate
}

func ledgerCases() []ledgerRow {
	var rows []ledgerRow
	fp := func(comment string, fl []string, input string) {
		rows = append(rows, ledgerRow{meta: meta{comment, fl, reqs("RUN-181")}, kind: vectorfmt.LedgerInputFingerprintType, input: input})
	}
	key := func(comment string, fl []string, plan string, steps []string, step, tool, input, nonce, err string) {
		rows = append(rows, ledgerRow{meta: meta{comment, fl, reqs("RUN-181", "RUN-183")}, kind: vectorfmt.LedgerOperationKeyType,
			plan: plan, steps: steps, step: step, tool: tool, input: input, nonce: nonce, err: err})
	}
	dec := func(comment string, fl []string, input, output, err string) {
		rows = append(rows, ledgerRow{meta: meta{comment, fl, reqs("RUN-180")}, kind: vectorfmt.LedgerDecodeType, input: input, output: output, err: err})
	}
	rec := func(comment string, fl []string, output string, records ...ledgerRecordRow) {
		rows = append(rows, ledgerRow{meta: meta{comment, fl, reqs("RUN-180", "RUN-181", "RUN-182")}, kind: vectorfmt.LedgerRecordType,
			recordsPlan: ledgerPlan, records: records, output: output})
	}

	jsonIn := canonicalInputOf("json", `{"a":1,"b":2}`)
	textHi := canonicalInputOf("text", "hi")
	unicodeText := canonicalInputOf("text", "héllo wörld ✓ 日本語 😀")
	binIn := "\x00\xff\xfe\x80splash\xc3"
	maxInput := strings.Repeat("a", ledgerMaxInput)
	overInput := strings.Repeat("a", ledgerMaxInput+1)
	controls := nonceBytes(32)

	// Input fingerprints (RUN-181).
	fp("empty input", flags("LedgerFingerprint", "Boundary"), "")
	fp("ASCII text", flags("LedgerFingerprint"), "hello")
	fp("canonical input of a json payload", flags("LedgerFingerprint"), jsonIn)
	fp("canonical input of a text payload", flags("LedgerFingerprint"), textHi)
	fp("non-ASCII canonical text input", flags("LedgerFingerprint", "Unicode"), unicodeText)
	fp("bytes that are not UTF-8", flags("LedgerFingerprint", "Binary"), binIn)
	fp("the 32 control bytes 0x00-0x1f", flags("LedgerFingerprint"), controls)
	fp("input of exactly 262,144 bytes", flags("LedgerFingerprint", "Boundary", "LargeInput"), maxInput)
	fp("a long run between short texts", flags("LedgerFingerprint", "LargeInput"), "prefix-"+strings.Repeat("z", 5000)+"-suffix")

	// Operation keys and the argument checks of preparing, in the reference's order (RUN-181).
	key("empty input, one-byte nonce", flags("OperationKey", "Boundary"), ledgerPlan, ledgerSteps, "fetch", "remote", "", "n", "")
	key("canonical json input, as prepared for a queued json operation", flags("OperationKey"), ledgerPlan, ledgerSteps, "publish", "remote.json", jsonIn, "run-1/op-1", "")
	key("the same input under another nonce gives another key", flags("OperationKey"), ledgerPlan, ledgerSteps, "publish", "remote.json", jsonIn, "run-1/op-2", "")
	key("the same input on another step gives another key", flags("OperationKey"), ledgerPlan, ledgerSteps, "fetch", "remote.json", jsonIn, "run-1/op-1", "")
	key("canonical text input with a 128-byte nonce", flags("OperationKey", "Boundary"), ledgerPlan, ledgerSteps, "transform", "text.echo", textHi, nonceBytes(ledgerMaxNonce), "")
	key("non-ASCII canonical text input", flags("OperationKey", "Unicode"), ledgerPlan, ledgerSteps, "fetch", "remote", unicodeText, "nonce-ü", "")
	key("input and nonce that are not UTF-8", flags("OperationKey", "Binary"), ledgerPlan, ledgerSteps, "fetch", "remote", binIn, "\xff\x00", "")
	key("input of exactly 262,144 bytes", flags("OperationKey", "Boundary", "LargeInput"), ledgerPlan, ledgerSteps, "fetch", "remote", maxInput, "n", "")
	key("128-byte tool name and step ID", flags("OperationKey", "Boundary", "Token"), ledgerPlan, []string{strings.Repeat("s", 128)}, strings.Repeat("s", 128), strings.Repeat("t", 128), textHi, "n", "")
	key("step not in the plan", flags("ArgumentCheck"), ledgerPlan, ledgerSteps, "deploy", "remote", textHi, "n", "UnknownStep")
	key("step not in the plan and a tool that is not a token: the step comes first", flags("ArgumentCheck", "CheckOrder"), ledgerPlan, ledgerSteps, "deploy", "Remote", textHi, "", "UnknownStep")
	key("tool with an upper-case letter", flags("ArgumentCheck", "Token"), ledgerPlan, ledgerSteps, "fetch", "Remote", textHi, "n", "InvalidTool")
	key("empty tool", flags("ArgumentCheck", "Token"), ledgerPlan, ledgerSteps, "fetch", "", textHi, "n", "InvalidTool")
	key("tool of 129 bytes", flags("ArgumentCheck", "Token", "Boundary"), ledgerPlan, ledgerSteps, "fetch", strings.Repeat("t", 129), textHi, "n", "InvalidTool")
	key("invalid tool and an input over the limit: the tool comes first", flags("ArgumentCheck", "CheckOrder", "LargeInput"), ledgerPlan, ledgerSteps, "fetch", "re mote", overInput, "n", "InvalidTool")
	key("input of 262,145 bytes", flags("ArgumentCheck", "Boundary", "LargeInput"), ledgerPlan, ledgerSteps, "fetch", "remote", overInput, "n", "InputTooLarge")
	key("input over the limit and an empty nonce: the input comes first", flags("ArgumentCheck", "CheckOrder", "LargeInput"), ledgerPlan, ledgerSteps, "fetch", "remote", overInput, "", "InputTooLarge")
	key("empty nonce", flags("ArgumentCheck", "Boundary"), ledgerPlan, ledgerSteps, "fetch", "remote", textHi, "", "EmptyOperationNonce")
	key("empty nonce with an input of exactly 262,144 bytes", flags("ArgumentCheck", "CheckOrder", "LargeInput"), ledgerPlan, ledgerSteps, "transform", "remote", maxInput, "", "EmptyOperationNonce")
	key("nonce of 129 bytes", flags("ArgumentCheck", "Boundary"), ledgerPlan, ledgerSteps, "publish", "remote", textHi, nonceBytes(ledgerMaxNonce+1), "OperationNonceTooLarge")

	// Decoding and the canonical encoding (RUN-180).
	empty := ldoc(ledgerPlan, "0")
	one := ldoc(ledgerPlan, "3", opOne)
	withComp := ldoc(ledgerPlan, "5", lop("fetch", "remote", "op-1", ledgerFP1, "succeeded", compOne))
	dec("empty ledger, canonical", flags("LedgerEncoding", "CanonicalForm"), empty, empty, "")
	dec("one pending operation, canonical", flags("LedgerEncoding", "CanonicalForm"), one, one, "")
	dec("succeeded operation with a compensation, canonical", flags("LedgerEncoding", "CanonicalForm"), withComp, withComp, "")
	dec("members in reverse order with whitespace", flags("LedgerEncoding", "Reencoding", "Whitespace"),
		"{ \"operations\" : [ {\"compensation\":null,\"state\":\"pending\",\"input_fingerprint\":\""+ledgerFP1+"\",\"operation_key\":\"op-1\",\"tool\":\"remote\",\"step_id\":\"fetch\"} ],\n \"plan_fingerprint\":\""+ledgerPlan+"\", \"revision\" : 3, \"format_version\" : 2 }\n",
		one, "")
	dec("missing compensation is null", flags("LedgerEncoding", "DefaultField"),
		ldoc(ledgerPlan, "3", `{"step_id":"fetch","tool":"remote","operation_key":"op-1","input_fingerprint":"`+ledgerFP1+`","state":"pending"}`), one, "")
	dec("positional array form", flags("LedgerEncoding", "PositionalArray"),
		`[2,3,"`+ledgerPlan+`",[["fetch","remote","op-1","`+ledgerFP1+`","pending",null]]]`, one, "")
	dec("positional compensation", flags("LedgerEncoding", "PositionalArray"),
		`[2,5,"`+ledgerPlan+`",[["fetch","remote","op-1","`+ledgerFP1+`","succeeded",["cmp-1","`+ledgerFP2+`","tenant-a","`+ledgerGrant+`","pending"]]]]`, withComp, "")
	allStates := ldoc(ledgerPlan, "12",
		lop("fetch", "remote", "op-a", ledgerFP1, "pending", ""),
		lop("fetch", "remote", "op-b", ledgerFP1, "running", ""),
		lop("transform", "remote", "op-c", ledgerFP2, "succeeded", ""),
		lop("transform", "remote.json", "op-d", ledgerFP2, "failed", ""),
		lop("publish", "remote.json", "op-e", ledgerFP1, "cancelled", ""))
	dec("every operation state, in insertion order", flags("LedgerEncoding", "CanonicalForm"), allStates, allStates, "")
	compStates := ldoc(ledgerPlan, "9",
		lop("fetch", "remote", "op-a", ledgerFP1, "succeeded", lcomp("cmp-a", ledgerFP2, "t1", ledgerGrant, "running")),
		lop("fetch", "remote", "op-b", ledgerFP1, "succeeded", lcomp("cmp-b", ledgerFP2, "t1", ledgerGrant, "succeeded")),
		lop("fetch", "remote", "op-c", ledgerFP1, "succeeded", lcomp("cmp-c", ledgerFP2, "t2", ledgerGrant, "failed")),
		lop("fetch", "remote", "op-d", ledgerFP1, "succeeded", lcomp("cmp-d", ledgerFP2, "t2", ledgerGrant, "cancelled")))
	dec("compensation states", flags("LedgerEncoding", "CanonicalForm"), compStates, compStates, "")
	maxRev := ldoc(ledgerPlan, "18446744073709551615")
	dec("largest revision", flags("LedgerEncoding", "Boundary", "IntegerField"), maxRev, maxRev, "")
	dec("escaped member names and values", flags("LedgerEncoding", "StringEscape"),
		`{"format_versio\u006e":2,"revision":3,"plan_fingerprint":"`+ledgerPlan+`","operations":[{"step_id":"f\u0065tch","tool":"remote","operation_key":"op\u002d1","input_fingerprint":"`+ledgerFP1+`","state":"pend\u0069ng","compensation":null}]}`,
		one, "")
	ops64 := ldoc(ledgerPlan, "64", ledgerOps(ledgerMaxOperations)...)
	dec("64 operations", flags("LedgerEncoding", "Boundary", "OperationLimit"), ops64, ops64, "")
	dec("document of exactly 65,536 bytes", flags("LedgerEncoding", "Boundary", "LargeInput", "Whitespace"), padLedger(empty, ledgerMaxBytes), empty, "")
	long := ldoc(ledgerPlan, "1", lop(strings.Repeat("s", 128), strings.Repeat("t", 128), "op-"+strings.Repeat("k", 125), ledgerFP1, "pending", ""))
	dec("128-byte step ID, tool and operation key", flags("LedgerEncoding", "Boundary", "Token"), long, long, "")
	cmpLike := ldoc(ledgerPlan, "2", lop("fetch", "remote", "cmp", ledgerFP1, "pending", ""), lop("fetch", "remote", "op-cmp-1", ledgerFP1, "pending", ""))
	dec("operation keys cmp and op-cmp-1 do not start with cmp-", flags("LedgerEncoding", "Token"), cmpLike, cmpLike, "")

	dec("document of 65,537 bytes", flags("LedgerEncoding", "Boundary", "LargeInput", "Whitespace"), padLedger(empty, ledgerMaxBytes+1), "", "TooLarge")
	dec("oversized document that is not JSON: the size comes first", flags("LedgerEncoding", "CheckOrder", "LargeInput"), strings.Repeat("x", ledgerMaxBytes+1), "", "TooLarge")
	dec("65 operations", flags("LedgerEncoding", "Boundary", "OperationLimit"), ldoc(ledgerPlan, "65", ledgerOps(ledgerMaxOperations+1)...), "", "TooManyOperations")
	dec("duplicate operation keys", flags("LedgerEncoding"), ldoc(ledgerPlan, "2", opOne, opOne), "", "DuplicateOperationKey")
	dec("unknown top-level member", flags("LedgerEncoding", "DenyUnknownFields"), strings.Replace(one, `"revision":3`, `"revision":3,"extra":1`, 1), "", "InvalidEncoding")
	dec("unknown operation member", flags("LedgerEncoding", "DenyUnknownFields"), strings.Replace(one, `"state":"pending"`, `"state":"pending","output":"x"`, 1), "", "InvalidEncoding")
	dec("unknown compensation member", flags("LedgerEncoding", "DenyUnknownFields"), strings.Replace(withComp, `"tenant_scope"`, `"grant":"x","tenant_scope"`, 1), "", "InvalidEncoding")
	dec("repeated top-level member", flags("LedgerEncoding", "DuplicateField"), strings.Replace(one, `"revision":3`, `"revision":3,"revision":3`, 1), "", "InvalidEncoding")
	dec("repeated operation member", flags("LedgerEncoding", "DuplicateField"), strings.Replace(one, `"tool":"remote"`, `"tool":"remote","tool":"remote"`, 1), "", "InvalidEncoding")
	dec("repeated compensation member", flags("LedgerEncoding", "DuplicateField"), strings.Replace(withComp, `"tenant_scope":"tenant-a"`, `"tenant_scope":"tenant-a","tenant_scope":"tenant-a"`, 1), "", "InvalidEncoding")
	dec("missing revision", flags("LedgerEncoding", "MissingField"), strings.Replace(one, `"revision":3,`, ``, 1), "", "InvalidEncoding")
	dec("missing step_id", flags("LedgerEncoding", "MissingField"), strings.Replace(one, `"step_id":"fetch",`, ``, 1), "", "InvalidEncoding")
	dec("missing compensation state", flags("LedgerEncoding", "MissingField"), strings.Replace(withComp, `,"state":"pending"}`, `}`, 1), "", "InvalidEncoding")
	dec("operations null", flags("LedgerEncoding", "NullField"), strings.Replace(empty, `[]`, `null`, 1), "", "InvalidEncoding")
	dec("unknown state", flags("LedgerEncoding", "UnknownVariant"), strings.Replace(one, `"pending"`, `"done"`, 1), "", "InvalidEncoding")
	dec("state spelled with a capital", flags("LedgerEncoding", "UnknownVariant"), strings.Replace(one, `"pending"`, `"Pending"`, 1), "", "InvalidEncoding")
	dec("unknown compensation state", flags("LedgerEncoding", "UnknownVariant"), strings.Replace(withComp, `"state":"pending"`, `"state":"compensated"`, 1), "", "InvalidEncoding")
	dec("format_version 1", flags("LedgerEncoding", "Version"), strings.Replace(one, `"format_version":2`, `"format_version":1`, 1), "", "UnsupportedVersion")
	dec("format_version 3", flags("LedgerEncoding", "Version"), strings.Replace(one, `"format_version":2`, `"format_version":3`, 1), "", "UnsupportedVersion")
	dec("format_version 0", flags("LedgerEncoding", "Version"), strings.Replace(one, `"format_version":2`, `"format_version":0`, 1), "", "UnsupportedVersion")
	dec("format_version 256 is not a u8", flags("LedgerEncoding", "Version", "IntegerField"), strings.Replace(one, `"format_version":2`, `"format_version":256`, 1), "", "InvalidEncoding")
	dec("format_version as a string", flags("LedgerEncoding", "Version", "IntegerField"), strings.Replace(one, `"format_version":2`, `"format_version":"2"`, 1), "", "InvalidEncoding")
	dec("format_version 2.0", flags("LedgerEncoding", "Version", "IntegerField"), strings.Replace(one, `"format_version":2`, `"format_version":2.0`, 1), "", "InvalidEncoding")
	dec("negative revision", flags("LedgerEncoding", "IntegerField"), strings.Replace(one, `"revision":3`, `"revision":-1`, 1), "", "InvalidEncoding")
	dec("revision beyond u64", flags("LedgerEncoding", "IntegerField", "Boundary"), strings.Replace(one, `"revision":3`, `"revision":18446744073709551616`, 1), "", "InvalidEncoding")
	dec("revision with an exponent", flags("LedgerEncoding", "IntegerField"), strings.Replace(one, `"revision":3`, `"revision":3e0`, 1), "", "InvalidEncoding")
	dec("plan fingerprint in upper-case hex", flags("LedgerEncoding", "FingerprintHex"), strings.Replace(one, ledgerPlan, strings.ToUpper(ledgerPlan), 1), "", "InvalidPlanFingerprint")
	dec("plan fingerprint of 63 digits", flags("LedgerEncoding", "FingerprintHex", "Boundary"), strings.Replace(one, ledgerPlan, ledgerPlan[:63], 1), "", "InvalidPlanFingerprint")
	dec("plan fingerprint of 65 digits", flags("LedgerEncoding", "FingerprintHex", "Boundary"), strings.Replace(one, ledgerPlan, ledgerPlan+"0", 1), "", "InvalidPlanFingerprint")
	dec("step ID with an upper-case letter", flags("LedgerEncoding", "Token"), strings.Replace(one, `"fetch"`, `"Fetch"`, 1), "", "InvalidStepId")
	dec("empty step ID", flags("LedgerEncoding", "Token"), strings.Replace(one, `"fetch"`, `""`, 1), "", "InvalidStepId")
	dec("step ID of 129 bytes", flags("LedgerEncoding", "Token", "Boundary"), strings.Replace(one, `"fetch"`, `"`+strings.Repeat("s", 129)+`"`, 1), "", "InvalidStepId")
	dec("tool with a space", flags("LedgerEncoding", "Token"), strings.Replace(one, `"remote"`, `"re mote"`, 1), "", "InvalidTool")
	dec("empty tool", flags("LedgerEncoding", "Token"), strings.Replace(one, `"remote"`, `""`, 1), "", "InvalidTool")
	dec("operation key starting with cmp-", flags("LedgerEncoding", "Token"), strings.Replace(one, `"op-1"`, `"cmp-1"`, 1), "", "InvalidOperationKey")
	dec("empty operation key", flags("LedgerEncoding", "Token"), strings.Replace(one, `"op-1"`, `""`, 1), "", "InvalidOperationKey")
	dec("operation key with an upper-case letter", flags("LedgerEncoding", "Token"), strings.Replace(one, `"op-1"`, `"OP-1"`, 1), "", "InvalidOperationKey")
	dec("input fingerprint of 63 digits", flags("LedgerEncoding", "FingerprintHex", "Boundary"), strings.Replace(one, ledgerFP1, ledgerFP1[:63], 1), "", "InvalidInputFingerprint")
	dec("input fingerprint with a non-hex letter", flags("LedgerEncoding", "FingerprintHex"), strings.Replace(one, ledgerFP1, "g"+ledgerFP1[1:], 1), "", "InvalidInputFingerprint")
	dec("compensation on a pending operation", flags("LedgerEncoding", "LedgerCompensation"), ldoc(ledgerPlan, "5", lop("fetch", "remote", "op-1", ledgerFP1, "pending", compOne)), "", "CompensationRequiresSucceededOperation")
	dec("compensation on a failed operation", flags("LedgerEncoding", "LedgerCompensation"), ldoc(ledgerPlan, "5", lop("fetch", "remote", "op-1", ledgerFP1, "failed", compOne)), "", "CompensationRequiresSucceededOperation")
	dec("compensation key without the cmp- prefix", flags("LedgerEncoding", "LedgerCompensation"), strings.Replace(withComp, `"cmp-1"`, `"op-9"`, 1), "", "InvalidCompensationKey")
	dec("compensation input fingerprint not hex", flags("LedgerEncoding", "LedgerCompensation", "FingerprintHex"), strings.Replace(withComp, ledgerFP2, strings.ToUpper(ledgerFP2), 1), "", "InvalidInputFingerprint")
	dec("compensation tenant scope that is not a token", flags("LedgerEncoding", "LedgerCompensation", "Token"), strings.Replace(withComp, `"tenant-a"`, `"Tenant"`, 1), "", "InvalidCompensationTenantScope")
	dec("compensation grant fingerprint too short", flags("LedgerEncoding", "LedgerCompensation", "FingerprintHex"), strings.Replace(withComp, ledgerGrant, ledgerGrant[:62], 1), "", "InvalidCompensationGrantFingerprint")
	dec("trailing characters", flags("LedgerEncoding", "Syntax"), one+"x", "", "InvalidEncoding")
	dec("truncated document", flags("LedgerEncoding", "Syntax"), one[:40], "", "InvalidEncoding")
	dec("unsupported version and a bad plan fingerprint: the version comes first", flags("LedgerEncoding", "CheckOrder"),
		strings.Replace(strings.Replace(one, `"format_version":2`, `"format_version":1`, 1), ledgerPlan, "AB", 1), "", "UnsupportedVersion")
	dec("bad plan fingerprint and 65 operations: the plan fingerprint comes first", flags("LedgerEncoding", "CheckOrder"),
		ldoc("AB", "65", ledgerOps(ledgerMaxOperations+1)...), "", "InvalidPlanFingerprint")
	dec("65 operations, the last with a bad step ID: the count comes first", flags("LedgerEncoding", "CheckOrder"),
		ldoc(ledgerPlan, "65", append(ledgerOps(ledgerMaxOperations), lop("Bad", "remote", "op-65", ledgerFP1, "pending", ""))...), "", "TooManyOperations")
	dec("bad step ID and bad tool: the step ID comes first", flags("LedgerEncoding", "CheckOrder"),
		ldoc(ledgerPlan, "1", lop("Fetch", "Remote", "cmp-1", "00", "pending", "")), "", "InvalidStepId")
	dec("bad tool and a cmp- key: the tool comes first", flags("LedgerEncoding", "CheckOrder"),
		ldoc(ledgerPlan, "1", lop("fetch", "Remote", "cmp-1", "00", "pending", "")), "", "InvalidTool")
	dec("repeated key whose second record has a bad tool: each record is checked before its key's uniqueness", flags("LedgerEncoding", "CheckOrder"),
		ldoc(ledgerPlan, "2", opOne, lop("fetch", "Remote", "op-1", ledgerFP1, "pending", "")), "", "InvalidTool")
	dec("repeated key before a record with a bad tool: the repetition comes first", flags("LedgerEncoding", "CheckOrder"),
		ldoc(ledgerPlan, "3", opOne, opOne, lop("fetch", "Remote", "op-3", ledgerFP1, "pending", "")), "", "DuplicateOperationKey")
	dec("running operation with a compensation whose key is bad: the operation state comes first", flags("LedgerEncoding", "CheckOrder", "LedgerCompensation"),
		ldoc(ledgerPlan, "5", lop("fetch", "remote", "op-1", ledgerFP1, "running", lcomp("op-9", "00", "T", "00", "pending"))), "", "CompensationRequiresSucceededOperation")
	dec("unknown member and an unsupported version: decoding comes first", flags("LedgerEncoding", "CheckOrder", "DenyUnknownFields"),
		strings.Replace(strings.Replace(one, `"format_version":2`, `"format_version":9`, 1), `"revision":3`, `"revision":3,"extra":1`, 1), "", "InvalidEncoding")
	estimateDoc, _ := ledgerEstimateDoc()
	dec("decodes, but the encoder's size estimate is over 65,536 bytes", flags("LedgerEncoding", "SizeEstimate", "OperationLimit"), estimateDoc, "", "TooLarge")

	// Recording into a new ledger and its encoding (RUN-180, RUN-182).
	fpOf := func(input string) string { return indLedgerInputFingerprint([]byte(input)) }
	r := func(step, tool, key, input, err string) ledgerRecordRow {
		return ledgerRecordRow{step, tool, key, input, err}
	}
	rec("one record with an empty input", flags("Record"),
		ldoc(ledgerPlan, "1", lop("fetch", "remote", "op-1", fpOf(""), "pending", "")),
		r("fetch", "remote", "op-1", "", ""))
	rec("three records keep insertion order", flags("Record", "Unicode"),
		ldoc(ledgerPlan, "3",
			lop("publish", "remote.json", "op-z", fpOf(jsonIn), "pending", ""),
			lop("fetch", "remote", "op-a", fpOf(unicodeText), "pending", ""),
			lop("transform", "text.echo", "op-m", fpOf(textHi), "pending", "")),
		r("publish", "remote.json", "op-z", jsonIn, ""), r("fetch", "remote", "op-a", unicodeText, ""), r("transform", "text.echo", "op-m", textHi, ""))
	rec("record of an input of exactly 262,144 bytes", flags("Record", "Boundary", "LargeInput"),
		ldoc(ledgerPlan, "1", lop("fetch", "remote", "op-1", fpOf(maxInput), "pending", "")),
		r("fetch", "remote", "op-1", maxInput, ""))
	afterOne := ldoc(ledgerPlan, "1", lop("fetch", "remote", "op-1", fpOf(textHi), "pending", ""))
	first := r("fetch", "remote", "op-1", textHi, "")
	rec("record of an input of 262,145 bytes changes nothing", flags("Record", "Boundary", "LargeInput"), afterOne,
		first, r("fetch", "remote", "op-2", overInput, "InputTooLarge"))
	rec("record of a repeated key changes nothing", flags("Record"), afterOne,
		first, r("transform", "remote", "op-1", "other", "DuplicateOperationKey"))
	rec("record with a bad step ID", flags("Record", "Token"), afterOne,
		first, r("Fetch", "remote", "op-2", textHi, "InvalidStepId"))
	rec("record with a bad tool", flags("Record", "Token"), afterOne,
		first, r("fetch", "Remote", "op-2", textHi, "InvalidTool"))
	rec("record with a cmp- operation key", flags("Record", "Token"), afterOne,
		first, r("fetch", "remote", "cmp-2", textHi, "InvalidOperationKey"))
	var fill []ledgerRecordRow
	var filled []string
	for i := 1; i <= ledgerMaxOperations; i++ {
		k := fmt.Sprintf("op-%02d", i)
		fill = append(fill, r("fetch", "remote", k, k, ""))
		filled = append(filled, lop("fetch", "remote", k, fpOf(k), "pending", ""))
	}
	rec("64 records, then a 65th is refused", flags("Record", "Boundary", "OperationLimit"), ldoc(ledgerPlan, "64", filled...),
		append(append([]ledgerRecordRow{}, fill...), r("fetch", "remote", "op-65", "x", "TooManyOperations"))...)
	rec("a 65th record with a bad step ID: the count comes first", flags("Record", "CheckOrder", "OperationLimit"), ldoc(ledgerPlan, "64", filled...),
		append(append([]ledgerRecordRow{}, fill...), r("Bad", "remote", "op-65", "x", "TooManyOperations"))...)
	rec("bad step ID and an input over the limit: the input comes first", flags("Record", "CheckOrder", "LargeInput"), afterOne,
		first, r("Fetch", "remote", "op-2", overInput, "InputTooLarge"))
	rec("bad step ID and bad tool: the step ID comes first", flags("Record", "CheckOrder"), afterOne,
		first, r("Fetch", "Remote", "op-2", textHi, "InvalidStepId"))
	rec("repeated key with a bad tool: the tool comes first", flags("Record", "CheckOrder"), afterOne,
		first, r("fetch", "Remote", "op-1", textHi, "InvalidTool"))
	rec("a refused record does not stop later ones", flags("Record"),
		ldoc(ledgerPlan, "2", lop("fetch", "remote", "op-1", fpOf(textHi), "pending", ""), lop("publish", "remote", "op-2", fpOf(""), "pending", "")),
		first, r("fetch", "remote", "cmp-x", textHi, "InvalidOperationKey"), r("publish", "remote", "op-2", "", ""))

	// Compensation keys (WFL-010): every expectation comes from indCompensationKey.
	ckey := func(comment string, fl []string, opKey, tool, tenant, grant, input, nonce string) {
		rows = append(rows, ledgerRow{meta: meta{comment, fl, reqs("WFL-010")}, kind: vectorfmt.LedgerCompensationKeyType,
			plan: ledgerPlan, opKey: opKey, tool: tool, tenant: tenant, grant: grant, input: input, nonce: nonce})
	}
	opJSON := indLedgerOperationKey(ledgerPlan, "publish", "remote.json", []byte(jsonIn), []byte("run-1/op-1"))
	ckey("inverse of a prepared json operation", flags("DerivedCompensationKey"), opJSON, "remote.json", "tenant-a", ledgerGrant, jsonIn, "cmp-nonce-1")
	ckey("the same intent under another nonce gives another key", flags("DerivedCompensationKey"), opJSON, "remote.json", "tenant-a", ledgerGrant, jsonIn, "cmp-nonce-2")
	ckey("the same intent for another tenant scope gives another key", flags("DerivedCompensationKey"), opJSON, "remote.json", "tenant-b", ledgerGrant, jsonIn, "cmp-nonce-1")
	ckey("the same intent under another grant gives another key", flags("DerivedCompensationKey"), opJSON, "remote.json", "tenant-a", ledgerFP2, jsonIn, "cmp-nonce-1")
	ckey("the same intent for another operation gives another key", flags("DerivedCompensationKey"), "op-1", "remote.json", "tenant-a", ledgerGrant, jsonIn, "cmp-nonce-1")
	ckey("empty inverse input, one-byte nonce", flags("DerivedCompensationKey", "Boundary"), "op-1", "remote", "tenant-a", ledgerGrant, "", "n")
	ckey("non-ASCII canonical text input and nonce", flags("DerivedCompensationKey", "Unicode"), "op-1", "text.echo", "tenant-a", ledgerGrant, unicodeText, "nonce-ü✓")
	ckey("input and nonce that are not UTF-8", flags("DerivedCompensationKey", "Binary"), "op-1", "remote", "tenant-a", ledgerGrant, binIn, "\xff\x00")
	ckey("input of exactly 262,144 bytes", flags("DerivedCompensationKey", "Boundary", "LargeInput"), "op-1", "remote", "tenant-a", ledgerGrant, maxInput, "n")
	ckey("a long run between short texts", flags("DerivedCompensationKey", "LargeInput"), "op-1", "remote", "tenant-a", ledgerGrant, "prefix-"+strings.Repeat("z", 5000)+"-suffix", "n")
	ckey("128-byte nonce", flags("DerivedCompensationKey", "Boundary"), "op-1", "remote", "tenant-a", ledgerGrant, textHi, nonceBytes(ledgerMaxNonce))
	ckey("128-byte operation key, tool and tenant scope", flags("DerivedCompensationKey", "Boundary", "Token"), "op-"+strings.Repeat("k", 125), strings.Repeat("t", 128), strings.Repeat("a", 128), ledgerGrant, textHi, "n")
	ckey("operation key ab and tool c", flags("DerivedCompensationKey", "LengthPrefix"), "ab", "c", "tenant-a", ledgerGrant, textHi, "n")
	ckey("operation key a and tool bc: the length prefixes separate the fields", flags("DerivedCompensationKey", "LengthPrefix"), "a", "bc", "tenant-a", ledgerGrant, textHi, "n")

	// Recording compensation intents into a stored ledger (WFL-011). The stored ledger holds
	// one operation in every state the rules tell apart.
	cgrant := ledgerGrant
	cPlain := indCompensationKey(ledgerPlan, "op-s", "remote", "tenant-a", cgrant, []byte(textHi), []byte("n1"))
	cOther := indCompensationKey(ledgerPlan, "op-t", "remote.json", "tenant-b", ledgerFP2, []byte(jsonIn), []byte("n2"))
	compC := lcomp("cmp-c", ledgerFP2, "tenant-a", cgrant, "pending")
	storedOps := func(s, t string) []string {
		return []string{
			lop("fetch", "remote", "op-s", ledgerFP1, "succeeded", s),
			lop("fetch", "remote", "op-p", ledgerFP1, "pending", ""),
			lop("transform", "remote", "op-r", ledgerFP1, "running", ""),
			lop("transform", "remote", "op-f", ledgerFP1, "failed", ""),
			lop("publish", "remote.json", "op-t", ledgerFP1, "succeeded", t),
			lop("publish", "remote", "op-c", ledgerFP1, "succeeded", compC),
		}
	}
	stored := func(rev string, s, t string) string { return ldoc(ledgerPlan, rev, storedOps(s, t)...) }
	base := stored("6", "", "")
	crec := func(comment string, fl []string, ledger, output string, comps ...ledgerCompRow) {
		rows = append(rows, ledgerRow{meta: meta{comment, fl, reqs("WFL-011")}, kind: vectorfmt.LedgerCompensationRecordType,
			ledger: ledger, output: output, comps: comps})
	}
	c := func(opKey, tool, tenant, grant, key, input, err string) ledgerCompRow {
		return ledgerCompRow{opKey, tool, tenant, grant, key, input, err}
	}
	okS := c("op-s", "remote", "tenant-a", cgrant, cPlain, textHi, "")
	afterS := stored("7", lcomp(cPlain, fpOf(textHi), "tenant-a", cgrant, "pending"), "")
	refused := func(comment string, fl []string, r ledgerCompRow) {
		crec(comment, append(flags("CompensationRecord"), fl...), base, base, r)
	}
	crec("one intent: the revision increments and only the input's fingerprint is stored", flags("CompensationRecord"), base, afterS, okS)
	crec("intent with an empty inverse input", flags("CompensationRecord", "Boundary"), base,
		stored("7", lcomp("cmp-e", fpOf(""), "tenant-a", cgrant, "pending"), ""), c("op-s", "remote", "tenant-a", cgrant, "cmp-e", "", ""))
	crec("intent with an inverse input of exactly 262,144 bytes", flags("CompensationRecord", "Boundary", "LargeInput"), base,
		stored("7", lcomp("cmp-l", fpOf(maxInput), "tenant-a", cgrant, "pending"), ""), c("op-s", "remote", "tenant-a", cgrant, "cmp-l", maxInput, ""))
	crec("two intents on two operations, each on its own operation", flags("CompensationRecord", "Unicode"), base,
		stored("8", lcomp(cPlain, fpOf(textHi), "tenant-a", cgrant, "pending"), lcomp(cOther, fpOf(unicodeText), "tenant-b", ledgerFP2, "pending")),
		c("op-t", "remote.json", "tenant-b", ledgerFP2, cOther, unicodeText, ""), okS)
	crec("128-byte compensation key and tenant scope", flags("CompensationRecord", "Boundary", "Token"), base,
		stored("7", lcomp("cmp-"+strings.Repeat("c", 124), fpOf(textHi), strings.Repeat("a", 128), cgrant, "pending"), ""),
		c("op-s", "remote", strings.Repeat("a", 128), cgrant, "cmp-"+strings.Repeat("c", 124), textHi, ""))
	crec("the last revision before exhaustion", flags("CompensationRecord", "Boundary", "IntegerField"), stored("18446744073709551614", "", ""),
		stored("18446744073709551615", lcomp(cPlain, fpOf(textHi), "tenant-a", cgrant, "pending"), ""), okS)
	crec("a second intent for the same operation is refused, even under another key", flags("CompensationRecord"), base, afterS,
		okS, c("op-s", "remote", "tenant-a", cgrant, "cmp-second", "other", "CompensationAlreadyRecorded"))
	crec("a refused intent does not stop a later one", flags("CompensationRecord"), base, afterS,
		c("op-x", "remote", "tenant-a", cgrant, cPlain, textHi, "UnknownOperation"), okS)

	refused("unknown operation", nil, c("op-x", "remote", "tenant-a", cgrant, cPlain, textHi, "UnknownOperation"))
	refused("pending operation", nil, c("op-p", "remote", "tenant-a", cgrant, cPlain, textHi, "CompensationRequiresSucceededOperation"))
	refused("running operation", nil, c("op-r", "remote", "tenant-a", cgrant, cPlain, textHi, "CompensationRequiresSucceededOperation"))
	refused("failed operation", nil, c("op-f", "remote", "tenant-a", cgrant, cPlain, textHi, "CompensationRequiresSucceededOperation"))
	refused("the policy's tool is not the operation's", nil, c("op-s", "remote.json", "tenant-a", cgrant, cPlain, textHi, "CompensationPolicyMismatch"))
	refused("operation that already has an intent", nil, c("op-c", "remote", "tenant-a", cgrant, cPlain, textHi, "CompensationAlreadyRecorded"))
	refused("operation that already has an intent, under the same key", nil, c("op-c", "remote", "tenant-a", cgrant, "cmp-c", textHi, "CompensationAlreadyRecorded"))
	refused("compensation key with the op- prefix", flags("Token"), c("op-s", "remote", "tenant-a", cgrant, "op-9", textHi, "InvalidCompensationKey"))
	refused("empty compensation key", flags("Token"), c("op-s", "remote", "tenant-a", cgrant, "", textHi, "InvalidCompensationKey"))
	refused("compensation key with an upper-case letter", flags("Token"), c("op-s", "remote", "tenant-a", cgrant, "cmp-A", textHi, "InvalidCompensationKey"))
	refused("compensation key of 129 bytes", flags("Token", "Boundary"), c("op-s", "remote", "tenant-a", cgrant, "cmp-"+strings.Repeat("c", 125), textHi, "InvalidCompensationKey"))
	refused("tool that is not a token", flags("Token"), c("op-s", "Remote", "tenant-a", cgrant, cPlain, textHi, "InvalidTool"))
	refused("tenant scope with an upper-case letter", flags("Token"), c("op-s", "remote", "Tenant-a", cgrant, cPlain, textHi, "InvalidCompensationTenantScope"))
	refused("empty tenant scope", flags("Token"), c("op-s", "remote", "", cgrant, cPlain, textHi, "InvalidCompensationTenantScope"))
	refused("tenant scope of 129 bytes", flags("Token", "Boundary"), c("op-s", "remote", strings.Repeat("a", 129), cgrant, cPlain, textHi, "InvalidCompensationTenantScope"))
	refused("grant fingerprint in upper-case hex", flags("FingerprintHex"), c("op-s", "remote", "tenant-a", strings.ToUpper(cgrant), cPlain, textHi, "InvalidCompensationGrantFingerprint"))
	refused("grant fingerprint of 63 digits", flags("FingerprintHex", "Boundary"), c("op-s", "remote", "tenant-a", cgrant[:63], cPlain, textHi, "InvalidCompensationGrantFingerprint"))
	refused("inverse input of 262,145 bytes", flags("Boundary", "LargeInput"), c("op-s", "remote", "tenant-a", cgrant, cPlain, overInput, "InputTooLarge"))
	crec("ledger at the last revision", flags("CompensationRecord", "Boundary", "IntegerField"), stored("18446744073709551615", "", ""), stored("18446744073709551615", "", ""),
		c("op-s", "remote", "tenant-a", cgrant, cPlain, textHi, "RevisionExhausted"))

	// Two broken rules: the earlier check names the refusal.
	order := func(comment string, r ledgerCompRow) { refused(comment, flags("CheckOrder"), r) }
	order("bad tool and bad tenant scope: the tool comes first", c("op-s", "Remote", "Tenant", cgrant, cPlain, textHi, "InvalidTool"))
	order("bad tenant scope and bad grant fingerprint: the tenant scope comes first", c("op-s", "remote", "Tenant", "AB", cPlain, textHi, "InvalidCompensationTenantScope"))
	order("bad grant fingerprint and an input over the limit: the fingerprint comes first", c("op-s", "remote", "tenant-a", "AB", cPlain, overInput, "InvalidCompensationGrantFingerprint"))
	order("input over the limit for an unknown operation: the input size comes first", c("op-x", "remote", "tenant-a", cgrant, cPlain, overInput, "InputTooLarge"))
	order("bad tenant scope for an unknown operation: the tenant scope comes first", c("op-x", "remote", "", cgrant, cPlain, textHi, "InvalidCompensationTenantScope"))
	order("unknown operation and a bad compensation key: the operation comes first", c("op-x", "remote", "tenant-a", cgrant, "op-9", textHi, "UnknownOperation"))
	order("pending operation under another tool: the state comes first", c("op-p", "remote.json", "tenant-a", cgrant, cPlain, textHi, "CompensationRequiresSucceededOperation"))
	order("already recorded under another tool: the tool comes first", c("op-c", "remote.json", "tenant-a", cgrant, cPlain, textHi, "CompensationPolicyMismatch"))
	order("already recorded and a bad compensation key: the existing intent comes first", c("op-c", "remote", "tenant-a", cgrant, "op-9", textHi, "CompensationAlreadyRecorded"))
	order("policy mismatch and a bad compensation key: the tool comes first", c("op-s", "remote.json", "tenant-a", cgrant, "bad key", textHi, "CompensationPolicyMismatch"))
	crec("exhausted revision and a bad compensation key: the key comes first", flags("CompensationRecord", "CheckOrder", "IntegerField"),
		stored("18446744073709551615", "", ""), stored("18446744073709551615", "", ""), c("op-s", "remote", "tenant-a", cgrant, "op-9", textHi, "InvalidCompensationKey"))

	// Compensation observations (WFL-012) on a ledger whose op-s carries the intent cmp-k for
	// the canonical text input "undo".
	undoFP := fpOf(canonicalInputOf("text", "undo"))
	obsLedger := func(rev, state string) string {
		return ldoc(ledgerPlan, rev,
			lop("fetch", "remote", "op-s", ledgerFP1, "succeeded", lcomp("cmp-k", undoFP, "tenant-a", cgrant, state)),
			lop("publish", "remote", "op-t", ledgerFP1, "succeeded", ""))
	}
	type binding struct{ req, op, tool, ckey, tenant, grant string }
	bind := binding{"compensate-1", "op-s", "remote", "cmp-k", "tenant-a", cgrant}
	header := func(b binding) string {
		return `"protocol_version":5,"session_id":"session-1","request_id":"` + b.req + `","tool":"` + b.tool + `","operation_key":"` + b.op +
			`","compensation_key":"` + b.ckey + `","tenant_scope":"` + b.tenant + `","grant_fingerprint":"` + b.grant + `"`
	}
	reqMsg := func(b binding, text string) string {
		return `{"type":"compensate_operation","request":{` + header(b) + `,"payload":{"format":"text","value":"` + text + `"}}}`
	}
	resMsg := func(b binding, status string) string {
		return `{"type":"compensation_result","result":{` + header(b) + `,"status":` + status + `}}`
	}
	running, succeeded, failed := `{"state":"running"}`, `{"state":"succeeded","payload":{"format":"text","value":"undone"}}`, `{"state":"failed","message":"undo failed"}`
	ob := func(b binding, status, state, err string) ledgerObsRow {
		return ledgerObsRow{reqMsg(b, "undo"), resMsg(b, status), state, err}
	}
	orec := func(comment string, fl []string, output string, obs ...ledgerObsRow) {
		rows = append(rows, ledgerRow{meta: meta{comment, append(flags("CompensationObservation"), fl...), reqs("WFL-012")},
			kind: vectorfmt.LedgerCompensationObservationType, ledger: obsLedger("7", "pending"), output: output, obs: obs})
	}
	with := func(f func(*binding)) binding { b := bind; f(&b); return b }
	base7 := obsLedger("7", "pending")
	orec("running: the compensation state changes and the revision increments", nil, obsLedger("8", "running"), ob(bind, running, "running", ""))
	orec("running, then succeeded", nil, obsLedger("9", "succeeded"), ob(bind, running, "running", ""), ob(bind, succeeded, "succeeded", ""))
	orec("succeeded straight from pending", nil, obsLedger("8", "succeeded"), ob(bind, succeeded, "succeeded", ""))
	orec("failed", nil, obsLedger("8", "failed"), ob(bind, failed, "failed", ""))
	orec("an identical observation changes nothing, not even the revision", nil, obsLedger("8", "running"), ob(bind, running, "running", ""), ob(bind, running, "running", ""))
	orec("a terminal state accepts itself without a new revision", nil, obsLedger("8", "succeeded"), ob(bind, succeeded, "succeeded", ""), ob(bind, succeeded, "succeeded", ""))
	orec("a terminal state refuses running", nil, obsLedger("8", "succeeded"), ob(bind, succeeded, "succeeded", ""), ob(bind, running, "", "InvalidCompensationStateTransition"))
	orec("a terminal state refuses another terminal state", nil, obsLedger("8", "failed"), ob(bind, failed, "failed", ""), ob(bind, succeeded, "", "InvalidCompensationStateTransition"))
	orec("result for another request ID", nil, base7, ledgerObsRow{reqMsg(bind, "undo"), resMsg(with(func(b *binding) { b.req = "compensate-2" }), running), "", "CompensationRequestMismatch"})
	orec("result for another compensation key", nil, base7, ledgerObsRow{reqMsg(bind, "undo"), resMsg(with(func(b *binding) { b.ckey = "cmp-z" }), running), "", "CompensationRequestMismatch"})
	orec("unknown operation", nil, base7, ob(with(func(b *binding) { b.op = "op-x" }), running, "", "UnknownOperation"))
	orec("request under another tool than the operation's", nil, base7, ob(with(func(b *binding) { b.tool = "remote.json" }), running, "", "CompensationRequestMismatch"))
	orec("operation without an intent", nil, base7, ob(with(func(b *binding) { b.op = "op-t" }), running, "", "UnknownCompensation"))
	orec("request with another inverse input", nil, base7, ledgerObsRow{reqMsg(bind, "redo"), resMsg(bind, running), "", "CompensationInputFingerprintMismatch"})
	orec("request under another compensation key", nil, base7, ob(with(func(b *binding) { b.ckey = "cmp-z" }), running, "", "CompensationRequestMismatch"))
	orec("request for another tenant scope", nil, base7, ob(with(func(b *binding) { b.tenant = "tenant-b" }), running, "", "CompensationRequestMismatch"))
	orec("request under another grant", nil, base7, ob(with(func(b *binding) { b.grant = ledgerFP2 }), running, "", "CompensationRequestMismatch"))
	orec("unknown operation in a mismatched pair: the pairing comes first", flags("CheckOrder"), base7,
		ledgerObsRow{reqMsg(with(func(b *binding) { b.op = "op-x" }), "undo"), resMsg(bind, running), "", "CompensationRequestMismatch"})
	orec("operation without an intent under another tool: the tool comes first", flags("CheckOrder"), base7,
		ob(with(func(b *binding) { b.op = "op-t"; b.tool = "remote.json" }), running, "", "CompensationRequestMismatch"))
	orec("another inverse input under another key: the input comes first", flags("CheckOrder"), base7,
		ledgerObsRow{reqMsg(with(func(b *binding) { b.ckey = "cmp-z" }), "redo"), resMsg(with(func(b *binding) { b.ckey = "cmp-z" }), running), "", "CompensationInputFingerprintMismatch"})
	orec("a refused observation does not stop a later one", nil, obsLedger("8", "running"),
		ob(with(func(b *binding) { b.op = "op-t" }), running, "", "UnknownCompensation"), ob(bind, running, "running", ""))

	// Plan fingerprints (WFL-045): the steps' IDs and sources, in order.
	plan := func(comment string, fl []string, steps ...[2]string) {
		row := ledgerRow{meta: meta{comment, append([]string{"PlanFingerprint"}, fl...), reqs("WFL-045")}, kind: vectorfmt.LedgerPlanFingerprintType}
		for _, st := range steps {
			row.steps, row.sources = append(row.steps, st[0]), append(row.sources, st[1])
		}
		rows = append(rows, row)
	}
	plan("one step", nil, [2]string{"publish", `let out = tool.call("conf.durable.record", input);`})
	plan("three steps", nil, [2]string{"fetch", `tool.call("remote.fetch", input)`}, [2]string{"transform", `json.parse(data)`},
		[2]string{"publish", `tool.call("remote.publish", data)`})
	plan("the same steps in another order", nil, [2]string{"publish", `tool.call("remote.publish", data)`},
		[2]string{"fetch", `tool.call("remote.fetch", input)`}, [2]string{"transform", `json.parse(data)`})
	plan("an empty source", nil, [2]string{"publish", ""})
	plan("a byte moved from the ID to the source", flags("LengthPrefix"), [2]string{"ab", "c"})
	plan("a byte moved from the source to the ID", flags("LengthPrefix"), [2]string{"a", "bc"})
	plan("a source of multi-byte UTF-8, counted in bytes", nil, [2]string{"publish", "émit(\"✓ 𝄞\")\n"})
	plan("a step that repeats the previous one: the count and the order enter the hash", nil, [2]string{"publish", ""}, [2]string{"publish", ""})
	plan("no steps", nil)
	return rows
}
