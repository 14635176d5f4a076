package main

import (
	"strings"

	"github.com/splashv5/conform/vectors/vectorfmt"
)

// ---- message bodies (messages chapter, field tables MSG-014 to MSG-020) ----

func txt(s string) string { return `{"format":"text","value":"` + s + `"}` }
func jsv(v string) string { return `{"format":"json","value":` + v + `}` }

func stOK(payload string) string { return `{"state":"succeeded","payload":` + payload + `}` }
func stFail(msg string) string   { return `{"state":"failed","message":"` + msg + `"}` }

const (
	stPending   = `{"state":"pending"}`
	stRunning   = `{"state":"running"}`
	stCancelled = `{"state":"cancelled"}`
)

const bodyHead = `{"protocol_version":5,"session_id":"session-1",`

func invBody(req, tool, payload string) string {
	return bodyHead + `"request_id":"` + req + `","tool":"` + tool + `","payload":` + payload + `}`
}

func resBody(req, payload string) string {
	return bodyHead + `"request_id":"` + req + `","payload":` + payload + `}`
}

func dispBody(req, tool, key, payload string) string {
	return bodyHead + `"request_id":"` + req + `","tool":"` + tool + `","operation_key":"` + key + `","payload":` + payload + `}`
}

func opResBody(req, tool, key, status string) string {
	return bodyHead + `"request_id":"` + req + `","tool":"` + tool + `","operation_key":"` + key + `","status":` + status + `}`
}

func recBody(req, tool, key string) string {
	return bodyHead + `"request_id":"` + req + `","tool":"` + tool + `","operation_key":"` + key + `"}`
}

func compBody(req, tool, key, ckey, scope, gfp, payload string) string {
	return bodyHead + `"request_id":"` + req + `","tool":"` + tool + `","operation_key":"` + key +
		`","compensation_key":"` + ckey + `","tenant_scope":"` + scope + `","grant_fingerprint":"` + gfp + `","payload":` + payload + `}`
}

func compResBody(req, tool, key, ckey, scope, gfp, status string) string {
	return bodyHead + `"request_id":"` + req + `","tool":"` + tool + `","operation_key":"` + key +
		`","compensation_key":"` + ckey + `","tenant_scope":"` + scope + `","grant_fingerprint":"` + gfp + `","status":` + status + `}`
}

func cancelBody(cid, req, tool string) string {
	return bodyHead + `"cancellation_id":"` + cid + `","request_id":"` + req + `","tool":"` + tool + `"}`
}

func cancelResBody(cid, req, tool, outcome string) string {
	return bodyHead + `"cancellation_id":"` + cid + `","request_id":"` + req + `","tool":"` + tool + `","outcome":"` + outcome + `"}`
}

// Body edits used by many rows.
func v4(body string) string { return rep(body, `"protocol_version":5`, `"protocol_version":4`) }
func session2(body string) string {
	return rep(body, `"session_id":"session-1"`, `"session_id":"session-2"`)
}

// jsonOfSize returns a json payload value whose canonical form is exactly n bytes (n >= 8).
func jsonOfSize(n int) string { return `{"k":"` + strings.Repeat("x", n-8) + `"}` }

// arrays returns n nested arrays around inner.
func arrays(n int, inner string) string { return nest(n, "[", "]", inner) }

// ---- the manifest of most authorizer rows ----

var (
	// text.echo: text, 2 calls, 16 bytes in, 8 bytes out, no compensation.
	azEcho = grantJSON("text.echo", "text", 2, 16, 8, 0, "")
	// math.add: json, 3 calls, 100 bytes in, 40 bytes out, no compensation.
	azAdd = grantJSON("math.add", "json", 3, 100, 40, 0, "")
	// ledger.post: json, 4 calls, 64 bytes in and out, 2 compensations.
	azLedger   = grantJSON("ledger.post", "json", 4, 64, 64, 2, "")
	azLedgerFP = indGrantFingerprint(azLedger)
	azEchoFP   = indGrantFingerprint(azEcho)
	// The manifest: release.publish is the grant of reference anchor A5 (1 call, 1
	// compensation), whose fingerprint is grantFP.
	azManifest = manifestJSON(sessionOne, azEcho, azAdd, gRelease, azLedger)
)

// Canonical bodies of the authorizer rows.
var (
	azI1  = invBody("r1", "text.echo", txt("hi"))
	azI2  = invBody("r2", "text.echo", txt("hey"))
	azR1  = resBody("r1", txt("ok"))
	azD1  = dispBody("d1", "math.add", "op-7", jsv(`{"a":1,"b":2}`))
	azD2  = dispBody("d2", "math.add", "op-8", jsv(`{"a":2,"b":2}`))
	azOR1 = opResBody("d1", "math.add", "op-7", stOK(jsv(`{"total":3}`)))
	azRC1 = recBody("rc1", "math.add", "op-7")
	azC1  = compBody("c1", "release.publish", "release-42-add", "cmp-undo-1", "tenant-release", grantFP, jsv(`{"undo":"release"}`))
	azCR1 = compResBody("c1", "release.publish", "release-42-add", "cmp-undo-1", "tenant-release", grantFP, stRunning)
	azX1  = cancelBody("x1", "r1", "text.echo")
	// azFill reserves one id per repetition without charging any budget.
	azFill = recBody("fill-{n}", "math.add", "op-{n}")
)

func azXR(outcome string) string { return cancelResBody("x1", "r1", "text.echo", outcome) }

// ledger compensation with request id req, compensation key ckey and payload value v.
func azLC(req, ckey, v string) string {
	return compBody(req, "ledger.post", "entry-1", ckey, "tenant-a", azLedgerFP, jsv(v))
}

// relC is a release.publish compensation differing from azC1 only by request id.
func relC(req string) string { return rep(azC1, `"request_id":"c1"`, `"request_id":"`+req+`"`) }

// ---- steps ----

// azStep is one authorizer step of a case table; err is the expected error kind.
type azStep struct {
	op       string
	input    string
	target   int
	instance int
	repeat   int
	err      string
}

func az(op, input string) azStep { return azStep{op: op, input: input, target: -1} }
func azE(op, input, kind string) azStep {
	return azStep{op: op, input: input, target: -1, err: kind}
}
func (s azStep) on(target int) azStep { s.target = target; return s }
func (s azStep) inst(i int) azStep    { s.instance = i; return s }
func (s azStep) times(n int) azStep   { s.repeat = n; return s }

// Short names of the operations.
const (
	opAuth    = vectorfmt.OpAuthorize
	opAuthOp  = vectorfmt.OpAuthorizeOperation
	opAuthRec = vectorfmt.OpAuthorizeReconciliation
	opAuthCmp = vectorfmt.OpAuthorizeCompensation
	opAuthCan = vectorfmt.OpAuthorizeCancellation
	opValRes  = vectorfmt.OpValidateResult
	opValCan  = vectorfmt.OpValidateCancellationResult
	opValOp   = vectorfmt.OpValidateOperationResult
	opValRec  = vectorfmt.OpValidateReconciliationResult
	opValCmp  = vectorfmt.OpValidateCompensationResult
)

// azCase is one authorizer row. The row runs in preserve mode; lossy, when set, also runs it
// in lossy mode with those steps (the same inputs, possibly other expectations). A row with
// manifestErr and no steps expects creating the authorizer to fail.
type azCase struct {
	meta
	manifest    string
	steps       []azStep
	lossy       []azStep
	manifestErr string
}

func authorizerCases() []azCase {
	var cs []azCase
	add := func(comment string, f []string, r []string, steps ...azStep) {
		cs = append(cs, azCase{meta: meta{comment, f, r}, manifest: azManifest, steps: steps})
	}
	one := func(comment string, f []string, r []string, s azStep) { add(comment, f, r, s) }
	const (
		unsupported = "UnsupportedVersion"
		badToken    = "InvalidToken"
		unknownSess = "UnknownSession"
		unknownTool = "UnknownTool"
		formatMis   = "PayloadFormatMismatch"
		envelope    = "InvalidJsonEnvelope"
		tooDeep     = "JsonPayloadTooDeep"
		inTooLarge  = "InputTooLarge"
		outTooLarge = "OutputTooLarge"
		dup         = "DuplicateRequest"
		calls       = "CallBudgetExhausted"
		capacity    = "SessionRequestLimitExceeded"
		dupResult   = "DuplicateResult"
		provenance  = "AuthorizationProvenanceMismatch"
	)

	// ---- authorize: every check in order (AUZ-008) ----
	one("ordinary invocation within every limit", flags("Authorize"), reqs("AUZ-008", "AUZ-002"), az(opAuth, azI1))
	one("invocation with protocol_version 4", flags("Authorize", "Version"), reqs("AUZ-008", "MSG-001"), azE(opAuth, v4(azI1), unsupported))
	one("invocation whose session id is not a token", flags("Authorize", "Token"), reqs("AUZ-008", "MSG-002"),
		azE(opAuth, rep(azI1, `"session-1"`, `"Session-1"`), badToken))
	one("invocation whose request id is not a token", flags("Authorize", "Token"), reqs("AUZ-008", "MSG-002"),
		azE(opAuth, rep(azI1, `"r1"`, `"R1"`), badToken))
	one("invocation whose tool is not a token", flags("Authorize", "Token"), reqs("AUZ-008", "MSG-014"),
		azE(opAuth, rep(azI1, `"text.echo"`, `"Text.echo"`), badToken))
	one("version 4 in an unknown session: the version is checked first", flags("Authorize", "CheckOrder"), reqs("AUZ-008", "AUZ-001"),
		azE(opAuth, v4(session2(azI1)), unsupported))
	one("tool that is not a token in an unknown session: the header comes before the session", flags("Authorize", "CheckOrder"), reqs("AUZ-008", "AUZ-001"),
		azE(opAuth, session2(rep(azI1, `"text.echo"`, `"text echo"`)), badToken))
	one("invocation for another session", flags("Authorize"), reqs("AUZ-008"), azE(opAuth, session2(azI1), unknownSess))
	one("unknown tool in an unknown session: the session comes first", flags("Authorize", "CheckOrder"), reqs("AUZ-008", "AUZ-001"),
		azE(opAuth, session2(invBody("r1", "text.shout", txt("hi"))), unknownSess))
	one("tool without a grant", flags("Authorize"), reqs("AUZ-008"), azE(opAuth, invBody("r1", "text.shout", txt("hi")), unknownTool))
	one("tool without a grant, with a payload of the wrong format: the grant comes first", flags("Authorize", "CheckOrder"), reqs("AUZ-008", "AUZ-001"),
		azE(opAuth, invBody("r1", "text.shout", jsv(`{"a":1}`)), unknownTool))
	one("json payload for a text grant", flags("Authorize"), reqs("AUZ-008", "MSG-012"), azE(opAuth, invBody("r1", "text.echo", jsv(`{"a":1}`)), formatMis))
	one("json payload for a text grant, also over the input limit: the format comes first", flags("Authorize", "CheckOrder"), reqs("AUZ-008", "AUZ-001"),
		azE(opAuth, invBody("r1", "text.echo", jsv(jsonOfSize(40))), formatMis))
	one("scalar json payload: rejected by the authorizer, not by message decoding", flags("Authorize", "PayloadEnvelope"), reqs("AUZ-008", "MSG-035", "MSG-032"),
		azE(opAuth, invBody("a1", "math.add", jsv("5")), envelope))
	one("null json payload", flags("Authorize", "PayloadEnvelope"), reqs("AUZ-008", "MSG-035"), azE(opAuth, invBody("a1", "math.add", jsv("null")), envelope))
	one("31 nested arrays around a number (depth 32, 63 bytes)", flags("Authorize", "PayloadDepth", "Boundary"), reqs("AUZ-008", "MSG-036"),
		az(opAuth, invBody("a1", "math.add", jsv(arrays(31, "1")))))
	one("32 nested arrays around a number (depth 33)", flags("Authorize", "PayloadDepth", "Boundary"), reqs("AUZ-008", "MSG-036"),
		azE(opAuth, invBody("a1", "math.add", jsv(arrays(32, "1"))), tooDeep))
	one("32 nested empty arrays (depth 32)", flags("Authorize", "PayloadDepth", "Boundary"), reqs("AUZ-008", "MSG-036"),
		az(opAuth, invBody("a1", "math.add", jsv(arrays(32, "")))))
	one("33 nested empty arrays (depth 33)", flags("Authorize", "PayloadDepth", "Boundary"), reqs("AUZ-008", "MSG-036"),
		azE(opAuth, invBody("a1", "math.add", jsv(arrays(33, ""))), tooDeep))
	one("60 nested arrays (121 bytes): depth is checked before size", flags("Authorize", "PayloadDepth", "CheckOrder"), reqs("AUZ-008", "AUZ-001"),
		azE(opAuth, invBody("a1", "math.add", jsv(arrays(60, "1"))), tooDeep))
	one("text payload of exactly max_input_bytes (16)", flags("Authorize", "Boundary"), reqs("AUZ-008", "AUZ-010", "MSG-039"),
		az(opAuth, invBody("r1", "text.echo", txt("0123456789abcdef"))))
	one("text payload one byte over max_input_bytes", flags("Authorize", "Boundary"), reqs("AUZ-008", "AUZ-010"),
		azE(opAuth, invBody("r1", "text.echo", txt("0123456789abcdefg")), inTooLarge))
	one("text payload of eight escaped e-acute: 16 decoded bytes, 48 bytes as written", flags("Authorize", "Boundary", "StringEscape"), reqs("AUZ-008", "MSG-013"),
		az(opAuth, invBody("r1", "text.echo", txt(strings.Repeat(`\u00e9`, 8)))))
	one("text payload of eight e-acute and one more byte (17 decoded bytes)", flags("Authorize", "Boundary", "Unicode"), reqs("AUZ-008", "MSG-013"),
		azE(opAuth, invBody("r1", "text.echo", txt(strings.Repeat("é", 8)+"a")), inTooLarge))
	one("json payload of exactly max_input_bytes (100) canonical bytes", flags("Authorize", "Boundary"), reqs("AUZ-008", "AUZ-010", "MSG-038"),
		az(opAuth, invBody("a1", "math.add", jsv(jsonOfSize(100)))))
	one("json payload of 101 canonical bytes", flags("Authorize", "Boundary"), reqs("AUZ-008", "AUZ-010"),
		azE(opAuth, invBody("a1", "math.add", jsv(jsonOfSize(101))), inTooLarge))
	{
		// 100 canonical bytes written with whitespace and out-of-order keys (113 bytes as sent).
		canonical := `{"a":1,"k":"` + strings.Repeat("x", 100-len(`{"a":1,"k":""}`)) + `"}`
		spaced := `{ "k" : "` + strings.Repeat("x", 100-len(`{"a":1,"k":""}`)) + `" , "a" : 1 }`
		if len(canonical) != 100 {
			tableErrors = append(tableErrors, "authorizer: canonical size row is not 100 bytes")
		}
		one("json payload counted by its canonical form (100 bytes), not as sent", flags("Authorize", "Boundary", "Whitespace", "KeyOrder"), reqs("AUZ-008", "MSG-038"),
			az(opAuth, invBody("a1", "math.add", jsv(spaced))))
	}
	{
		// {"k":1.50,...} is 101 canonical bytes in preserve mode and 100 in lossy mode.
		value := `{"k":1.50,"p":"` + strings.Repeat("x", 101-len(`{"k":1.50,"p":""}`)) + `"}`
		in := invBody("a1", "math.add", jsv(value))
		cs = append(cs, azCase{
			meta:     meta{"the size of a non-portable number depends on the mode: 101 bytes preserved, 100 in lossy mode", flags("Authorize", "Boundary", "ModeDependent", "NonPortable"), reqs("AUZ-008", "MSG-038", "AUZ-010")},
			manifest: azManifest,
			steps:    []azStep{azE(opAuth, in, inTooLarge)},
			lossy:    []azStep{az(opAuth, in)},
		})
	}

	// ---- reservation and budgets ----
	add("repeated request id", flags("Authorize", "SharedNamespace"), reqs("AUZ-005", "AUZ-008"),
		az(opAuth, azI1), azE(opAuth, rep(azI1, `"hi"`, `"again"`), dup))
	add("reserved request id with an oversized payload: size comes before uniqueness", flags("Authorize", "CheckOrder"), reqs("AUZ-008", "AUZ-001"),
		az(opAuth, azI1), azE(opAuth, invBody("r1", "text.echo", txt("0123456789abcdefg")), inTooLarge))
	add("third call of a two-call grant; other tools keep their own budget", flags("Authorize", "Budget"), reqs("AUZ-008"),
		az(opAuth, azI1), az(opAuth, azI2), azE(opAuth, invBody("r3", "text.echo", txt("x")), calls), az(opAuth, invBody("a1", "math.add", jsv(`{}`))))
	add("reserved request id after the budget is spent: uniqueness comes before the budget", flags("Authorize", "Budget", "CheckOrder"), reqs("AUZ-008", "AUZ-007"),
		az(opAuth, azI1), az(opAuth, azI2), azE(opAuth, azI1, dup))
	add("a failed authorization reserves nothing", flags("Authorize", "FailureAtomic"), reqs("AUZ-003"),
		azE(opAuth, invBody("r1", "text.shout", txt("hi")), unknownTool), az(opAuth, azI1))
	add("a failed authorization charges nothing", flags("Authorize", "Budget", "FailureAtomic"), reqs("AUZ-003", "AUZ-008"),
		az(opAuth, azI1), azE(opAuth, invBody("r2", "text.echo", txt("0123456789abcdefg")), inTooLarge), az(opAuth, azI2),
		azE(opAuth, invBody("r3", "text.echo", txt("x")), calls))
	add("an accepted result refunds no call", flags("Authorize", "Budget"), reqs("AUZ-011"),
		az(opAuth, azI1), az(opAuth, azI2), az(opValRes, azR1).on(0), azE(opAuth, invBody("r3", "text.echo", txt("x")), calls))
	add("an acknowledged cancellation refunds no call", flags("Authorize", "Budget", "Cancel"), reqs("AUZ-011"),
		az(opAuth, azI1), az(opAuthCan, azX1).on(0), az(opValCan, azXR("acknowledged")).on(1), az(opAuth, azI2),
		azE(opAuth, invBody("r3", "text.echo", txt("x")), calls))

	// ---- one namespace for every kind of id (AUZ-005) ----
	add("dispatch reusing an invocation's request id", flags("SharedNamespace"), reqs("AUZ-005"),
		az(opAuth, invBody("r1", "math.add", jsv(`{}`))), azE(opAuthOp, dispBody("r1", "math.add", "op-1", jsv(`{}`)), dup))
	add("reconciliation reusing a dispatch's request id", flags("SharedNamespace"), reqs("AUZ-005"),
		az(opAuthOp, azD1), azE(opAuthRec, recBody("d1", "math.add", "op-7"), dup))
	add("compensation reusing a reconciliation's request id", flags("SharedNamespace"), reqs("AUZ-005"),
		az(opAuthRec, azRC1), azE(opAuthCmp, rep(azC1, `"request_id":"c1"`, `"request_id":"rc1"`), dup))
	add("cancellation id reusing a compensation's request id", flags("SharedNamespace", "Cancel"), reqs("AUZ-005", "AUZ-015"),
		az(opAuth, azI1), az(opAuthCmp, azC1), azE(opAuthCan, cancelBody("c1", "r1", "text.echo"), dup).on(0))
	add("invocation reusing a cancellation id", flags("SharedNamespace", "Cancel"), reqs("AUZ-005"),
		az(opAuth, azI1), az(opAuthCan, azX1).on(0), azE(opAuth, invBody("x1", "text.echo", txt("hi")), dup))

	// ---- ordinary and durable dispatch share max_calls (AUZ-009) ----
	add("an invocation after two dispatches and one invocation of a three-call grant", flags("SharedCallBudget", "Budget"), reqs("AUZ-009"),
		az(opAuth, invBody("a1", "math.add", jsv(`{}`))), az(opAuthOp, azD1), az(opAuthOp, azD2), azE(opAuth, invBody("a2", "math.add", jsv(`{}`)), calls))
	add("a dispatch after three invocations of a three-call grant", flags("SharedCallBudget", "Budget"), reqs("AUZ-009"),
		az(opAuth, invBody("a1", "math.add", jsv(`{}`))), az(opAuth, invBody("a2", "math.add", jsv(`{}`))), az(opAuth, invBody("a3", "math.add", jsv(`{}`))),
		azE(opAuthOp, azD1, calls))
	add("reconciliations charge no call", flags("Budget"), reqs("AUZ-012"),
		az(opAuthRec, azRC1), az(opAuthRec, recBody("rc2", "math.add", "op-7")), az(opAuthRec, recBody("rc3", "math.add", "op-7")),
		az(opAuth, invBody("a1", "math.add", jsv(`{}`))), az(opAuthOp, azD1), az(opAuthOp, azD2), az(opAuthRec, recBody("rc4", "math.add", "op-8")))

	// ---- authorize_operation (AUZ-009) ----
	one("durable dispatch within every limit", flags("Dispatch"), reqs("AUZ-009"), az(opAuthOp, azD1))
	one("dispatch with protocol_version 4", flags("Dispatch", "Version"), reqs("AUZ-009", "MSG-001"), azE(opAuthOp, v4(azD1), unsupported))
	one("dispatch whose operation key is not a token", flags("Dispatch", "Token"), reqs("AUZ-009", "MSG-016"), azE(opAuthOp, rep(azD1, `"op-7"`, `"Op-7"`), badToken))
	one("dispatch whose operation key is not a token, in an unknown session", flags("Dispatch", "CheckOrder"), reqs("AUZ-009", "AUZ-001"),
		azE(opAuthOp, session2(rep(azD1, `"op-7"`, `""`)), badToken))
	one("dispatch for another session", flags("Dispatch"), reqs("AUZ-009"), azE(opAuthOp, session2(azD1), unknownSess))
	one("dispatch of a tool without a grant", flags("Dispatch"), reqs("AUZ-009"), azE(opAuthOp, rep(azD1, `"math.add"`, `"math.sub"`), unknownTool))
	one("dispatch with a text payload for a json grant", flags("Dispatch"), reqs("AUZ-009", "MSG-012"), azE(opAuthOp, dispBody("d1", "math.add", "op-7", txt("1+2")), formatMis))
	one("dispatch with a scalar json payload", flags("Dispatch", "PayloadEnvelope"), reqs("AUZ-009", "MSG-035"), azE(opAuthOp, dispBody("d1", "math.add", "op-7", jsv(`"1+2"`)), envelope))
	one("dispatch with a payload 33 levels deep", flags("Dispatch", "PayloadDepth"), reqs("AUZ-009", "MSG-036"), azE(opAuthOp, dispBody("d1", "math.add", "op-7", jsv(arrays(32, "1"))), tooDeep))
	one("dispatch with 101 canonical payload bytes", flags("Dispatch", "Boundary"), reqs("AUZ-009", "AUZ-010"), azE(opAuthOp, dispBody("d1", "math.add", "op-7", jsv(jsonOfSize(101))), inTooLarge))
	add("dispatch reusing a dispatch's request id with another operation key", flags("Dispatch", "SharedNamespace"), reqs("AUZ-009", "AUZ-005"),
		az(opAuthOp, azD1), azE(opAuthOp, dispBody("d1", "math.add", "op-8", jsv(`{}`)), dup))

	// ---- authorize_reconciliation (AUZ-012) ----
	one("reconciliation of a granted tool", flags("Reconciliation"), reqs("AUZ-012"), az(opAuthRec, azRC1))
	one("reconciliation with protocol_version 4", flags("Reconciliation", "Version"), reqs("AUZ-012", "MSG-001"), azE(opAuthRec, v4(azRC1), unsupported))
	one("reconciliation whose operation key is not a token", flags("Reconciliation", "Token"), reqs("AUZ-012", "MSG-017"), azE(opAuthRec, rep(azRC1, `"op-7"`, `"op 7"`), badToken))
	one("reconciliation for another session", flags("Reconciliation"), reqs("AUZ-012"), azE(opAuthRec, session2(azRC1), unknownSess))
	one("reconciliation of a tool without a grant", flags("Reconciliation"), reqs("AUZ-012"), azE(opAuthRec, rep(azRC1, `"math.add"`, `"math.sub"`), unknownTool))
	add("reconciliation of an ungranted tool under a reserved id: the grant comes first", flags("Reconciliation", "CheckOrder"), reqs("AUZ-012", "AUZ-001"),
		az(opAuthRec, azRC1), azE(opAuthRec, recBody("rc1", "math.sub", "op-7"), unknownTool))
	add("reconciliation reusing its own request id", flags("Reconciliation", "SharedNamespace"), reqs("AUZ-012", "AUZ-005"),
		az(opAuthRec, azRC1), azE(opAuthRec, azRC1, dup))

	// ---- authorize_compensation (AUZ-013, AUZ-014) ----
	const (
		notGranted  = "CompensationNotGranted"
		grantMis    = "CompensationGrantMismatch"
		compBudget  = "CompensationBudgetExhausted"
		otherHexFP  = "0000000000000000000000000000000000000000000000000000000000000000"
		undoRelease = `{"undo":"release"}`
	)
	one("compensation under the grant of reference anchor A5 with its fingerprint", flags("Compensation"), reqs("AUZ-013", "FP-017", "FP-020"), az(opAuthCmp, azC1))
	one("compensation with protocol_version 4", flags("Compensation", "Version"), reqs("AUZ-013", "MSG-001"), azE(opAuthCmp, v4(azC1), unsupported))
	one("compensation key without the cmp- prefix", flags("Compensation", "CompensationKey"), reqs("AUZ-013", "MSG-004"),
		azE(opAuthCmp, rep(azC1, `"cmp-undo-1"`, `"undo-1"`), "InvalidCompensationKey"))
	one("compensation key that is not a token", flags("Compensation", "CompensationKey", "Token"), reqs("AUZ-013", "MSG-004"),
		azE(opAuthCmp, rep(azC1, `"cmp-undo-1"`, `"CMP-undo-1"`), badToken))
	one("tenant scope that is not a token", flags("Compensation", "Token"), reqs("AUZ-013", "MSG-018"),
		azE(opAuthCmp, rep(azC1, `"tenant-release"`, `"tenant release"`), badToken))
	one("grant fingerprint in uppercase hex", flags("Compensation", "GrantFingerprint"), reqs("AUZ-013", "MSG-005"),
		azE(opAuthCmp, rep(azC1, grantFP, strings.ToUpper(grantFP)), "InvalidCompensationGrantFingerprint"))
	one("the header check ignores the payload: a scalar payload in an unknown session", flags("Compensation", "CheckOrder"), reqs("AUZ-013", "AUZ-001"),
		azE(opAuthCmp, session2(rep(azC1, undoRelease, `7`)), unknownSess))
	one("compensation for another session", flags("Compensation"), reqs("AUZ-013"), azE(opAuthCmp, session2(azC1), unknownSess))
	one("compensation of a tool without a grant", flags("Compensation"), reqs("AUZ-013"), azE(opAuthCmp, rep(azC1, `"release.publish"`, `"release.pull"`), unknownTool))
	one("compensation of a tool whose grant allows none, with that grant's own fingerprint", flags("Compensation"), reqs("AUZ-013", "MAN-004"),
		azE(opAuthCmp, compBody("c1", "text.echo", "op-1", "cmp-1", "tenant-a", azEchoFP, txt("undo")), notGranted))
	one("no compensation granted and a wrong fingerprint: max_compensations comes first", flags("Compensation", "CheckOrder"), reqs("AUZ-013", "AUZ-001"),
		azE(opAuthCmp, compBody("c1", "text.echo", "op-1", "cmp-1", "tenant-a", otherHexFP, txt("undo")), notGranted))
	one("compensation carrying another grant's fingerprint", flags("Compensation", "GrantFingerprint"), reqs("AUZ-013", "FP-020"),
		azE(opAuthCmp, rep(azC1, grantFP, azLedgerFP), grantMis))
	one("wrong fingerprint and a text payload: the fingerprint comes before the payload", flags("Compensation", "CheckOrder"), reqs("AUZ-013", "AUZ-001"),
		azE(opAuthCmp, rep(rep(azC1, grantFP, otherHexFP), jsv(undoRelease), txt("undo")), grantMis))
	one("compensation with a text payload for a json grant", flags("Compensation"), reqs("AUZ-013", "MSG-012"),
		azE(opAuthCmp, rep(azC1, jsv(undoRelease), txt("undo")), formatMis))
	one("compensation with a scalar json payload", flags("Compensation", "PayloadEnvelope"), reqs("AUZ-013", "MSG-035"),
		azE(opAuthCmp, rep(azC1, undoRelease, `true`), envelope))
	one("compensation payload of exactly max_input_bytes (64)", flags("Compensation", "Boundary"), reqs("AUZ-013", "AUZ-010"),
		az(opAuthCmp, azLC("l1", "cmp-1", jsonOfSize(64))))
	one("compensation payload one byte over max_input_bytes", flags("Compensation", "Boundary"), reqs("AUZ-013", "AUZ-010"),
		azE(opAuthCmp, azLC("l1", "cmp-1", jsonOfSize(65)), inTooLarge))
	add("compensation reusing its own request id", flags("Compensation", "SharedNamespace"), reqs("AUZ-013", "AUZ-005"),
		az(opAuthCmp, azC1), azE(opAuthCmp, azC1, dup))
	add("second compensation identity of a one-compensation grant", flags("Compensation", "CompensationIdentity", "Budget"), reqs("AUZ-013", "AUZ-014"),
		az(opAuthCmp, azC1), azE(opAuthCmp, rep(relC("c2"), "cmp-undo-1", "cmp-undo-2"), compBudget))
	add("a new identity under a reserved id: uniqueness comes before the budget", flags("Compensation", "CompensationIdentity", "CheckOrder"), reqs("AUZ-013", "AUZ-001"),
		az(opAuthCmp, azC1), azE(opAuthCmp, rep(azC1, "cmp-undo-1", "cmp-undo-2"), dup))
	add("exact retransmissions under fresh request ids use no compensation budget", flags("Compensation", "CompensationIdentity", "Budget"), reqs("AUZ-014"),
		az(opAuthCmp, azC1), az(opAuthCmp, relC("c2")), az(opAuthCmp, relC("c3")), azE(opAuthCmp, rep(relC("c4"), "cmp-undo-1", "cmp-undo-9"), compBudget))
	add("the identity uses the canonical input: the same payload spelled differently is a retransmission", flags("Compensation", "CompensationIdentity", "Whitespace"), reqs("AUZ-014", "FP-004", "FP-010"),
		az(opAuthCmp, azC1), az(opAuthCmp, rep(relC("c2"), undoRelease, `{ "undo" : "release" }`)))
	add("another operation key is another identity", flags("Compensation", "CompensationIdentity", "Budget"), reqs("AUZ-014"),
		az(opAuthCmp, azC1), azE(opAuthCmp, rep(relC("c2"), "release-42-add", "release-43-add"), compBudget))
	add("another tenant scope is another identity", flags("Compensation", "CompensationIdentity", "Budget"), reqs("AUZ-014"),
		az(opAuthCmp, azC1), azE(opAuthCmp, rep(relC("c2"), "tenant-release", "tenant-other"), compBudget))
	add("another input is another identity", flags("Compensation", "CompensationIdentity", "Budget"), reqs("AUZ-014", "FP-010"),
		az(opAuthCmp, azC1), azE(opAuthCmp, rep(relC("c2"), undoRelease, `{"undo":"release","force":true}`), compBudget))
	add("two identities within a two-compensation grant, then a third", flags("Compensation", "CompensationIdentity", "Budget", "Boundary"), reqs("AUZ-013", "AUZ-014"),
		az(opAuthCmp, azLC("l1", "cmp-1", `{"n":1}`)), az(opAuthCmp, azLC("l2", "cmp-2", `{"n":1}`)), az(opAuthCmp, azLC("l3", "cmp-1", `{"n":1}`)),
		azE(opAuthCmp, azLC("l4", "cmp-3", `{"n":1}`), compBudget))
	add("a failed compensation records no identity and reserves no id", flags("Compensation", "CompensationIdentity", "FailureAtomic"), reqs("AUZ-003", "AUZ-014"),
		azE(opAuthCmp, azLC("l1", "cmp-1", jsonOfSize(65)), inTooLarge), az(opAuthCmp, azLC("l1", "cmp-1", `{}`)), az(opAuthCmp, azLC("l2", "cmp-2", `{}`)),
		azE(opAuthCmp, azLC("l3", "cmp-3", `{}`), compBudget))
	add("a compensation charges no call", flags("Compensation", "Budget"), reqs("AUZ-014"),
		az(opAuthCmp, azC1), az(opAuthOp, dispBody("d1", "release.publish", "release-42-add", jsv(`{}`))),
		azE(opAuthOp, dispBody("d2", "release.publish", "release-43-add", jsv(`{}`)), calls))
	add("a dispatch charges no compensation", flags("Compensation", "Budget"), reqs("AUZ-014", "AUZ-009"),
		az(opAuthOp, dispBody("d1", "release.publish", "release-42-add", jsv(`{}`))), az(opAuthCmp, azC1))

	// ---- authorize_cancellation (AUZ-015 to AUZ-017) ----
	const (
		targetMis  = "CancellationTargetMismatch"
		cidIsRid   = "CancellationIdMatchesRequest"
		requested  = "CancellationAlreadyRequested"
		cancelled  = "RequestAlreadyCancelled"
		resMis     = "CancellationResultMismatch"
		afterCance = "ResultAfterCancellation"
	)
	add("cancellation of an authorized invocation", flags("Cancel"), reqs("AUZ-015"), az(opAuth, azI1), az(opAuthCan, azX1).on(0))
	add("cancellation whose target was issued by another authorizer with the same manifest", flags("Cancel", "Provenance"), reqs("AUZ-015", "AUZ-025"),
		az(opAuth, azI1).inst(1), azE(opAuthCan, azX1, provenance).on(0))
	add("foreign target and a cancellation id equal to the request id: provenance comes first", flags("Cancel", "Provenance", "CheckOrder"), reqs("AUZ-015", "AUZ-025"),
		az(opAuth, azI1).inst(1), azE(opAuthCan, cancelBody("r1", "r1", "text.echo"), provenance).on(0))
	add("cancellation with protocol_version 4", flags("Cancel", "Version"), reqs("AUZ-015", "MSG-001"),
		az(opAuth, azI1), azE(opAuthCan, v4(azX1), unsupported).on(0))
	add("cancellation id that is not a token", flags("Cancel", "Token"), reqs("AUZ-015", "MSG-015"),
		az(opAuth, azI1), azE(opAuthCan, cancelBody("X1", "r1", "text.echo"), badToken).on(0))
	add("cancellation id equal to the target request id", flags("Cancel"), reqs("AUZ-015", "MSG-015"),
		az(opAuth, azI1), azE(opAuthCan, cancelBody("r1", "r1", "text.echo"), cidIsRid).on(0))
	add("tool that is not a token and a cancellation id equal to the request id: tokens come first", flags("Cancel", "CheckOrder"), reqs("AUZ-015", "MSG-015"),
		az(opAuth, azI1), azE(opAuthCan, cancelBody("r1", "r1", "Text.echo"), badToken).on(0))
	add("cancellation for another session: the session comes before the target match", flags("Cancel", "CheckOrder"), reqs("AUZ-015"),
		az(opAuth, azI1), azE(opAuthCan, session2(azX1), unknownSess).on(0))
	add("cancellation naming another authorized request than its target", flags("Cancel"), reqs("AUZ-015"),
		az(opAuth, azI1), az(opAuth, azI2), azE(opAuthCan, cancelBody("x1", "r2", "text.echo"), targetMis).on(0))
	add("cancellation naming another tool than its target", flags("Cancel"), reqs("AUZ-015"),
		az(opAuth, azI1), azE(opAuthCan, cancelBody("x1", "r1", "math.add"), targetMis).on(0))
	add("second cancellation of one target", flags("Cancel"), reqs("AUZ-016"),
		az(opAuth, azI1), az(opAuthCan, azX1).on(0), azE(opAuthCan, cancelBody("x2", "r1", "text.echo"), requested).on(0))
	add("second cancellation after the first was answered unsupported", flags("Cancel", "CancellationOutcome"), reqs("AUZ-016"),
		az(opAuth, azI1), az(opAuthCan, azX1).on(0), az(opValCan, azXR("unsupported")).on(1), azE(opAuthCan, cancelBody("x2", "r1", "text.echo"), requested).on(0))
	add("second cancellation after an acknowledged one: already cancelled is checked first", flags("Cancel", "CancellationOutcome", "CheckOrder"), reqs("AUZ-020", "AUZ-015"),
		az(opAuth, azI1), az(opAuthCan, azX1).on(0), az(opValCan, azXR("acknowledged")).on(1), azE(opAuthCan, cancelBody("x2", "r1", "text.echo"), cancelled).on(0))
	add("cancellation id already reserved by another invocation", flags("Cancel", "SharedNamespace"), reqs("AUZ-015", "AUZ-005"),
		az(opAuth, azI1), az(opAuth, azI2), azE(opAuthCan, cancelBody("r2", "r1", "text.echo"), dup).on(0))
	add("cancellation of a target whose result was already accepted", flags("Cancel"), reqs("AUZ-017"),
		az(opAuth, azI1), az(opValRes, azR1).on(0), az(opAuthCan, azX1).on(0))
	add("a rejected cancellation leaves the target without a cancellation", flags("Cancel", "FailureAtomic"), reqs("AUZ-003", "AUZ-016"),
		az(opAuth, azI1), azE(opAuthCan, cancelBody("x1", "r1", "math.add"), targetMis).on(0), az(opAuthCan, azX1).on(0))
	add("cancellation after the tool's call budget is spent charges nothing", flags("Cancel", "Budget"), reqs("AUZ-015"),
		az(opAuth, azI1), az(opAuth, azI2), az(opAuthCan, azX1).on(0), az(opAuthCan, cancelBody("x2", "r2", "text.echo")).on(1))

	// ---- the six cancellation outcome cells (AUZ-019) and what follows them (AUZ-020) ----
	add("acknowledged before the result: accepted, and the result is then refused", flags("Cancel", "CancellationOutcome"), reqs("AUZ-019", "AUZ-020"),
		az(opAuth, azI1), az(opAuthCan, azX1).on(0), az(opValCan, azXR("acknowledged")).on(1), azE(opValRes, azR1, afterCance).on(0))
	add("acknowledged after the result", flags("Cancel", "CancellationOutcome"), reqs("AUZ-019"),
		az(opAuth, azI1), az(opValRes, azR1).on(0), az(opAuthCan, azX1).on(0), azE(opValCan, azXR("acknowledged"), "CancellationAcknowledgedAfterResult").on(2))
	add("too_late after the result", flags("Cancel", "CancellationOutcome"), reqs("AUZ-019", "AUZ-017"),
		az(opAuth, azI1), az(opValRes, azR1).on(0), az(opAuthCan, azX1).on(0), az(opValCan, azXR("too_late")).on(2))
	add("too_late before the result", flags("Cancel", "CancellationOutcome"), reqs("AUZ-019"),
		az(opAuth, azI1), az(opAuthCan, azX1).on(0), azE(opValCan, azXR("too_late"), "CancellationTooLateBeforeResult").on(1))
	add("unsupported before the result: accepted, and the target stays active", flags("Cancel", "CancellationOutcome"), reqs("AUZ-019"),
		az(opAuth, azI1), az(opAuthCan, azX1).on(0), az(opValCan, azXR("unsupported")).on(1), az(opValRes, azR1).on(0))
	add("unsupported after the result", flags("Cancel", "CancellationOutcome"), reqs("AUZ-019"),
		az(opAuth, azI1), az(opValRes, azR1).on(0), az(opAuthCan, azX1).on(0), azE(opValCan, azXR("unsupported"), "CancellationUnsupportedAfterResult").on(2))
	add("a refused too_late changes nothing: after the result it is accepted", flags("Cancel", "CancellationOutcome", "FailureAtomic"), reqs("AUZ-003", "AUZ-019"),
		az(opAuth, azI1), az(opAuthCan, azX1).on(0), azE(opValCan, azXR("too_late"), "CancellationTooLateBeforeResult").on(1), az(opValRes, azR1).on(0),
		az(opValCan, azXR("too_late")).on(1))
	add("a refused acknowledgement does not cancel the target", flags("Cancel", "CancellationOutcome", "FailureAtomic"), reqs("AUZ-003", "AUZ-019"),
		az(opAuth, azI1), az(opValRes, azR1).on(0), az(opAuthCan, azX1).on(0), azE(opValCan, azXR("acknowledged"), "CancellationAcknowledgedAfterResult").on(2),
		az(opValCan, azXR("too_late")).on(2))
	add("result after acknowledged cancellation with an oversized payload: cancellation is checked first", flags("Cancel", "CheckOrder"), reqs("AUZ-021", "AUZ-020"),
		az(opAuth, azI1), az(opAuthCan, azX1).on(0), az(opValCan, azXR("acknowledged")).on(1), azE(opValRes, resBody("r1", txt("far too long")), afterCance).on(0))

	// ---- validate_cancellation_result (AUZ-018) ----
	add("cancellation result checked by another authorizer", flags("Cancel", "Provenance"), reqs("AUZ-018", "AUZ-025"),
		az(opAuth, azI1).inst(1), az(opAuthCan, azX1).on(0).inst(1), azE(opValCan, azXR("unsupported"), provenance).on(1))
	add("cancellation result with protocol_version 4", flags("Cancel", "Version"), reqs("AUZ-018", "MSG-001"),
		az(opAuth, azI1), az(opAuthCan, azX1).on(0), azE(opValCan, v4(azXR("unsupported")), unsupported).on(1))
	add("cancellation result whose cancellation id equals its request id", flags("Cancel"), reqs("AUZ-018", "MSG-015"),
		az(opAuth, azI1), az(opAuthCan, azX1).on(0), azE(opValCan, cancelResBody("r1", "r1", "text.echo", "unsupported"), cidIsRid).on(1))
	add("cancellation result for another session", flags("Cancel"), reqs("AUZ-018"),
		az(opAuth, azI1), az(opAuthCan, azX1).on(0), azE(opValCan, session2(azXR("unsupported")), unknownSess).on(1))
	add("cancellation result naming another tool", flags("Cancel"), reqs("AUZ-018"),
		az(opAuth, azI1), az(opAuthCan, azX1).on(0), azE(opValCan, cancelResBody("x1", "r1", "math.add", "unsupported"), resMis).on(1))
	add("cancellation result naming another cancellation id", flags("Cancel"), reqs("AUZ-018"),
		az(opAuth, azI1), az(opAuthCan, azX1).on(0), azE(opValCan, cancelResBody("x2", "r1", "text.echo", "unsupported"), resMis).on(1))
	add("cancellation result naming another request id", flags("Cancel"), reqs("AUZ-018"),
		az(opAuth, azI1), az(opAuth, azI2), az(opAuthCan, azX1).on(0), azE(opValCan, cancelResBody("x1", "r2", "text.echo", "unsupported"), resMis).on(2))
	add("second cancellation result", flags("Cancel", "DuplicateResult"), reqs("AUZ-018", "AUZ-023"),
		az(opAuth, azI1), az(opAuthCan, azX1).on(0), az(opValCan, azXR("unsupported")).on(1), azE(opValCan, azXR("unsupported"), dupResult).on(1))
	add("second cancellation result with another outcome: the duplicate check comes before the outcome rule", flags("Cancel", "DuplicateResult", "CheckOrder"), reqs("AUZ-018", "AUZ-023"),
		az(opAuth, azI1), az(opAuthCan, azX1).on(0), az(opValCan, azXR("acknowledged")).on(1), azE(opValCan, azXR("too_late"), dupResult).on(1))
	add("second cancellation result naming another tool: the match comes before the duplicate check", flags("Cancel", "DuplicateResult", "CheckOrder"), reqs("AUZ-018"),
		az(opAuth, azI1), az(opAuthCan, azX1).on(0), az(opValCan, azXR("unsupported")).on(1), azE(opValCan, cancelResBody("x1", "r1", "math.add", "unsupported"), resMis).on(1))

	// ---- validate_result (AUZ-021) ----
	add("result of an authorized invocation", flags("Result"), reqs("AUZ-021"), az(opAuth, azI1), az(opValRes, azR1).on(0))
	add("result checked by another authorizer", flags("Result", "Provenance"), reqs("AUZ-021", "AUZ-025"), az(opAuth, azI1).inst(1), azE(opValRes, azR1, provenance).on(0))
	add("result checked by the authorizer that issued the token, which is the second one", flags("Result", "Provenance"), reqs("AUZ-025"),
		az(opAuth, azI1).inst(1), az(opValRes, azR1).on(0).inst(1))
	add("each authorizer reserves ids on its own", flags("Provenance"), reqs("AUZ-025", "AUZ-005"), az(opAuth, azI1), az(opAuth, azI1).inst(1))
	add("result with protocol_version 4", flags("Result", "Version"), reqs("AUZ-021", "MSG-001"), az(opAuth, azI1), azE(opValRes, v4(azR1), unsupported).on(0))
	add("result whose request id is not a token", flags("Result", "Token"), reqs("AUZ-021", "MSG-014"), az(opAuth, azI1), azE(opValRes, resBody("r 1", txt("ok")), badToken).on(0))
	add("result for another session", flags("Result"), reqs("AUZ-021"), az(opAuth, azI1), azE(opValRes, session2(azR1), unknownSess).on(0))
	add("result naming another authorized request than its token", flags("Result"), reqs("AUZ-021"),
		az(opAuth, azI1), az(opAuth, azI2), azE(opValRes, resBody("r2", txt("ok")), "RequestMismatch").on(0))
	add("second result", flags("Result", "DuplicateResult"), reqs("AUZ-021", "AUZ-023"), az(opAuth, azI1), az(opValRes, azR1).on(0), azE(opValRes, azR1, dupResult).on(0))
	add("second result with an invalid payload: the duplicate check comes first", flags("Result", "DuplicateResult", "CheckOrder"), reqs("AUZ-021", "AUZ-023"),
		az(opAuth, azI1), az(opValRes, azR1).on(0), azE(opValRes, resBody("r1", jsv(`{}`)), dupResult).on(0))
	add("result with a json payload for a text grant", flags("Result"), reqs("AUZ-021", "MSG-012"), az(opAuth, azI1), azE(opValRes, resBody("r1", jsv(`{}`)), formatMis).on(0))
	add("result of exactly max_output_bytes (8)", flags("Result", "Boundary"), reqs("AUZ-021", "AUZ-010"), az(opAuth, azI1), az(opValRes, resBody("r1", txt("12345678"))).on(0))
	add("result one byte over max_output_bytes", flags("Result", "Boundary"), reqs("AUZ-021", "AUZ-010"), az(opAuth, azI1), azE(opValRes, resBody("r1", txt("123456789")), outTooLarge).on(0))
	add("a refused result leaves the request open", flags("Result", "FailureAtomic"), reqs("AUZ-003", "AUZ-021"),
		az(opAuth, azI1), azE(opValRes, resBody("r1", txt("123456789")), outTooLarge).on(0), az(opValRes, azR1).on(0))
	add("scalar json result: rejected by the authorizer", flags("Result", "PayloadEnvelope"), reqs("AUZ-021", "MSG-032", "MSG-035"),
		az(opAuth, invBody("a1", "math.add", jsv(`{}`))), azE(opValRes, resBody("a1", jsv(`42`)), envelope).on(0))
	add("result 33 levels deep and over the output limit: depth comes first", flags("Result", "PayloadDepth", "CheckOrder"), reqs("AUZ-021", "MSG-036"),
		az(opAuth, invBody("a1", "math.add", jsv(`{}`))), azE(opValRes, resBody("a1", jsv(arrays(32, "1"))), tooDeep).on(0))
	add("json result of exactly max_output_bytes (40)", flags("Result", "Boundary"), reqs("AUZ-021", "AUZ-010"),
		az(opAuth, invBody("a1", "math.add", jsv(`{}`))), az(opValRes, resBody("a1", jsv(jsonOfSize(40)))).on(0))
	add("json result of 41 canonical bytes", flags("Result", "Boundary"), reqs("AUZ-021", "AUZ-010"),
		az(opAuth, invBody("a1", "math.add", jsv(`{}`))), azE(opValRes, resBody("a1", jsv(jsonOfSize(41))), outTooLarge).on(0))

	// ---- validate_operation_result (AUZ-022) ----
	opRes := func(status string) string { return opResBody("d1", "math.add", "op-7", status) }
	add("succeeded status for an authorized dispatch", flags("OperationResult"), reqs("AUZ-022"), az(opAuthOp, azD1), az(opValOp, azOR1).on(0))
	add("cancelled status for an authorized dispatch", flags("OperationResult"), reqs("AUZ-022", "MSG-024"), az(opAuthOp, azD1), az(opValOp, opRes(stCancelled)).on(0))
	add("operation result checked by another authorizer", flags("OperationResult", "Provenance"), reqs("AUZ-022", "AUZ-025"),
		az(opAuthOp, azD1).inst(1), azE(opValOp, azOR1, provenance).on(0))
	add("operation result with protocol_version 4", flags("OperationResult", "Version"), reqs("AUZ-022", "MSG-001"), az(opAuthOp, azD1), azE(opValOp, v4(azOR1), unsupported).on(0))
	add("operation result whose operation key is not a token", flags("OperationResult", "Token"), reqs("AUZ-022", "MSG-020"),
		az(opAuthOp, azD1), azE(opValOp, rep(azOR1, `"op-7"`, `"OP-7"`), badToken).on(0))
	add("failed status with an empty message", flags("OperationResult", "FailureMessage"), reqs("AUZ-022", "MSG-024"),
		az(opAuthOp, azD1), azE(opValOp, opRes(stFail("")), "InvalidOperationFailure").on(0))
	add("failed status with a 4096-byte message (the output limit does not apply)", flags("OperationResult", "FailureMessage", "Boundary", "LargeInput"), reqs("AUZ-022", "MSG-024"),
		az(opAuthOp, azD1), az(opValOp, opRes(stFail(strings.Repeat("m", 4096)))).on(0))
	add("failed status with a 4097-byte message", flags("OperationResult", "FailureMessage", "Boundary", "LargeInput"), reqs("AUZ-022", "MSG-024"),
		az(opAuthOp, azD1), azE(opValOp, opRes(stFail(strings.Repeat("m", 4097))), "OperationFailureTooLarge").on(0))
	add("succeeded scalar payload in an unknown session: the status is checked before the session", flags("OperationResult", "PayloadEnvelope", "CheckOrder"), reqs("AUZ-022", "AUZ-001"),
		az(opAuthOp, azD1), azE(opValOp, session2(opRes(stOK(jsv(`3`)))), envelope).on(0))
	add("operation result for another session", flags("OperationResult"), reqs("AUZ-022"), az(opAuthOp, azD1), azE(opValOp, session2(azOR1), unknownSess).on(0))
	add("operation result for another session and another key: the session comes first", flags("OperationResult", "CheckOrder"), reqs("AUZ-022", "AUZ-001"),
		az(opAuthOp, azD1), azE(opValOp, session2(rep(azOR1, `"op-7"`, `"op-8"`)), unknownSess).on(0))
	add("operation result naming another tool", flags("OperationResult"), reqs("AUZ-022"),
		az(opAuthOp, azD1), azE(opValOp, rep(azOR1, `"math.add"`, `"text.echo"`), "OperationResultMismatch").on(0))
	add("operation result naming another operation key", flags("OperationResult"), reqs("AUZ-022"),
		az(opAuthOp, azD1), azE(opValOp, rep(azOR1, `"op-7"`, `"op-8"`), "OperationResultMismatch").on(0))
	add("operation result naming another authorized dispatch", flags("OperationResult"), reqs("AUZ-022"),
		az(opAuthOp, azD1), az(opAuthOp, azD2), azE(opValOp, opResBody("d2", "math.add", "op-8", stRunning), "OperationResultMismatch").on(0))
	add("a running status is the response: a later succeeded status is a duplicate", flags("OperationResult", "DuplicateResult"), reqs("AUZ-022", "AUZ-023"),
		az(opAuthOp, azD1), az(opValOp, opRes(stRunning)).on(0), azE(opValOp, azOR1, dupResult).on(0))
	add("duplicate operation result with a text payload: the duplicate check comes before the grant", flags("OperationResult", "DuplicateResult", "CheckOrder"), reqs("AUZ-022", "AUZ-001"),
		az(opAuthOp, azD1), az(opValOp, azOR1).on(0), azE(opValOp, opRes(stOK(txt("3"))), dupResult).on(0))
	add("succeeded text payload for a json grant", flags("OperationResult"), reqs("AUZ-022", "MSG-012"),
		az(opAuthOp, azD1), azE(opValOp, opRes(stOK(txt("3"))), formatMis).on(0))
	add("succeeded payload of exactly max_output_bytes (40)", flags("OperationResult", "Boundary"), reqs("AUZ-022", "AUZ-010"),
		az(opAuthOp, azD1), az(opValOp, opRes(stOK(jsv(jsonOfSize(40))))).on(0))
	add("succeeded payload one byte over max_output_bytes", flags("OperationResult", "Boundary"), reqs("AUZ-022", "AUZ-010"),
		az(opAuthOp, azD1), azE(opValOp, opRes(stOK(jsv(jsonOfSize(41)))), outTooLarge).on(0))
	add("a refused operation result leaves the request open", flags("OperationResult", "FailureAtomic"), reqs("AUZ-003", "AUZ-022"),
		az(opAuthOp, azD1), azE(opValOp, opRes(stOK(jsv(jsonOfSize(41)))), outTooLarge).on(0), az(opValOp, azOR1).on(0))

	// ---- validate_reconciliation_result (AUZ-022) ----
	recRes := func(key, status string) string { return opResBody("rc1", "math.add", key, status) }
	add("failed status for an authorized reconciliation", flags("OperationResult", "Reconciliation"), reqs("AUZ-022"),
		az(opAuthRec, azRC1), az(opValRec, recRes("op-7", stFail("adder crashed"))).on(0))
	add("reconciliation result checked by another authorizer", flags("OperationResult", "Reconciliation", "Provenance"), reqs("AUZ-022", "AUZ-025"),
		az(opAuthRec, azRC1).inst(1), azE(opValRec, recRes("op-7", stRunning), provenance).on(0))
	add("reconciliation result naming another operation key", flags("OperationResult", "Reconciliation"), reqs("AUZ-022"),
		az(opAuthRec, azRC1), azE(opValRec, recRes("op-8", stRunning), "OperationResultMismatch").on(0))
	add("second reconciliation result", flags("OperationResult", "Reconciliation", "DuplicateResult"), reqs("AUZ-022", "AUZ-023"),
		az(opAuthRec, azRC1), az(opValRec, recRes("op-7", stRunning)).on(0), azE(opValRec, recRes("op-7", stRunning), dupResult).on(0))
	add("reconciliation result over max_output_bytes", flags("OperationResult", "Reconciliation", "Boundary"), reqs("AUZ-022", "AUZ-010"),
		az(opAuthRec, azRC1), azE(opValRec, recRes("op-7", stOK(jsv(jsonOfSize(41)))), outTooLarge).on(0))

	// ---- validate_compensation_result (AUZ-022) ----
	add("running status for an authorized compensation", flags("OperationResult", "Compensation"), reqs("AUZ-022"), az(opAuthCmp, azC1), az(opValCmp, azCR1).on(0))
	add("compensation result checked by another authorizer", flags("OperationResult", "Compensation", "Provenance"), reqs("AUZ-022", "AUZ-025"),
		az(opAuthCmp, azC1).inst(1), azE(opValCmp, azCR1, provenance).on(0))
	add("compensation result whose key lacks the cmp- prefix", flags("OperationResult", "Compensation", "CompensationKey"), reqs("AUZ-022", "MSG-019", "MSG-004"),
		az(opAuthCmp, azC1), azE(opValCmp, rep(azCR1, "cmp-undo-1", "undo-1"), "InvalidCompensationKey").on(0))
	add("compensation result with a short grant fingerprint", flags("OperationResult", "Compensation", "GrantFingerprint"), reqs("AUZ-022", "MSG-005"),
		az(opAuthCmp, azC1), azE(opValCmp, rep(azCR1, grantFP, grantFP[:63]), "InvalidCompensationGrantFingerprint").on(0))
	add("compensation result for another session", flags("OperationResult", "Compensation"), reqs("AUZ-022"), az(opAuthCmp, azC1), azE(opValCmp, session2(azCR1), unknownSess).on(0))
	for _, m := range []struct{ what, old, new string }{
		{"compensation key", "cmp-undo-1", "cmp-undo-2"},
		{"tenant scope", "tenant-release", "tenant-other"},
		{"grant fingerprint", grantFP, otherHexFP},
		{"operation key", "release-42-add", "release-43-add"},
	} {
		add("compensation result naming another "+m.what, flags("OperationResult", "Compensation"), reqs("AUZ-022"),
			az(opAuthCmp, azC1), azE(opValCmp, rep(azCR1, m.old, m.new), "CompensationResultMismatch").on(0))
	}
	add("second compensation result", flags("OperationResult", "Compensation", "DuplicateResult"), reqs("AUZ-022", "AUZ-023"),
		az(opAuthCmp, azC1), az(opValCmp, azCR1).on(0), azE(opValCmp, rep(azCR1, stRunning, stCancelled), dupResult).on(0))
	add("compensation result with a failed status and an empty message", flags("OperationResult", "Compensation", "FailureMessage"), reqs("AUZ-022", "MSG-024"),
		az(opAuthCmp, azC1), azE(opValCmp, rep(azCR1, stRunning, stFail("")), "InvalidOperationFailure").on(0))
	add("compensation result over max_output_bytes", flags("OperationResult", "Compensation", "Boundary"), reqs("AUZ-022", "AUZ-010"),
		az(opAuthCmp, azLC("l1", "cmp-1", `{}`)),
		azE(opValCmp, compResBody("l1", "ledger.post", "entry-1", "cmp-1", "tenant-a", azLedgerFP, stOK(jsv(jsonOfSize(65)))), outTooLarge).on(0))
	add("a retransmitted compensation gets its own result", flags("OperationResult", "Compensation", "CompensationIdentity"), reqs("AUZ-022", "AUZ-014"),
		az(opAuthCmp, azC1), az(opAuthCmp, relC("c2")), az(opValCmp, azCR1).on(0), az(opValCmp, rep(azCR1, `"request_id":"c1"`, `"request_id":"c2"`)).on(1))

	// ---- the 1,024-id bound (AUZ-006, AUZ-007, AUZ-024) ----
	add("1,024 reserved ids, then one more", flags("IdCapacity", "Repeat", "Boundary"), reqs("AUZ-006"),
		az(opAuthRec, azFill).times(1024), azE(opAuthRec, recBody("fill-1025", "math.add", "op-1"), capacity))
	add("a reserved id at capacity: duplicate comes before capacity", flags("IdCapacity", "Repeat", "CheckOrder"), reqs("AUZ-007"),
		az(opAuthRec, azFill).times(1024), azE(opAuthRec, recBody("fill-1", "math.add", "op-1"), dup))
	add("the 1,024th id is an invocation", flags("IdCapacity", "Repeat", "Boundary"), reqs("AUZ-006"),
		az(opAuthRec, azFill).times(1023), az(opAuth, azI1), azE(opAuth, azI2, capacity))
	add("spent call budget at capacity: the budget comes before capacity", flags("IdCapacity", "Repeat", "Budget", "CheckOrder"), reqs("AUZ-007", "AUZ-008"),
		az(opAuth, invBody("a1", "math.add", jsv(`{}`))), az(opAuth, invBody("a2", "math.add", jsv(`{}`))), az(opAuth, invBody("a3", "math.add", jsv(`{}`))),
		az(opAuthRec, azFill).times(1021), azE(opAuth, invBody("a4", "math.add", jsv(`{}`)), calls))
	add("tool without a grant at capacity", flags("IdCapacity", "Repeat", "CheckOrder"), reqs("AUZ-007"),
		az(opAuthRec, azFill).times(1024), azE(opAuth, invBody("r1", "text.shout", txt("hi")), unknownTool))
	add("dispatch at capacity", flags("IdCapacity", "Repeat"), reqs("AUZ-006", "AUZ-009"), az(opAuthRec, azFill).times(1024), azE(opAuthOp, azD1, capacity))
	add("compensation at capacity", flags("IdCapacity", "Repeat", "Compensation"), reqs("AUZ-006", "AUZ-013"), az(opAuthRec, azFill).times(1024), azE(opAuthCmp, azC1, capacity))
	add("cancellation at capacity", flags("IdCapacity", "Repeat", "Cancel"), reqs("AUZ-006", "AUZ-015"),
		az(opAuth, azI1), az(opAuthRec, azFill).times(1023), azE(opAuthCan, azX1, capacity).on(0))
	add("new compensation identity at capacity with its budget spent: the budget comes first", flags("IdCapacity", "Repeat", "Compensation", "CheckOrder"), reqs("AUZ-007", "AUZ-013"),
		az(opAuthCmp, azC1), az(opAuthRec, azFill).times(1023), azE(opAuthCmp, rep(relC("c2"), "cmp-undo-1", "cmp-undo-2"), compBudget))
	add("known compensation identity at capacity: no budget is needed, but an id is", flags("IdCapacity", "Repeat", "Compensation", "CompensationIdentity"), reqs("AUZ-007", "AUZ-014"),
		az(opAuthCmp, azC1), az(opAuthRec, azFill).times(1023), azE(opAuthCmp, relC("c2"), capacity))
	add("failed authorizations at 1,023 ids reserve nothing", flags("IdCapacity", "Repeat", "FailureAtomic"), reqs("AUZ-003", "AUZ-006"),
		az(opAuthRec, azFill).times(1023), azE(opAuth, invBody("r1", "text.shout", txt("hi")), unknownTool), az(opAuth, azI1))
	add("results are accepted at capacity", flags("IdCapacity", "Repeat", "Result"), reqs("AUZ-024"),
		az(opAuth, azI1), az(opAuthOp, azD1), az(opAuthRec, azFill).times(1022), az(opValRes, azR1).on(0), az(opValOp, azOR1).on(1), azE(opAuth, azI2, capacity))
	add("a cancellation result is accepted at capacity", flags("IdCapacity", "Repeat", "Cancel"), reqs("AUZ-024"),
		az(opAuth, azI1), az(opAuthCan, azX1).on(0), az(opAuthRec, azFill).times(1022), az(opValCan, azXR("acknowledged")).on(1))

	// ---- creating the authorizer (AUZ-002) ----
	bad := func(comment, manifest, kind string, r ...string) {
		cs = append(cs, azCase{meta: meta{comment, flags("InvalidManifest"), append(reqs("AUZ-002"), r...)}, manifest: manifest, manifestErr: kind})
	}
	bad("manifest with protocol_version 4", rep(azManifest, `"protocol_version":5`, `"protocol_version":4`), unsupported, "MAN-006")
	bad("manifest granting one tool twice", manifestJSON(sessionOne, azEcho, azEcho), "DuplicateGrant", "MAN-007")
	bad("manifest with a zero max_calls grant", manifestJSON(sessionOne, grantJSON("text.echo", "text", 0, 16, 8, 0, "")), "InvalidGrant", "MAN-002")
	cs = append(cs, azCase{meta: meta{"a manifest without grants is valid and grants nothing", flags("Authorize"), reqs("AUZ-002", "MAN-008")},
		manifest: manifestJSON(sessionOne), steps: []azStep{azE(opAuth, azI1, unknownTool)}})
	return cs
}
