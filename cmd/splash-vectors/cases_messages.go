package main

import (
	"fmt"
	"strings"
)

// Canonical forms of one message of each kind, all in session "session-1". They are written
// by hand from the field tables of the messages chapter and double as frame inputs.
const (
	sessionOne = "session-1"
	grantFP    = "b4586b43cee35f3490e1be033cf424c5d927417c4e5af7cd685123764a8c8be9"

	mOpen       = `{"type":"open_session","manifest":{"protocol_version":5,"session_id":"session-1","grants":[{"tool":"text.echo","format":"text","max_calls":1,"max_input_bytes":16384,"max_output_bytes":65536,"max_compensations":0,"resources":[]}]}}`
	mInvoke     = `{"type":"invoke","invocation":{"protocol_version":5,"session_id":"session-1","request_id":"request-1","tool":"text.echo","payload":{"format":"text","value":"hi"}}}`
	mResult     = `{"type":"result","result":{"protocol_version":5,"session_id":"session-1","request_id":"request-1","payload":{"format":"text","value":"ok"}}}`
	mDispatch   = `{"type":"dispatch_operation","request":{"protocol_version":5,"session_id":"session-1","request_id":"dispatch-1","tool":"math.add","operation_key":"op-7","payload":{"format":"json","value":{"a":1,"b":2}}}}`
	mOpResult   = `{"type":"operation_result","result":{"protocol_version":5,"session_id":"session-1","request_id":"dispatch-1","tool":"math.add","operation_key":"op-7","status":{"state":"succeeded","payload":{"format":"json","value":{"total":3}}}}}`
	mCompensate = `{"type":"compensate_operation","request":{"protocol_version":5,"session_id":"session-1","request_id":"compensate-1","tool":"release.publish","operation_key":"release-42-add","compensation_key":"cmp-undo-1","tenant_scope":"tenant-release","grant_fingerprint":"` + grantFP + `","payload":{"format":"json","value":{"undo":"release"}}}}`
	mCompResult = `{"type":"compensation_result","result":{"protocol_version":5,"session_id":"session-1","request_id":"compensate-1","tool":"release.publish","operation_key":"release-42-add","compensation_key":"cmp-undo-1","tenant_scope":"tenant-release","grant_fingerprint":"` + grantFP + `","status":{"state":"running"}}}`
	mReconcile  = `{"type":"reconcile_operation","request":{"protocol_version":5,"session_id":"session-1","request_id":"reconcile-1","tool":"math.add","operation_key":"op-7"}}`
	mReconciled = `{"type":"reconciled_operation","result":{"protocol_version":5,"session_id":"session-1","request_id":"reconcile-1","tool":"math.add","operation_key":"op-7","status":{"state":"failed","message":"adder crashed"}}}`
	mCancel     = `{"type":"cancel","request":{"protocol_version":5,"session_id":"session-1","cancellation_id":"cancel-1","request_id":"request-1","tool":"text.echo"}}`
	mCancelRes  = `{"type":"cancellation_result","result":{"protocol_version":5,"session_id":"session-1","cancellation_id":"cancel-1","request_id":"request-1","tool":"text.echo","outcome":"acknowledged"}}`
	mClose      = `{"type":"close_session","protocol_version":5,"session_id":"session-1"}`
)

// baseMessage is one canonical message with the spec requirements that define its kind.
type baseMessage struct {
	kind  string
	json  string
	reqs  []string
	host  bool // normally sent by the host
	label string
}

var baseMessages = []baseMessage{
	{"open_session", mOpen, reqs("MSG-025", "MSG-009", "MSG-008"), true, "open_session"},
	{"invoke", mInvoke, reqs("MSG-025", "MSG-014"), true, "invoke"},
	{"result", mResult, reqs("MSG-025", "MSG-014"), false, "result"},
	{"dispatch_operation", mDispatch, reqs("MSG-025", "MSG-016"), true, "dispatch_operation"},
	{"operation_result", mOpResult, reqs("MSG-025", "MSG-020", "MSG-022"), false, "operation_result"},
	{"compensate_operation", mCompensate, reqs("MSG-025", "MSG-018"), true, "compensate_operation"},
	{"compensation_result", mCompResult, reqs("MSG-025", "MSG-019", "MSG-022"), false, "compensation_result"},
	{"reconcile_operation", mReconcile, reqs("MSG-025", "MSG-017"), true, "reconcile_operation"},
	{"reconciled_operation", mReconciled, reqs("MSG-025", "MSG-020", "MSG-029"), false, "reconciled_operation"},
	{"cancel", mCancel, reqs("MSG-025", "MSG-015"), true, "cancel"},
	{"cancellation_result", mCancelRes, reqs("MSG-025", "MSG-015"), false, "cancellation_result"},
	{"close_session", mClose, reqs("MSG-025", "MSG-026"), true, "close_session"},
}

// tableErrors collects mistakes in the case tables themselves (a replacement that does not
// apply); the generator reports them like any other problem.
var tableErrors []string

// rep returns s with the first occurrence of old replaced by new, recording a table error
// when old does not occur.
func rep(s, old, new string) string {
	if !strings.Contains(s, old) {
		tableErrors = append(tableErrors, fmt.Sprintf("replacement %q not found in %q", old, clip(s)))
		return s
	}
	return strings.Replace(s, old, new, 1)
}

// msgCase is one row of the messages table. A zero lossy expectation means "same as
// preserve".
type msgCase struct {
	meta
	input    string
	preserve expect
	lossy    expect
}

func mc(comment, input string, preserve, lossy expect, f, r []string) msgCase {
	return msgCase{meta: meta{comment, f, r}, input: input, preserve: preserve, lossy: lossy}
}

// Pieces used to build variants.
var (
	invokeBody = `{"protocol_version":5,"session_id":"session-1","request_id":"request-1","tool":"text.echo","payload":{"format":"text","value":"hi"}}`
	token128   = strings.Repeat("r", 128)
	token129   = strings.Repeat("r", 129)
	msg2048e   = strings.Repeat("é", 2048)
)

// invokeWith returns an invoke message with the given JSON payload value.
func invokeWithJSON(value string) string {
	return `{"type":"invoke","invocation":{"protocol_version":5,"session_id":"session-1","request_id":"request-1","tool":"text.echo","payload":{"format":"json","value":` + value + `}}}`
}

func dispatchWithJSON(value string) string {
	return `{"type":"dispatch_operation","request":{"protocol_version":5,"session_id":"session-1","request_id":"dispatch-1","tool":"math.add","operation_key":"op-7","payload":{"format":"json","value":` + value + `}}}`
}

func reconciledWithStatus(status string) string {
	return `{"type":"reconciled_operation","result":{"protocol_version":5,"session_id":"session-1","request_id":"reconcile-1","tool":"math.add","operation_key":"op-7","status":` + status + `}}`
}

func openWithGrants(grants string) string {
	return `{"type":"open_session","manifest":{"protocol_version":5,"session_id":"session-1","grants":[` + grants + `]}}`
}

const grantEcho = `{"tool":"text.echo","format":"text","max_calls":1,"max_input_bytes":16384,"max_output_bytes":65536,"max_compensations":0,"resources":[]}`

// invokeOfSize returns a canonical invoke message of exactly n bytes (n large).
func invokeOfSize(n int) string {
	shell := `{"type":"invoke","invocation":{"protocol_version":5,"session_id":"session-1","request_id":"request-1","tool":"text.echo","payload":{"format":"text","value":""}}}`
	return rep(shell, `"value":""`, `"value":"`+strings.Repeat("a", n-len(shell))+`"`)
}

func messageCases() []msgCase {
	var cs []msgCase
	add := func(c ...msgCase) { cs = append(cs, c...) }
	for _, bm := range baseMessages {
		add(mc("canonical "+bm.label+" message", bm.json, out(bm.json), same, flags("CanonicalForm", "MessageKind"), bm.reqs))
	}
	okSame := func(comment, input, output string, f []string, r ...string) {
		add(mc(comment, input, out(output), same, f, r))
	}
	bad := func(comment, input, kind string, f []string, r ...string) {
		add(mc(comment, input, fail(kind), same, f, r))
	}

	// More shapes of each kind.
	okSame("operation_result with running status", rep(mOpResult, `{"state":"succeeded","payload":{"format":"json","value":{"total":3}}}`, `{"state":"running"}`),
		rep(mOpResult, `{"state":"succeeded","payload":{"format":"json","value":{"total":3}}}`, `{"state":"running"}`), flags("MessageKind"), "MSG-022")
	okSame("reconciled_operation with cancelled status", reconciledWithStatus(`{"state":"cancelled"}`), reconciledWithStatus(`{"state":"cancelled"}`), flags("MessageKind"), "MSG-022")
	okSame("reconciled_operation with a succeeded text payload", reconciledWithStatus(`{"state":"succeeded","payload":{"format":"text","value":"3"}}`),
		reconciledWithStatus(`{"state":"succeeded","payload":{"format":"text","value":"3"}}`), flags("MessageKind"), "MSG-022", "MSG-029")
	okSame("cancellation_result too_late", rep(mCancelRes, "acknowledged", "too_late"), rep(mCancelRes, "acknowledged", "too_late"), flags("MessageKind"), "MSG-006", "MSG-015")
	okSame("cancellation_result unsupported", rep(mCancelRes, "acknowledged", "unsupported"), rep(mCancelRes, "acknowledged", "unsupported"), flags("MessageKind"), "MSG-006", "MSG-015")
	okSame("dispatch_operation with a text payload", rep(mDispatch, `{"format":"json","value":{"a":1,"b":2}}`, `{"format":"text","value":"1+2"}`),
		rep(mDispatch, `{"format":"json","value":{"a":1,"b":2}}`, `{"format":"text","value":"1+2"}`), flags("MessageKind"), "MSG-016", "MSG-040")
	okSame("open_session with zero grants", openWithGrants(""), openWithGrants(""), flags("MessageKind"), "MAN-008")
	okSame("open_session whose resources are written sorted by kind then id",
		openWithGrants(`{"tool":"release.publish","format":"json","max_calls":1,"max_input_bytes":16384,"max_output_bytes":65536,"max_compensations":1,"resources":[{"kind":"secret","id":"release-token"},{"kind":"network_origin","id":"release-api"},{"kind":"file_root","id":"zz"},{"kind":"file_root","id":"aa"}]}`),
		openWithGrants(`{"tool":"release.publish","format":"json","max_calls":1,"max_input_bytes":16384,"max_output_bytes":65536,"max_compensations":1,"resources":[{"kind":"file_root","id":"aa"},{"kind":"file_root","id":"zz"},{"kind":"network_origin","id":"release-api"},{"kind":"secret","id":"release-token"}]}`),
		flags("Reencoding"), "MSG-007", "ENC-004")

	// Non-canonical but equivalent spellings.
	okSame("pretty-printed invoke", "{\n  \"type\": \"invoke\",\n  \"invocation\": {\n    \"protocol_version\": 5,\n    \"session_id\": \"session-1\",\n    \"request_id\": \"request-1\",\n    \"tool\": \"text.echo\",\n    \"payload\": { \"format\": \"text\", \"value\": \"hi\" }\n  }\n}\r\n",
		mInvoke, flags("Reencoding", "Whitespace"), "ENC-014", "ENC-001")
	okSame("type tag after the body", `{"invocation":`+invokeBody+`,"type":"invoke"}`, mInvoke, flags("Reencoding", "TagPosition"), "ENC-050")
	okSame("invocation members in reverse order", `{"type":"invoke","invocation":{"payload":{"format":"text","value":"hi"},"tool":"text.echo","request_id":"request-1","session_id":"session-1","protocol_version":5}}`,
		mInvoke, flags("Reencoding"), "ENC-002")
	okSame("payload value before format", rep(mInvoke, `{"format":"text","value":"hi"}`, `{"value":"hi","format":"text"}`), mInvoke, flags("Reencoding", "TagPosition"), "MSG-010", "ENC-050")
	okSame("escaped spelling of the type key", rep(mInvoke, `"type"`, `"\u0074ype"`), mInvoke, flags("Reencoding", "EscapedKey"), "ENC-023")
	okSame("escaped characters in a token value", rep(mInvoke, `"request-1"`, `"request\u002d1"`), mInvoke, flags("Reencoding", "StringEscape"), "ENC-023")
	okSame("state tag after the payload", rep(mOpResult, `{"state":"succeeded","payload":{"format":"json","value":{"total":3}}}`, `{"payload":{"format":"json","value":{"total":3}},"state":"succeeded"}`),
		mOpResult, flags("Reencoding", "TagPosition"), "ENC-050", "MSG-022")
	okSame("unknown member beside the close_session fields is dropped", rep(mClose, `"session_id"`, `"extra":[1,2],"session_id"`), mClose, flags("UnknownField"), "MSG-027", "ENC-044")
	okSame("unknown member in an invocation is dropped", rep(mInvoke, `"tool"`, `"priority":9,"tool"`), mInvoke, flags("UnknownField"), "MSG-021", "ENC-044")
	okSame("unknown member in a payload is dropped", rep(mInvoke, `"value":"hi"`, `"value":"hi","encoding":"utf-8"`), mInvoke, flags("UnknownField"), "MSG-010", "MSG-021")
	okSame("unknown members in manifest, grant and selector are dropped",
		`{"type":"open_session","manifest":{"protocol_version":5,"session_id":"session-1","grants":[{"tool":"text.echo","format":"text","max_calls":1,"max_input_bytes":16384,"max_output_bytes":65536,"max_compensations":0,"resources":[{"kind":"secret","id":"s","path":"/x"}],"label":"x"}],"comment":"hi"}}`,
		openWithGrants(`{"tool":"text.echo","format":"text","max_calls":1,"max_input_bytes":16384,"max_output_bytes":65536,"max_compensations":0,"resources":[{"kind":"secret","id":"s"}]}`),
		flags("UnknownField"), "MSG-021", "ENC-044")
	okSame("unknown member beside a deny body is dropped (the message envelope ignores unknown members)", rep(mCancel, `"type":"cancel"`, `"type":"cancel","note":"x"`), mCancel,
		flags("UnknownField"), "MSG-021", "MSG-027")
	okSame("unknown member in a unit status is dropped", rep(mCompResult, `{"state":"running"}`, `{"state":"running","payload":5}`), mCompResult, flags("UnknownField"), "MSG-022")
	okSame("unknown member in a reconcile request is dropped", rep(mReconcile, `"operation_key"`, `"attempt":2,"operation_key"`), mReconcile, flags("UnknownField"), "MSG-017", "MSG-021")
	okSame("unknown member in a reconcile result is dropped", rep(mReconciled, `"status"`, `"worker":"w1","status"`), mReconciled, flags("UnknownField"), "MSG-020", "MSG-021")
	okSame("repeated and unsorted resources are deduplicated and sorted",
		openWithGrants(`{"tool":"text.echo","format":"text","max_calls":1,"max_input_bytes":16384,"max_output_bytes":65536,"max_compensations":0,"resources":[{"kind":"secret","id":"b"},{"kind":"executable","id":"a"},{"kind":"secret","id":"b"},{"kind":"secret","id":"a"}]}`),
		openWithGrants(`{"tool":"text.echo","format":"text","max_calls":1,"max_input_bytes":16384,"max_output_bytes":65536,"max_compensations":0,"resources":[{"kind":"executable","id":"a"},{"kind":"secret","id":"a"},{"kind":"secret","id":"b"}]}`),
		flags("Reencoding", "Dedup"), "ENC-004", "ENC-048", "MSG-007")
	okSame("missing max_compensations and resources take their defaults",
		openWithGrants(`{"tool":"text.echo","format":"text","max_calls":1,"max_input_bytes":16384,"max_output_bytes":65536}`), mOpen, flags("DefaultField"), "ENC-046", "MSG-008")
	okSame("payload object keys are sorted and the last duplicate wins", dispatchWithJSON(`{"b":2,"a":0,"a":1}`), mDispatch, flags("DuplicateKey", "KeyOrder"), "ENC-003", "ENC-022")
	okSame("close_session in positional form", `["close_session",5,"session-1"]`, mClose, flags("PositionalArray"), "ENC-049")
	okSame("invocation in positional form", `{"type":"invoke","invocation":[5,"session-1","request-1","text.echo",["text","hi"]]}`, mInvoke, flags("PositionalArray"), "ENC-049")
	okSame("whole invoke message in positional form", `["invoke",[5,"session-1","request-1","text.echo",{"format":"text","value":"hi"}]]`, mInvoke, flags("PositionalArray"), "ENC-049")
	okSame("manifest and grant in positional form with trailing defaults left out", `{"type":"open_session","manifest":[5,"session-1",[["text.echo","text",1,16384,65536]]]}`, mOpen, flags("PositionalArray", "DefaultField"), "ENC-049", "ENC-046")
	okSame("failed status in positional form", reconciledWithStatus(`["failed","adder crashed"]`), mReconciled, flags("PositionalArray"), "ENC-049", "MSG-022")
	okSame("json payload in positional form", rep(mDispatch, `{"format":"json","value":{"a":1,"b":2}}`, `["json",{"b":2,"a":1}]`), mDispatch, flags("PositionalArray", "KeyOrder"), "ENC-049", "MSG-010")
	bad("positional close_session with an extra element", `["close_session",5,"session-1","x"]`, ser, flags("PositionalArray"), "ENC-049")
	bad("positional close_session missing the session id", `["close_session",5]`, ser, flags("PositionalArray", "MissingField"), "ENC-049")
	bad("positional invocation with an extra element", `{"type":"invoke","invocation":[5,"session-1","request-1","text.echo",["text","hi"],1]}`, ser, flags("PositionalArray"), "ENC-049")

	// Tag, missing, duplicate and null members.
	bad("missing type", `{"protocol_version":5,"session_id":"session-1"}`, ser, flags("MissingField"), "MSG-027")
	bad("type is not a string", rep(mClose, `"close_session"`, `5`), ser, flags("UnknownVariant"), "MSG-027")
	bad("unknown type", rep(mInvoke, `"invoke"`, `"invocation"`), ser, flags("UnknownVariant"), "MSG-027", "ENC-051")
	bad("type spelled in CamelCase", rep(mInvoke, `"invoke"`, `"Invoke"`), ser, flags("UnknownVariant"), "MSG-027", "ENC-051")
	bad("type key with different case", rep(mInvoke, `"type"`, `"Type"`), ser, flags("MissingField"), "ENC-023", "MSG-027")
	bad("duplicate type", rep(mClose, `"type":"close_session"`, `"type":"close_session","type":"close_session"`), ser, flags("DuplicateField"), "ENC-045")
	bad("duplicate body member", `{"type":"invoke","invocation":`+invokeBody+`,"invocation":`+invokeBody+`}`, ser, flags("DuplicateField"), "ENC-045")
	bad("duplicate field in an invocation", rep(mInvoke, `"tool"`, `"request_id":"request-2","tool"`), ser, flags("DuplicateField"), "ENC-045")
	bad("duplicate format in a payload", rep(mInvoke, `"value":"hi"`, `"value":"hi","format":"text"`), ser, flags("DuplicateField"), "ENC-045", "MSG-010")
	bad("duplicate value in a payload", rep(mInvoke, `"value":"hi"`, `"value":"hi","value":"ho"`), ser, flags("DuplicateField"), "ENC-045", "MSG-010")
	bad("duplicate state in a status", rep(mCompResult, `{"state":"running"}`, `{"state":"running","state":"running"}`), ser, flags("DuplicateField"), "ENC-045")
	bad("duplicate protocol_version in close_session", rep(mClose, `"session_id"`, `"protocol_version":5,"session_id"`), ser, flags("DuplicateField"), "ENC-045")
	bad("missing request_id", rep(mInvoke, `"request_id":"request-1",`, ``), ser, flags("MissingField"), "ENC-046", "MSG-014")
	bad("missing session_id in close_session", rep(mClose, `,"session_id":"session-1"`, ``), ser, flags("MissingField"), "ENC-046", "MSG-026")
	bad("missing body member", `{"type":"invoke"}`, ser, flags("MissingField"), "ENC-046", "MSG-025")
	bad("missing payload value", rep(mInvoke, `,"value":"hi"`, ``), ser, flags("MissingField"), "MSG-010")
	bad("missing payload format", rep(mInvoke, `"format":"text",`, ``), ser, flags("MissingField"), "MSG-010")
	bad("text payload whose value is a number", rep(mInvoke, `"value":"hi"`, `"value":5`), ser, flags("Validation"), "MSG-010")
	okSame("json payload value null is accepted in an invocation", invokeWithJSON(`null`), invokeWithJSON(`null`), flags("NullField", "HeaderOnly"), "MSG-010", "MSG-032")
	bad("resources null", openWithGrants(`{"tool":"text.echo","format":"text","max_calls":1,"max_input_bytes":16384,"max_output_bytes":65536,"max_compensations":0,"resources":null}`), ser, flags("NullField"), "ENC-047")
	bad("max_calls null", rep(mOpen, `"max_calls":1`, `"max_calls":null`), ser, flags("NullField"), "ENC-047")
	bad("session_id null", rep(mClose, `"session-1"`, `null`), ser, flags("NullField"), "ENC-047")

	// Deny-unknown-fields structures.
	bad("unknown member in a dispatch request", rep(mDispatch, `"operation_key"`, `"retry":true,"operation_key"`), ser, flags("DenyUnknownFields"), "MSG-021", "ENC-044")
	bad("unknown member in a compensation request", rep(mCompensate, `"tenant_scope"`, `"reason":"x","tenant_scope"`), ser, flags("DenyUnknownFields"), "MSG-021", "ENC-044")
	bad("unknown member in a compensation result", rep(mCompResult, `"status"`, `"worker":"w","status"`), ser, flags("DenyUnknownFields"), "MSG-021", "ENC-044")
	bad("unknown member in a cancellation request", rep(mCancel, `"tool"`, `"reason":"user","tool"`), ser, flags("DenyUnknownFields"), "MSG-021", "ENC-044")
	bad("unknown member in a cancellation result", rep(mCancelRes, `"outcome"`, `"at":1,"outcome"`), ser, flags("DenyUnknownFields"), "MSG-021", "ENC-044")

	// Enumerations.
	bad("format in capitals", rep(mInvoke, `"format":"text"`, `"format":"TEXT"`), ser, flags("UnknownVariant"), "ENC-051", "MSG-006")
	bad("cancellation outcome in CamelCase", rep(mCancelRes, `"acknowledged"`, `"Acknowledged"`), ser, flags("UnknownVariant"), "ENC-051", "MSG-006")
	bad("pending is not a wire status", rep(mCompResult, `"running"`, `"pending"`), ser, flags("UnknownVariant"), "MSG-023")
	bad("unknown resource kind", openWithGrants(rep(grantEcho, `"resources":[]`, `"resources":[{"kind":"File_root","id":"a"}]`)), ser, flags("UnknownVariant"), "ENC-051", "MSG-006")
	bad("resource kind is not a string", openWithGrants(rep(grantEcho, `"resources":[]`, `"resources":[{"kind":0,"id":"a"}]`)), ser, flags("UnknownVariant"), "ENC-051")

	// Integer-typed fields.
	bad("protocol_version 5.0", rep(mClose, `:5,`, `:5.0,`), ser, flags("IntegerField", "Version"), "ENC-042")
	bad("protocol_version as a string", rep(mClose, `:5,`, `:"5",`), ser, flags("IntegerField", "Version"), "ENC-042")
	bad("protocol_version 5e0", rep(mClose, `:5,`, `:5e0,`), ser, flags("IntegerField", "Version"), "ENC-042")
	bad("protocol_version beyond 16 bits", rep(mClose, `:5,`, `:65541,`), ser, flags("IntegerField", "Version", "Boundary"), "ENC-042")
	bad("protocol_version negative", rep(mClose, `:5,`, `:-1,`), ser, flags("IntegerField", "Version"), "ENC-042")
	bad("protocol_version 4", rep(mClose, `:5,`, `:4,`), "UnsupportedVersion", flags("Version"), "MSG-001")
	bad("protocol_version 6", rep(mInvoke, `:5,`, `:6,`), "UnsupportedVersion", flags("Version"), "MSG-001")
	bad("protocol_version 0 in a manifest", rep(mOpen, `:5,`, `:0,`), "UnsupportedVersion", flags("Version"), "MSG-001", "MAN-006")
	bad("protocol_version 65535", rep(mCancel, `:5,`, `:65535,`), "UnsupportedVersion", flags("Version", "Boundary"), "MSG-001")
	bad("max_calls beyond 32 bits", rep(mOpen, `"max_calls":1`, `"max_calls":4294967296`), ser, flags("IntegerField", "Boundary"), "ENC-042")
	okSame("max_calls at the 32-bit maximum", rep(mOpen, `"max_calls":1`, `"max_calls":4294967295`), rep(mOpen, `"max_calls":1`, `"max_calls":4294967295`), flags("IntegerField", "Boundary"), "ENC-042", "MSG-008")
	bad("max_input_bytes with a fraction", rep(mOpen, `"max_input_bytes":16384`, `"max_input_bytes":16384.0`), ser, flags("IntegerField"), "ENC-042")
	add(mc("protocol_version -0 in close_session: read as 0 in preserve mode, rejected in lossy mode", rep(mClose, `:5,`, `:-0,`),
		fail("UnsupportedVersion"), fail(ser), flags("NegativeZero", "ModeDependent", "IntegerField"), reqs("ENC-043", "MSG-001", "ERR-001", "ERR-010")))
	add(mc("protocol_version -0 in an invocation", rep(mInvoke, `:5,`, `:-0,`),
		fail("UnsupportedVersion"), fail(ser), flags("NegativeZero", "ModeDependent", "IntegerField"), reqs("ENC-043")))
	add(mc("max_compensations -0 is 0 in preserve mode", rep(mOpen, `"max_compensations":0`, `"max_compensations":-0`),
		out(mOpen), fail(ser), flags("NegativeZero", "ModeDependent", "IntegerField"), reqs("ENC-043")))
	add(mc("max_calls -0 is a zero limit in preserve mode", rep(mOpen, `"max_calls":1`, `"max_calls":-0`),
		fail("InvalidGrant"), fail(ser), flags("NegativeZero", "ModeDependent", "IntegerField"), reqs("ENC-043", "MAN-002", "ERR-001", "ERR-010")))

	// Tokens and other string rules.
	bad("session id with a capital letter", rep(mClose, `"session-1"`, `"Session-1"`), "InvalidToken", flags("Token", "Validation"), "MSG-002", "MSG-026")
	bad("empty request id", rep(mInvoke, `"request-1"`, `""`), "InvalidToken", flags("Token", "Validation"), "MSG-002", "MSG-014")
	bad("tool with a space", rep(mInvoke, `"text.echo"`, `"text echo"`), "InvalidToken", flags("Token", "Validation"), "MSG-002", "MSG-014")
	bad("tool with a slash", rep(mDispatch, `"math.add"`, `"math/add"`), "InvalidToken", flags("Token", "Validation"), "MSG-002", "MSG-016")
	okSame("128-byte request id", rep(mInvoke, `"request-1"`, `"`+token128+`"`), rep(mInvoke, `"request-1"`, `"`+token128+`"`), flags("Token", "Boundary"), "MSG-002", "MSG-041")
	bad("129-byte request id", rep(mInvoke, `"request-1"`, `"`+token129+`"`), "InvalidToken", flags("Token", "Boundary"), "MSG-002", "MSG-041")
	okSame("tokens made only of punctuation", rep(rep(mCancel, `"cancel-1"`, `"."`), `"request-1"`, `"..-_"`), rep(rep(mCancel, `"cancel-1"`, `"."`), `"request-1"`, `"..-_"`), flags("Token"), "MSG-002")
	bad("non-ASCII session id", rep(mClose, `"session-1"`, `"sessión"`), "InvalidToken", flags("Token", "Unicode"), "MSG-002")
	bad("operation key with a capital letter", rep(mReconcile, `"op-7"`, `"Op-7"`), "InvalidToken", flags("Token", "Validation"), "MSG-002", "MSG-017")
	bad("tenant scope with a colon", rep(mCompensate, `"tenant-release"`, `"tenant:release"`), "InvalidToken", flags("Token", "Validation"), "MSG-002", "MSG-018")
	bad("cancellation id with a space", rep(mCancel, `"cancel-1"`, `"cancel 1"`), "InvalidToken", flags("Token", "Validation"), "MSG-002", "MSG-015")
	bad("compensation key without the cmp- prefix", rep(mCompensate, `"cmp-undo-1"`, `"undo-1"`), "InvalidCompensationKey", flags("CompensationKey", "Validation"), "MSG-004", "MSG-018")
	okSame("compensation key cmp- alone is valid", rep(mCompensate, `"cmp-undo-1"`, `"cmp-"`), rep(mCompensate, `"cmp-undo-1"`, `"cmp-"`), flags("CompensationKey", "Boundary"), "MSG-004")
	bad("compensation key CMP- fails the token rule first", rep(mCompensate, `"cmp-undo-1"`, `"CMP-undo"`), "InvalidToken", flags("CompensationKey", "CheckOrder"), "MSG-004")
	bad("compensation key cmp_ lacks the prefix", rep(mCompResult, `"cmp-undo-1"`, `"cmp_undo"`), "InvalidCompensationKey", flags("CompensationKey"), "MSG-004", "MSG-019")
	bad("uppercase grant fingerprint", rep(mCompensate, grantFP, strings.ToUpper(grantFP)), "InvalidCompensationGrantFingerprint", flags("GrantFingerprint"), "MSG-005", "MSG-018", "FP-020")
	bad("63-digit grant fingerprint", rep(mCompensate, grantFP, grantFP[:63]), "InvalidCompensationGrantFingerprint", flags("GrantFingerprint", "Boundary"), "MSG-005")
	bad("65-digit grant fingerprint", rep(mCompResult, grantFP, grantFP+"0"), "InvalidCompensationGrantFingerprint", flags("GrantFingerprint", "Boundary"), "MSG-005", "MSG-019")
	bad("cancellation id equal to its target request id", rep(mCancel, `"cancel-1"`, `"request-1"`), "CancellationIdMatchesRequest", flags("Cancellation", "Validation"), "MSG-015")
	bad("cancellation result id equal to its target request id", rep(mCancelRes, `"cancel-1"`, `"request-1"`), "CancellationIdMatchesRequest", flags("Cancellation", "Validation"), "MSG-015")
	bad("version is checked before the session id", rep(rep(mInvoke, `:5,`, `:4,`), `"session-1"`, `"S"`), "UnsupportedVersion", flags("CheckOrder"), "MSG-014", "ERR-006")
	bad("a bad token is checked before the cancellation id rule", rep(rep(mCancel, `"cancel-1"`, `"request-1"`), `"text.echo"`, `"Text"`), "InvalidToken", flags("CheckOrder"), "MSG-015", "ERR-006")
	bad("compensation key is checked before the grant fingerprint", rep(rep(mCompensate, `"cmp-undo-1"`, `"undo"`), grantFP, "x"), "InvalidCompensationKey", flags("CheckOrder"), "MSG-018", "ERR-006")

	// Status validation.
	bad("failed status with an empty message", reconciledWithStatus(`{"state":"failed","message":""}`), "InvalidOperationFailure", flags("FailureMessage"), "MSG-024")
	okSame("failed status message of exactly 4096 bytes", reconciledWithStatus(`{"state":"failed","message":"`+msg2048e+`"}`), reconciledWithStatus(`{"state":"failed","message":"`+msg2048e+`"}`), flags("FailureMessage", "Boundary"), "MSG-024", "MSG-041")
	bad("failed status message of 4097 bytes", reconciledWithStatus(`{"state":"failed","message":"`+msg2048e+`a"}`), "OperationFailureTooLarge", flags("FailureMessage", "Boundary"), "MSG-024", "MSG-041")
	bad("failed status without a message", reconciledWithStatus(`{"state":"failed"}`), ser, flags("MissingField"), "MSG-022")
	bad("succeeded status without a payload", reconciledWithStatus(`{"state":"succeeded"}`), ser, flags("MissingField"), "MSG-022")

	// Payload checks: full for durable messages, header only for invoke and result.
	bad("dispatch with a scalar json payload", dispatchWithJSON(`5`), "InvalidJsonEnvelope", flags("PayloadEnvelope", "Validation"), "MSG-016", "MSG-031", "MSG-035")
	bad("dispatch with a null json payload", dispatchWithJSON(`null`), "InvalidJsonEnvelope", flags("PayloadEnvelope", "NullField"), "MSG-016", "MSG-035")
	bad("dispatch with 32 nested arrays around a number", dispatchWithJSON(nest(32, "[", "]", "1")), "JsonPayloadTooDeep", flags("PayloadDepth", "Boundary"), "MSG-016", "MSG-036")
	okSame("dispatch with 31 nested arrays around a number", dispatchWithJSON(nest(31, "[", "]", "1")), dispatchWithJSON(nest(31, "[", "]", "1")), flags("PayloadDepth", "Boundary"), "MSG-036")
	bad("compensation request with a string json payload", rep(mCompensate, `{"undo":"release"}`, `"release"`), "InvalidJsonEnvelope", flags("PayloadEnvelope"), "MSG-018", "MSG-035")
	bad("operation result whose succeeded payload is a scalar", rep(mOpResult, `{"total":3}`, `3`), "InvalidJsonEnvelope", flags("PayloadEnvelope"), "MSG-020", "MSG-024", "MSG-031")
	bad("compensation result whose succeeded payload is too deep", rep(mCompResult, `{"state":"running"}`, `{"state":"succeeded","payload":{"format":"json","value":`+nest(33, "[", "]", "")+`}}`), "JsonPayloadTooDeep", flags("PayloadDepth"), "MSG-019", "MSG-024", "MSG-036")
	okSame("invoke with a scalar json payload passes decoding", invokeWithJSON(`5`), invokeWithJSON(`5`), flags("HeaderOnly", "PayloadEnvelope"), "MSG-032", "MSG-011")
	okSame("invoke with a 40-deep json payload passes decoding", invokeWithJSON(nest(40, "[", "]", "")), invokeWithJSON(nest(40, "[", "]", "")), flags("HeaderOnly", "PayloadDepth"), "MSG-032", "MSG-011")
	okSame("result with a string json payload passes decoding", rep(mResult, `{"format":"text","value":"ok"}`, `{"format":"json","value":"ok"}`), rep(mResult, `{"format":"text","value":"ok"}`, `{"format":"json","value":"ok"}`), flags("HeaderOnly"), "MSG-032")
	okSame("invoke payload nested to 127 document levels", invokeWithJSON(nest(124, "[", "]", "")), invokeWithJSON(nest(124, "[", "]", "")), flags("RecursionLimit", "Boundary", "HeaderOnly"), "ENC-021", "MSG-032")
	bad("invoke payload nested to 128 document levels", invokeWithJSON(nest(125, "[", "]", "")), ser, flags("RecursionLimit", "Boundary"), "ENC-021")

	// Manifest validation inside open_session.
	bad("grant with max_calls 0", rep(mOpen, `"max_calls":1`, `"max_calls":0`), "InvalidGrant", flags("Validation"), "MAN-001", "MAN-002", "MSG-031")
	bad("grant with max_output_bytes 0", rep(mOpen, `"max_output_bytes":65536`, `"max_output_bytes":0`), "InvalidGrant", flags("Validation"), "MAN-002")
	bad("two grants for one tool", openWithGrants(grantEcho+","+grantEcho), "DuplicateGrant", flags("Validation"), "MAN-007")
	bad("manifest session id invalid", rep(mOpen, `"session-1"`, `"session 1"`), "InvalidToken", flags("Token"), "MAN-006")

	// Numbers in payloads (both modes).
	add(mc("dispatch payload with -0, 1.50 and 1e2", dispatchWithJSON(`{"n":[-0,1.50,1e2]}`),
		out(dispatchWithJSON(`{"n":[0,1.50,1e+2]}`)), out(dispatchWithJSON(`{"n":[-0.0,1.5,100.0]}`)),
		flags("ModeDependent", "NonPortable", "NegativeZero"), reqs("ENC-024", "ENC-028", "ENC-041")))
	add(mc("invoke payload with 1e400", invokeWithJSON(`[1e400]`), out(invokeWithJSON(`[1e+400]`)), fail(ser),
		flags("ModeDependent", "OutOfRange"), reqs("ENC-031", "ENC-041")))
	add(mc("private number object in a payload", invokeWithJSON(`[{"$serde_json::private::Number":"7"}]`), out(invokeWithJSON(`[7]`)), out(invokeWithJSON(`[{"$serde_json::private::Number":"7"}]`)),
		flags("ModeDependent", "PrivateNumberKey"), reqs("ENC-026", "ENC-027")))
	okSame("portable numbers are written identically in both modes", invokeWithJSON(`[0,-1,1.5,0.1,1e+16,1.5e-7,18446744073709551615]`), invokeWithJSON(`[0,-1,1.5,0.1,1e+16,1.5e-7,18446744073709551615]`),
		flags("Float", "Integer"), "ENC-034", "ENC-035", "ENC-041")

	// Size limit.
	okSame("message of exactly 1048576 bytes", invokeOfSize(1<<20), invokeOfSize(1<<20), flags("SizeLimit", "Boundary", "LargeInput"), "MSG-033", "MSG-041", "ERR-018")
	bad("message of 1048577 bytes", invokeOfSize(1<<20+1), "WireFrameTooLarge", flags("SizeLimit", "Boundary", "LargeInput"), "MSG-033", "MSG-041", "ERR-018")
	bad("whitespace counts toward the size limit", invokeOfSize(1<<20)+" ", "WireFrameTooLarge", flags("SizeLimit", "Boundary", "LargeInput", "Whitespace"), "MSG-033")
	// Appended rows (tcIds are permanent: add new rows only here, at the end).
	bad("an attenuation is not a message kind", `{"type":"attenuate","grants":{}}`, ser, flags("UnknownVariant"), "MAN-012", "MSG-027")
	bad("a manifest attenuation body under open_session does not decode", `{"type":"open_session","manifest":{"allowed_tools":["a"],"grants":{}}}`, ser, flags("MissingField"), "MAN-012", "MSG-009")
	// Inside a message body serde buffers the content, and a buffered internally tagged enum
	// tag also accepts a variant index; at the top level the message tag must be a string.
	okSame("status tag given as variant index 0 inside a message body reads as running", reconciledWithStatus(`{"state":0}`), reconciledWithStatus(`{"state":"running"}`), flags("Reencoding", "TagPosition"), "MSG-022")
	okSame("status tag given as variant index 3 reads as cancelled", reconciledWithStatus(`{"state":3}`), reconciledWithStatus(`{"state":"cancelled"}`), flags("Reencoding", "TagPosition"), "MSG-022")
	okSame("status tag given as variant index 1 reads as succeeded", reconciledWithStatus(`{"state":1,"payload":{"format":"text","value":"3"}}`), reconciledWithStatus(`{"state":"succeeded","payload":{"format":"text","value":"3"}}`), flags("Reencoding", "TagPosition"), "MSG-022")
	bad("status variant index out of range", reconciledWithStatus(`{"state":4}`), ser, flags("UnknownVariant"), "MSG-022", "MSG-023")
	bad("message type given as a number at the top level", `{"type":11,"protocol_version":5,"session_id":"session-1"}`, ser, flags("UnknownVariant"), "MSG-027")
	bad("payload format given as a variant index", rep(mInvoke, `"format":"text"`, `"format":0`), ser, flags("UnknownVariant"), "MSG-010", "ENC-051")
	return cs
}
