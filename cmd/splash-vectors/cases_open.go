package main

import (
	"fmt"
	"strings"
)

// openStep is the expected result of opening one line: an error kind, or success with the
// sequence and the canonical message (its type is derived from the message).
type openStep struct {
	err string
	seq uint64
	msg string
}

func opened(seq uint64, msg string) openStep { return openStep{seq: seq, msg: msg} }
func rejected(kind string) openStep          { return openStep{err: kind} }

// openCase is one row of the frames_open table: lines opened in order by one fresh opener of
// the given receiving role (key 07…07, session "session-1"). Rows run in preserve mode and,
// when lossy is set, in lossy mode too with the lossy expectations (nil: same as preserve).
type openCase struct {
	meta
	receiver  string
	lines     []string
	preserve  []openStep
	lossy     []openStep
	alsoLossy bool
	start     uint64 // first expected incoming sequence; 0 means 1
}

// frame returns the independently sealed canonical line of msg at seq, sent by sender with
// key 07 in session-1.
func frame(sender string, seq uint64, msg string) string {
	return indSeal(key07, sender, seq, sessionOne, msg).line
}

// mutation changes one byte of a line: the byte at offset within the first occurrence of
// anchor becomes b (or, when b is 0, the next lowercase hex digit).
type mutation struct {
	class   string // flag naming the position class
	what    string // words for the comment
	anchor  string
	offset  int
	b       byte
	expect  string
	reqs    []string
	fromEnd bool // anchor searched from the end of the line
}

func applyMutation(line string, m mutation) (string, bool) {
	i := strings.Index(line, m.anchor)
	if m.fromEnd {
		i = strings.LastIndex(line, m.anchor)
	}
	if i < 0 {
		return "", false
	}
	pos := i + m.offset
	b := m.b
	if b == 0 {
		b = hexNext(line[pos])
	}
	if line[pos] == b {
		return "", false
	}
	return line[:pos] + string([]byte{b}) + line[pos+1:], true
}

// tamperTemplates apply to every base frame; kindTampers add one value change per kind.
func tamperTemplates(bm baseMessage) []mutation {
	ms := []mutation{
		{"TamperSequence", "sequence digit 1 changed to 2", `"sequence":1`, 11, '2', "InvalidAuthenticationTag", reqs("FRM-007", "FRM-025"), false},
		{"TamperSequence", "sequence digit 1 changed to 0", `"sequence":1`, 11, '0', "InvalidSequence", reqs("FRM-002", "FRM-025"), false},
		{"TamperSequence", "sequence digit 1 changed to a letter", `"sequence":1`, 11, 'x', "Serialization", reqs("FRM-003"), false},
		{"TamperFieldName", "member name sequence misspelled", `"sequence"`, 8, 'f', "Serialization", reqs("FRM-001", "FRM-003"), false},
		{"TamperFieldName", "member name message misspelled", `"message"`, 7, 'f', "Serialization", reqs("FRM-001", "FRM-003"), false},
		{"TamperFieldName", "member name auth_tag misspelled", `"auth_tag"`, 8, 'h', "Serialization", reqs("FRM-001", "FRM-003"), false},
		{"TamperType", "member name type misspelled", `"type"`, 4, 'f', "Serialization", reqs("MSG-027", "FRM-003"), false},
		{"TamperType", "last letter of the type value changed", `"type":"` + bm.kind + `"`, 7 + len(bm.kind), 'q', "Serialization", reqs("MSG-027", "ENC-051"), false},
		{"TamperValue", "protocol_version 5 changed to 4", `"protocol_version":5`, 19, '4', "UnsupportedVersion", reqs("MSG-001", "FRM-002"), false},
		{"TamperValue", "protocol_version 5 changed to a letter", `"protocol_version":5`, 19, 'v', "Serialization", reqs("FRM-003"), false},
		{"TamperValue", "session id digit changed (names another session under the same tag)", `"session-1"`, 9, '2', "InvalidAuthenticationTag", reqs("FRM-009", "FRM-027"), false},
		{"TamperValue", "session id letter made uppercase", `"session-1"`, 1, 'S', "InvalidToken", reqs("MSG-002", "FRM-002"), false},
		{"TamperTag", "first tag digit changed", `"auth_tag":"`, 12, 0, "InvalidAuthenticationTag", reqs("FRM-014", "FRM-025"), false},
		{"TamperTag", "middle tag digit changed", `"auth_tag":"`, 12 + 31, 0, "InvalidAuthenticationTag", reqs("FRM-014", "FRM-025"), false},
		{"TamperTag", "last tag digit changed", `"auth_tag":"`, 12 + 63, 0, "InvalidAuthenticationTag", reqs("FRM-014", "FRM-025"), false},
		{"TamperTag", "first tag digit replaced by the non-hex letter G", `"auth_tag":"`, 12, 'G', "InvalidAuthenticationTag", reqs("FRM-016"), false},
		{"TamperStructure", "opening brace changed to a bracket", `{"sequence"`, 0, '[', "Serialization", reqs("FRM-003"), false},
		{"TamperStructure", "colon after sequence changed to a semicolon", `"sequence":`, 10, ';', "Serialization", reqs("FRM-003"), false},
		{"TamperStructure", "closing brace changed to a space", `"}`, 1, ' ', "Serialization", reqs("FRM-003"), false},
	}
	ms[18].fromEnd = true
	if bm.kind != "close_session" {
		body := map[string]string{"open_session": "manifest", "invoke": "invocation"}[bm.kind]
		if body == "" {
			if strings.Contains(bm.json, `"request":`) {
				body = "request"
			} else {
				body = "result"
			}
		}
		ms = append(ms, mutation{"TamperFieldName", "body member name " + body + " misspelled", `"` + body + `"`, len(body), 'z', "Serialization", reqs("MSG-025", "FRM-003"), false})
	}
	ms = append(ms, kindTampers[bm.kind]...)
	return ms
}

// kindTampers change a value specific to each message kind.
var kindTampers = map[string][]mutation{
	"open_session": {
		{"TamperValue", "max_calls 1 changed to 2", `"max_calls":1`, 12, '2', "InvalidAuthenticationTag", reqs("FRM-010", "FRM-025"), false},
		{"TamperValue", "max_calls 1 changed to 0", `"max_calls":1`, 12, '0', "InvalidGrant", reqs("MAN-002", "FRM-002"), false},
		{"TamperValue", "tool name letter changed", `"text.echo"`, 9, 'p', "InvalidAuthenticationTag", reqs("FRM-025"), false},
		{"TamperValue", "format text changed to test", `"format":"text"`, 12, 's', "Serialization", reqs("ENC-051"), false},
	},
	"invoke": {
		{"TamperPayload", "text payload letter changed", `"value":"hi"`, 10, 'j', "InvalidAuthenticationTag", reqs("FRM-025"), false},
		{"TamperValue", "request id digit changed", `"request-1"`, 9, '9', "InvalidAuthenticationTag", reqs("FRM-025"), false},
		{"TamperValue", "tool name letter made uppercase", `"text.echo"`, 1, 'T', "InvalidToken", reqs("MSG-014", "FRM-002"), false},
	},
	"result": {
		{"TamperPayload", "text payload letter changed", `"value":"ok"`, 10, 'l', "InvalidAuthenticationTag", reqs("FRM-025"), false},
		{"TamperPayload", "payload format text changed to json (value becomes a JSON string)", `"format":"text"`, 10, 'j', "Serialization", reqs("ENC-051"), false},
	},
	"dispatch_operation": {
		{"TamperPayload", "json payload number changed", `{"a":1`, 5, '3', "InvalidAuthenticationTag", reqs("FRM-025"), false},
		{"TamperPayload", "json payload key changed", `{"a":1`, 2, 'c', "InvalidAuthenticationTag", reqs("FRM-025"), false},
		{"TamperValue", "operation key digit changed", `"op-7"`, 4, '8', "InvalidAuthenticationTag", reqs("FRM-025"), false},
	},
	"operation_result": {
		{"TamperPayload", "succeeded payload number changed", `"total":3`, 8, '4', "InvalidAuthenticationTag", reqs("FRM-025"), false},
		{"TamperValue", "state succeeded misspelled", `"succeeded"`, 9, 'e', "Serialization", reqs("ENC-051", "MSG-022"), false},
	},
	"compensate_operation": {
		{"TamperPayload", "json payload string changed", `"undo":"release"`, 14, 'f', "InvalidAuthenticationTag", reqs("FRM-025"), false},
		{"TamperValue", "grant fingerprint digit changed", `"grant_fingerprint":"`, 21, 0, "InvalidAuthenticationTag", reqs("FRM-025"), false},
		{"TamperValue", "grant fingerprint digit made uppercase", `"grant_fingerprint":"b`, 21, 'B', "InvalidCompensationGrantFingerprint", reqs("MSG-005", "FRM-002"), false},
		{"TamperValue", "compensation key prefix broken", `"cmp-undo-1"`, 3, 'q', "InvalidCompensationKey", reqs("MSG-004", "FRM-002"), false},
	},
	"compensation_result": {
		{"TamperValue", "tenant scope letter changed", `"tenant-release"`, 14, 'f', "InvalidAuthenticationTag", reqs("FRM-025"), false},
		{"TamperValue", "state running misspelled", `"running"`, 7, 'h', "Serialization", reqs("ENC-051"), false},
	},
	"reconcile_operation": {
		{"TamperValue", "operation key digit changed", `"op-7"`, 4, '8', "InvalidAuthenticationTag", reqs("FRM-025"), false},
		{"TamperValue", "tool name letter changed", `"math.add"`, 8, 'e', "InvalidAuthenticationTag", reqs("FRM-025"), false},
	},
	"reconciled_operation": {
		{"TamperPayload", "failure message letter changed", `"adder crashed"`, 13, 'e', "InvalidAuthenticationTag", reqs("FRM-025"), false},
		{"TamperValue", "state failed misspelled", `"failed"`, 6, 'e', "Serialization", reqs("ENC-051"), false},
	},
	"cancel": {
		{"TamperValue", "cancellation id digit changed", `"cancel-1"`, 8, '2', "InvalidAuthenticationTag", reqs("FRM-025"), false},
		{"TamperValue", "target request id letter made uppercase", `"request-1"`, 1, 'R', "InvalidToken", reqs("FRM-002"), false},
	},
	"cancellation_result": {
		{"TamperValue", "outcome misspelled", `"acknowledged"`, 12, 'e', "Serialization", reqs("ENC-051"), false},
		{"TamperValue", "cancellation id digit changed", `"cancel-1"`, 8, '2', "InvalidAuthenticationTag", reqs("FRM-025"), false},
	},
	"close_session": {
		{"TamperFieldName", "member name session_id misspelled", `"session_id"`, 10, 'e', "Serialization", reqs("MSG-026", "FRM-003"), false},
	},
}

// Frames with hand-built tags for the mode and session cases.
var (
	// A host built in preserve mode tags the payload text as it is; a lossy worker
	// re-serializes 1.50 as 1.5 and computes another tag.
	mInvokeNonPortable = invokeWithJSON(`{"price":1.50,"scale":1e+2}`)
	mInvokeHuge        = invokeWithJSON(`[1e+400]`)
	mClose2            = rep(mClose, "session-1", "session-2")
)

// Messages and tags of reference anchors A1 to A4 (docs/reference-anchors.md), verbatim.
const (
	recordedInvokeMessage   = "{\"type\":\"invoke\",\"invocation\":{\"protocol_version\":5,\"session_id\":\"session-1\",\"request_id\":\"request-1\",\"tool\":\"text.echo\",\"payload\":{\"format\":\"text\",\"value\":\"hi \\\"there\\\"\\né\"}}}"
	recordedDispatchMessage = "{\"type\":\"dispatch_operation\",\"request\":{\"protocol_version\":5,\"session_id\":\"session-1\",\"request_id\":\"dispatch-1\",\"tool\":\"math.add\",\"operation_key\":\"op-7\",\"payload\":{\"format\":\"json\",\"value\":{\"\":true,\"B\":null,\"a\":[1e+16,100,-0.0,1.5e-7,18446744073709551615,-42],\"z\":0.1,\"é\":\"\\u0001\x7f/<>\"}}}}"
	recordedTag1            = "c245f7bb012c51fb328dd620b870798900db933a7a747c22ef4bf04e2cc32bc2"
	recordedTag2            = "70209704d1ff86ee58dfad32edcb35e016cdcd8f164ee4ccaede013517f8d464"
	recordedTag3            = "c17e3e50b056e4000bf1dcc6f32ceec63297441803f6547538a6ee7c28477273"
	recordedTag4            = "148b5385a523fa46ecb687094ddc6aa2a52ee9965479863441d21496b5c2dc28"
)

// recordedDispatchLine is the frame line of reference anchor A4, verbatim.
var recordedDispatchLine = `{"sequence":2,"message":` + recordedDispatchMessage + `,"auth_tag":"` + recordedTag4 + `"}`

func openCases() []openCase {
	var cs []openCase
	add := func(c openCase) { cs = append(cs, c) }
	one := func(comment, receiver string, lines []string, steps []openStep, f, r []string) {
		add(openCase{meta: meta{comment, f, r}, receiver: receiver, lines: lines, preserve: steps})
	}

	// Reference anchors (docs/reference-anchors.md).
	add(openCase{meta: meta{"reference anchor A1: host open_session at sequence 1", flags("ReferenceAnchor"), reqs("FRM-007", "FRM-014", "FRM-025")},
		receiver: "worker", lines: []string{indLine(1, mOpen, recordedTag1)}, preserve: []openStep{opened(1, mOpen)}, alsoLossy: true})
	add(openCase{meta: meta{"reference anchor A2: host invoke at sequence 2 after A1", flags("ReferenceAnchor", "SequenceAdvance", "StringEscape", "Unicode"), reqs("FRM-007", "FRM-019", "ENC-005", "ENC-007")},
		receiver: "worker", lines: []string{indLine(1, mOpen, recordedTag1), indLine(2, recordedInvokeMessage, recordedTag2)},
		preserve: []openStep{opened(1, mOpen), opened(2, recordedInvokeMessage)}, alsoLossy: true})
	add(openCase{meta: meta{"reference anchor A3: worker result at sequence 1", flags("ReferenceAnchor"), reqs("FRM-008", "FRM-025")},
		receiver: "host", lines: []string{indLine(1, mResult, recordedTag3)}, preserve: []openStep{opened(1, mResult)}, alsoLossy: true})
	add(openCase{meta: meta{"reference anchor A4: dispatch at sequence 2 after close_session; same tag in both modes", flags("ReferenceAnchor", "SequenceAdvance", "FloatLayout", "KeyOrder"), reqs("FRM-010", "ENC-003", "ENC-011", "FP-012")},
		receiver: "worker", lines: []string{frame("host", 1, mClose), recordedDispatchLine},
		preserve: []openStep{opened(1, mClose), opened(2, recordedDispatchMessage)}, alsoLossy: true})

	// Every kind opens, in both modes.
	for _, bm := range baseMessages {
		sender := roleName(bm.host)
		add(openCase{meta: meta{"canonical " + bm.label + " frame from the " + sender, flags("MessageKind"), append(reqs("FRM-001", "FRM-025", "MSG-030"), bm.reqs...)},
			receiver: otherRole(sender), lines: []string{frame(sender, 1, bm.json)}, preserve: []openStep{opened(1, bm.json)}, alsoLossy: true})
	}
	// Kinds are not tied to a direction: a worker may send any kind, a host too.
	one("invoke sent by a worker opens at the host", "host", []string{frame("worker", 1, mInvoke)}, []openStep{opened(1, mInvoke)}, flags("MessageKind"), reqs("MSG-030", "FRM-008"))
	one("result sent by a host opens at the worker", "worker", []string{frame("host", 1, mResult)}, []openStep{opened(1, mResult)}, flags("MessageKind"), reqs("MSG-030", "FRM-008"))

	// Sequences.
	one("three frames in order", "worker", []string{frame("host", 1, mOpen), frame("host", 2, mInvoke), frame("host", 3, mCancel)},
		[]openStep{opened(1, mOpen), opened(2, mInvoke), opened(3, mCancel)}, flags("SequenceAdvance"), reqs("FRM-018", "FRM-025"))
	one("replay of the first frame", "worker", []string{frame("host", 1, mOpen), frame("host", 1, mOpen)},
		[]openStep{opened(1, mOpen), rejected("UnexpectedSequence")}, flags("Replay"), reqs("FRM-026"))
	one("replay of an earlier frame after two", "worker", []string{frame("host", 1, mOpen), frame("host", 2, mInvoke), frame("host", 1, mOpen), frame("host", 3, mCancel)},
		[]openStep{opened(1, mOpen), opened(2, mInvoke), rejected("UnexpectedSequence"), opened(3, mCancel)}, flags("Replay", "StateUnchanged"), reqs("FRM-026"))
	one("first frame at sequence 2", "worker", []string{frame("host", 2, mOpen)},
		[]openStep{rejected("UnexpectedSequence")}, flags("SequenceGap"), reqs("FRM-025", "FRM-026"))
	one("gap after the first frame, then the expected frame", "worker", []string{frame("host", 1, mOpen), frame("host", 3, mCancel), frame("host", 2, mInvoke)},
		[]openStep{opened(1, mOpen), rejected("UnexpectedSequence"), opened(2, mInvoke)}, flags("SequenceGap", "StateUnchanged"), reqs("FRM-026"))
	one("sequence 2^64-1 with a valid tag is out of order", "worker", []string{frame("host", 18446744073709551615, mOpen)},
		[]openStep{rejected("UnexpectedSequence")}, flags("SequenceGap", "Boundary"), reqs("FRM-024", "FRM-025"))
	one("sequence 0 with a tag computed over sequence 0", "worker", []string{frame("host", 0, mOpen), frame("host", 1, mOpen)},
		[]openStep{rejected("InvalidSequence"), opened(1, mOpen)}, flags("StateUnchanged"), reqs("FRM-002"))
	one("incoming and outgoing counters are independent: a worker's own sequence 1 does not affect what it expects", "worker",
		[]string{frame("host", 1, mOpen)}, []openStep{opened(1, mOpen)}, flags("SequenceAdvance"), reqs("FRM-019"))

	// Keys, roles and sessions.
	for _, bm := range baseMessages {
		sender := roleName(bm.host)
		wrongKey := indSeal(key08, sender, 1, sessionOne, bm.json).line
		one("wrong key: "+bm.label+" sealed with another key", otherRole(sender), []string{wrongKey, frame(sender, 1, bm.json)},
			[]openStep{rejected("InvalidAuthenticationTag"), opened(1, bm.json)}, flags("WrongKey", "StateUnchanged"), reqs("FRM-014", "FRM-027"))
		one("reflected: "+bm.label+" frame opened by its own sender's role", sender, []string{frame(sender, 1, bm.json)},
			[]openStep{rejected("InvalidAuthenticationTag")}, flags("ReflectedRole"), reqs("FRM-008", "FRM-028"))
	}
	session2Frame := indSeal(key07, "host", 1, "session-2", mClose2).line
	one("frame sealed for session-2 fails the tag check at a session-1 opener", "worker", []string{session2Frame},
		[]openStep{rejected("InvalidAuthenticationTag")}, flags("WrongSession"), reqs("FRM-009", "FRM-027"))
	foreign := indLine(1, mClose2, indTag(key07, indTagInput("host", 1, sessionOne, mClose2)))
	one("tag bound to session-1 over a message naming session-2", "worker", []string{foreign, frame("host", 1, mClose)},
		[]openStep{rejected("UnknownSession"), opened(1, mClose)}, flags("WrongSession", "StateUnchanged"), reqs("FRM-025", "FRM-027"))

	// Tag encoding.
	base := frame("host", 1, mOpen)
	tagAt := strings.Index(base, `"auth_tag":"`) + len(`"auth_tag":"`)
	tag := base[tagAt : tagAt+64]
	withTag := func(t string) string { return base[:tagAt-1] + t + base[tagAt+65:] }
	one("tag in uppercase hex", "worker", []string{withTag(`"` + strings.ToUpper(tag) + `"`), base},
		[]openStep{rejected("InvalidAuthenticationTag"), opened(1, mOpen)}, flags("TagEncoding", "StateUnchanged"), reqs("FRM-016"))
	one("tag of 63 digits", "worker", []string{withTag(`"` + tag[:63] + `"`)}, []openStep{rejected("InvalidAuthenticationTag")}, flags("TagEncoding", "Boundary"), reqs("FRM-016"))
	one("tag of 65 digits", "worker", []string{withTag(`"` + tag + `0"`)}, []openStep{rejected("InvalidAuthenticationTag")}, flags("TagEncoding", "Boundary"), reqs("FRM-016"))
	one("tag with a leading space", "worker", []string{withTag(`" ` + tag[1:] + `"`)}, []openStep{rejected("InvalidAuthenticationTag")}, flags("TagEncoding"), reqs("FRM-016"))
	one("empty tag", "worker", []string{withTag(`""`)}, []openStep{rejected("InvalidAuthenticationTag")}, flags("TagEncoding"), reqs("FRM-016"))
	one("tag with a non-hex letter", "worker", []string{withTag(`"g` + tag[1:] + `"`)}, []openStep{rejected("InvalidAuthenticationTag")}, flags("TagEncoding"), reqs("FRM-016"))
	one("tag given as a number", "worker", []string{withTag(`12`)}, []openStep{rejected("Serialization")}, flags("TagEncoding", "FrameShape"), reqs("FRM-003"))
	one("tag given as null", "worker", []string{withTag(`null`)}, []openStep{rejected("Serialization")}, flags("TagEncoding", "FrameShape", "NullField"), reqs("FRM-003"))
	one("all-zero tag of the right shape", "worker", []string{withTag(`"` + strings.Repeat("0", 64) + `"`)}, []openStep{rejected("InvalidAuthenticationTag")}, flags("TagEncoding"), reqs("FRM-025"))

	// Frame shape.
	body := base[len(`{"sequence":1,"message":`) : tagAt-len(`,"auth_tag":"`)]
	if body != mOpen {
		tableErrors = append(tableErrors, "frame body extraction failed")
	}
	one("missing sequence", "worker", []string{`{"message":` + mOpen + `,"auth_tag":"` + tag + `"}`}, []openStep{rejected("Serialization")}, flags("FrameShape", "MissingField"), reqs("FRM-001", "FRM-003"))
	one("missing message", "worker", []string{`{"sequence":1,"auth_tag":"` + tag + `"}`}, []openStep{rejected("Serialization")}, flags("FrameShape", "MissingField"), reqs("FRM-001", "FRM-003"))
	one("missing auth_tag", "worker", []string{`{"sequence":1,"message":` + mOpen + `}`}, []openStep{rejected("Serialization")}, flags("FrameShape", "MissingField"), reqs("FRM-001", "FRM-003"))
	one("duplicate sequence", "worker", []string{`{"sequence":1,"sequence":1,"message":` + mOpen + `,"auth_tag":"` + tag + `"}`}, []openStep{rejected("Serialization")}, flags("FrameShape", "DuplicateField"), reqs("ENC-045", "FRM-003"))
	one("duplicate auth_tag", "worker", []string{base[:len(base)-1] + `,"auth_tag":"` + tag + `"}`}, []openStep{rejected("Serialization")}, flags("FrameShape", "DuplicateField"), reqs("ENC-045", "FRM-003"))
	one("sequence as a string", "worker", []string{rep(base, `"sequence":1`, `"sequence":"1"`)}, []openStep{rejected("Serialization")}, flags("FrameShape", "IntegerField"), reqs("ENC-042"))
	one("sequence 1.0", "worker", []string{rep(base, `"sequence":1`, `"sequence":1.0`)}, []openStep{rejected("Serialization")}, flags("FrameShape", "IntegerField"), reqs("ENC-042"))
	one("sequence -1", "worker", []string{rep(base, `"sequence":1`, `"sequence":-1`)}, []openStep{rejected("Serialization")}, flags("FrameShape", "IntegerField"), reqs("ENC-042"))
	add(openCase{meta: meta{"sequence -0 is rejected in both modes (a direct field)", flags("FrameShape", "IntegerField", "NegativeZero"), reqs("ENC-043")},
		receiver: "worker", lines: []string{rep(base, `"sequence":1`, `"sequence":-0`)}, preserve: []openStep{rejected("Serialization")}, alsoLossy: true})
	one("sequence beyond 64 bits", "worker", []string{rep(base, `"sequence":1`, `"sequence":18446744073709551616`)}, []openStep{rejected("Serialization")}, flags("FrameShape", "IntegerField", "Boundary"), reqs("ENC-042"))
	one("frame is a JSON array of the wrong length", "worker", []string{`[1,` + mOpen + `]`}, []openStep{rejected("Serialization")}, flags("FrameShape", "PositionalArray"), reqs("ENC-049"))
	one("empty line", "worker", []string{``}, []openStep{rejected("Serialization")}, flags("FrameShape"), reqs("FRM-037", "FRM-003"))
	one("frame is a string", "worker", []string{`"frame"`}, []openStep{rejected("Serialization")}, flags("FrameShape"), reqs("FRM-003"))
	one("trailing characters after the frame", "worker", []string{base + "x"}, []openStep{rejected("Serialization")}, flags("FrameShape", "TrailingCharacters"), reqs("ENC-015"))
	one("unknown message type with a valid tag", "worker", []string{frame("host", 1, rep(mClose, "close_session", "close_sessions"))}, []openStep{rejected("Serialization")}, flags("UnknownVariant"), reqs("MSG-027"))
	one("protocol version 4 with a valid tag", "worker", []string{frame("host", 1, rep(mClose, `:5,`, `:4,`))}, []openStep{rejected("UnsupportedVersion")}, flags("Version"), reqs("MSG-001", "FRM-002"))
	one("message validation runs before the tag check", "worker", []string{frame("host", 1, rep(mCancel, `"cancel-1"`, `"request-1"`))}, []openStep{rejected("CancellationIdMatchesRequest")}, flags("Validation", "CheckOrder"), reqs("FRM-002", "FRM-025"))
	one("sequence 0 is checked before message validation", "worker", []string{frame("host", 0, rep(mClose, `:5,`, `:4,`))}, []openStep{rejected("InvalidSequence")}, flags("CheckOrder"), reqs("FRM-002"))
	one("deny-unknown-fields body inside a frame", "worker", []string{frame("host", 1, rep(mDispatch, `"operation_key"`, `"x":1,"operation_key"`))}, []openStep{rejected("Serialization")}, flags("DenyUnknownFields"), reqs("MSG-021", "FRM-003"))

	// Leniency: the tag covers the canonical re-serialization (FRM-011).
	ws := strings.NewReplacer(`,"`, `, "`, `":`, `" : `).Replace(base)
	one("whitespace inside the frame", "worker", []string{" " + ws + "\r"}, []openStep{opened(1, mOpen)}, flags("Leniency", "Whitespace"), reqs("FRM-011"))
	one("frame members in another order", "worker", []string{`{"auth_tag":"` + tag + `","message":` + mOpen + `,"sequence":1}`}, []openStep{opened(1, mOpen)}, flags("Leniency"), reqs("FRM-011"))
	one("unknown frame member is ignored", "worker", []string{`{"sequence":1,"v":5,"message":` + mOpen + `,"auth_tag":"` + tag + `"}`}, []openStep{opened(1, mOpen)}, flags("Leniency", "UnknownField"), reqs("FRM-001", "FRM-011"))
	one("frame in positional form", "worker", []string{`[1,` + mOpen + `,"` + tag + `"]`}, []openStep{opened(1, mOpen)}, flags("Leniency", "PositionalArray"), reqs("FRM-011", "ENC-049"))
	one("escaped member names", "worker", []string{rep(rep(base, `"sequence"`, `"\u0073equence"`), `"grants"`, `"gr\u0061nts"`)}, []openStep{opened(1, mOpen)}, flags("Leniency", "EscapedKey"), reqs("FRM-011", "ENC-023"))
	one("unknown member inside the grant is unauthenticated and dropped", "worker", []string{rep(base, `"resources":[]`, `"resources":[],"note":"unsigned"`)}, []openStep{opened(1, mOpen)}, flags("Leniency", "UnknownField"), reqs("FRM-011", "ENC-044"))
	one("defaulted grant members left out", "worker", []string{rep(base, `,"max_compensations":0,"resources":[]`, ``)}, []openStep{opened(1, mOpen)}, flags("Leniency", "DefaultField"), reqs("FRM-011", "ENC-046"))
	dispatchBase := frame("host", 1, mDispatch)
	one("payload keys reordered and duplicated", "worker", []string{rep(dispatchBase, `{"a":1,"b":2}`, `{"b":2,"a":7,"a":1}`)}, []openStep{opened(1, mDispatch)}, flags("Leniency", "DuplicateKey", "KeyOrder"), reqs("FRM-011", "ENC-022"))
	one("payload members in positional form", "worker", []string{rep(dispatchBase, `{"format":"json","value":{"a":1,"b":2}}`, `["json",{"a":1,"b":2}]`)}, []openStep{opened(1, mDispatch)}, flags("Leniency", "PositionalArray"), reqs("FRM-011"))

	// Number modes: a preserve-mode host tags the text of non-portable numbers.
	add(openCase{meta: meta{"non-portable numbers tagged by a preserve-mode sender", flags("NonPortable", "ModeDependent", "TrailingZeros", "Exponent"), reqs("FRM-010", "FRM-030", "ENC-036", "ENC-041")},
		receiver: "worker", lines: []string{frame("host", 1, mInvokeNonPortable)},
		preserve: []openStep{opened(1, mInvokeNonPortable)}, lossy: []openStep{rejected("InvalidAuthenticationTag")}, alsoLossy: true})
	add(openCase{meta: meta{"1e400 tagged by a preserve-mode sender cannot be read in lossy mode", flags("NonPortable", "ModeDependent", "OutOfRange"), reqs("ENC-031", "ENC-036", "ENC-041")},
		receiver: "worker", lines: []string{frame("host", 1, mInvokeHuge)},
		preserve: []openStep{opened(1, mInvokeHuge)}, lossy: []openStep{rejected("Serialization")}, alsoLossy: true})
	lossyForm := invokeWithJSON(`{"price":1.5,"scale":100.0}`)
	add(openCase{meta: meta{"non-canonical spelling tagged by a lossy-mode sender over its own form", flags("NonPortable", "ModeDependent"), reqs("FRM-010", "ENC-041")},
		receiver: "worker", lines: []string{rep(frame("host", 1, lossyForm), `{"price":1.5,"scale":100.0}`, `{"price":1.50,"scale":1e2}`)},
		preserve: []openStep{rejected("InvalidAuthenticationTag")}, lossy: []openStep{opened(1, lossyForm)}, alsoLossy: true})
	negZero := invokeWithJSON(`[0]`)
	add(openCase{meta: meta{"-0 in a payload sent where the tag covers 0", flags("NegativeZero", "ModeDependent"), reqs("ENC-024", "ENC-028", "ENC-041")},
		receiver: "worker", lines: []string{rep(frame("host", 1, negZero), `[0]`, `[-0]`)},
		preserve: []openStep{opened(1, negZero)}, lossy: []openStep{rejected("InvalidAuthenticationTag")}, alsoLossy: true})

	// Size limits.
	big := frame("host", 1, invokeOfSize(1<<20-103))
	one("frame line of exactly 1048576 bytes: its tag input is too large", "worker", []string{big},
		[]openStep{rejected("WireFrameTooLarge")}, flags("SizeLimit", "Boundary", "LargeInput"), reqs("FRM-012", "FRM-013", "FRM-025"))
	one("frame line of 1048577 bytes", "worker", []string{big + " "},
		[]openStep{rejected("WireFrameTooLarge")}, flags("SizeLimit", "Boundary", "LargeInput"), reqs("FRM-003", "ERR-018"))
	okSize := frame("host", 1, invokeOfSize(1<<20-103-17))
	one("largest frame whose tag input fits (host sender, session-1)", "worker", []string{okSize},
		[]openStep{opened(1, invokeOfSize(1<<20-103-17))}, flags("SizeLimit", "Boundary", "LargeInput"), reqs("FRM-012", "FRM-013"))
	one("one byte more and the tag input is too large", "worker", []string{frame("host", 1, invokeOfSize(1<<20-103-16))},
		[]openStep{rejected("WireFrameTooLarge")}, flags("SizeLimit", "Boundary", "LargeInput"), reqs("FRM-012", "FRM-013"))

	// Systematic tampering: every position class of every kind's frame. Each test opens the
	// tampered line and then the original, which must still open (a failed open changes
	// nothing).
	for _, bm := range baseMessages {
		sender := roleName(bm.host)
		orig := frame(sender, 1, bm.json)
		for _, m := range tamperTemplates(bm) { // (rows appended after this loop keep their tcIds)
			line, ok := applyMutation(orig, m)
			if !ok {
				tableErrors = append(tableErrors, fmt.Sprintf("mutation %q does not apply to %s", m.what, bm.kind))
				continue
			}
			one(bm.label+": "+m.what, otherRole(sender), []string{line, orig},
				[]openStep{rejected(m.expect), opened(1, bm.json)}, flags("Tamper", m.class, "StateUnchanged"), append(reqs("FRM-026", "ERR-019"), m.reqs...))
		}
		tagStart := strings.LastIndex(orig, `"auth_tag":"`) + len(`"auth_tag":"`)
		if i := strings.IndexAny(orig[tagStart:], "abcdef"); i >= 0 {
			pos := tagStart + i
			line := orig[:pos] + strings.ToUpper(orig[pos:pos+1]) + orig[pos+1:]
			one(bm.label+": first hex letter of the tag made uppercase", otherRole(sender), []string{line, orig},
				[]openStep{rejected("InvalidAuthenticationTag"), opened(1, bm.json)}, flags("Tamper", "TamperTag", "TagEncoding", "StateUnchanged"), reqs("FRM-016", "FRM-026"))
		}
	}
	// Appended rows (tcIds are permanent: add new rows only here, at the end).
	const maxSeq = 18446744073709551615
	add(openCase{meta: meta{"an opener expecting 2^64-1 refuses even the matching frame", flags("Boundary", "SequenceAdvance"), reqs("FRM-024", "FRM-025")},
		receiver: "worker", start: maxSeq, lines: []string{frame("host", maxSeq, mClose)}, preserve: []openStep{rejected("SequenceExhausted")}})
	add(openCase{meta: meta{"the frame at 2^64-2 is the last one a peer can open", flags("Boundary", "SequenceAdvance"), reqs("FRM-024", "FRM-025")},
		receiver: "host", start: maxSeq - 1, lines: []string{frame("worker", maxSeq-1, mResult), frame("worker", maxSeq, mResult)},
		preserve: []openStep{opened(maxSeq-1, mResult), rejected("SequenceExhausted")}})
	add(openCase{meta: meta{"an out-of-order frame is reported before exhaustion", flags("Boundary", "CheckOrder"), reqs("FRM-025")},
		receiver: "worker", start: maxSeq, lines: []string{frame("host", 1, mClose)}, preserve: []openStep{rejected("UnexpectedSequence")}})
	return cs
}
