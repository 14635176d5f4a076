package main

import (
	"strings"
)

// sealExp is the expected result of sealing one message: an error kind, or success at seq
// over the canonical message canon (the tag input, tag and line are then computed
// independently). recordedTag, when set, is the tag recorded from the Rust reference
// for that frame (reference anchors A1 to A4, docs/reference-anchors.md).
type sealExp struct {
	err         string
	seq         uint64
	canon       string
	recordedTag string
}

func sealedAs(seq uint64, canon string) sealExp { return sealExp{seq: seq, canon: canon} }
func sealFails(kind string) sealExp             { return sealExp{err: kind} }

// sealCase is one row of the frames_seal table: messages decoded and sealed in order by one
// fresh sealer (key 07…07) of the given role and session.
type sealCase struct {
	meta
	role    string
	session string
	start   uint64
	// received are canonical messages of the peer, sealed at its sequences 1, 2, … and opened
	// before msgs are sealed.
	received  []string
	msgs      []string
	preserve  []sealExp
	lossy     []sealExp
	alsoLossy bool
}

// invokeInSession returns a canonical invoke message of exactly n bytes for session sid.
func invokeInSession(sid string, n int) string {
	shell := `{"type":"invoke","invocation":{"protocol_version":5,"session_id":"` + sid + `","request_id":"request-1","tool":"text.echo","payload":{"format":"text","value":""}}}`
	return rep(shell, `"value":""`, `"value":"`+strings.Repeat("a", n-len(shell))+`"`)
}

func sealCases() []sealCase {
	var cs []sealCase
	add := func(c sealCase) { cs = append(cs, c) }
	recorded1 := sealExp{seq: 1, canon: mOpen, recordedTag: recordedTag1}
	add(sealCase{meta: meta{"reference anchor A1: host open_session at sequence 1", flags("ReferenceAnchor", "Seal"), reqs("FRM-007", "FRM-014", "FRM-015")},
		role: "host", session: sessionOne, msgs: []string{mOpen}, preserve: []sealExp{recorded1}, alsoLossy: true})
	add(sealCase{meta: meta{"reference anchor A2: host invoke with escapes and é at sequence 2", flags("ReferenceAnchor", "Seal", "SequenceAdvance", "StringEscape"), reqs("FRM-007", "FRM-021", "ENC-005", "ENC-007")},
		role: "host", session: sessionOne, msgs: []string{mOpen, recordedInvokeMessage},
		preserve: []sealExp{recorded1, {seq: 2, canon: recordedInvokeMessage, recordedTag: recordedTag2}}, alsoLossy: true})
	add(sealCase{meta: meta{"reference anchor A3: worker result at sequence 1 (sender \"worker\")", flags("ReferenceAnchor", "Seal"), reqs("FRM-007", "FRM-008")},
		role: "worker", session: sessionOne, msgs: []string{mResult}, preserve: []sealExp{{seq: 1, canon: mResult, recordedTag: recordedTag3}}, alsoLossy: true})
	add(sealCase{meta: meta{"reference anchor A4: dispatch with portable numbers at sequence 2; identical in both modes", flags("ReferenceAnchor", "Seal", "FloatLayout", "KeyOrder"), reqs("FRM-010", "ENC-003", "ENC-011", "ENC-034", "FRM-006")},
		role: "host", session: sessionOne, msgs: []string{mClose, recordedDispatchMessage},
		preserve: []sealExp{sealedAs(1, mClose), {seq: 2, canon: recordedDispatchMessage, recordedTag: recordedTag4}}, alsoLossy: true})
	for _, bm := range baseMessages {
		for _, role := range []string{"host", "worker"} {
			add(sealCase{meta: meta{bm.label + " sealed by the " + role, flags("Seal", "MessageKind"), append(reqs("FRM-007", "FRM-008", "FRM-014", "FRM-015", "FRM-006"), bm.reqs...)},
				role: role, session: sessionOne, msgs: []string{bm.json}, preserve: []sealExp{sealedAs(1, bm.json)}, alsoLossy: true})
		}
	}
	add(sealCase{meta: meta{"three messages get sequences 1, 2 and 3", flags("Seal", "SequenceAdvance"), reqs("FRM-018", "FRM-021")},
		role: "host", session: sessionOne, msgs: []string{mOpen, mInvoke, mCancel}, preserve: []sealExp{sealedAs(1, mOpen), sealedAs(2, mInvoke), sealedAs(3, mCancel)}, alsoLossy: true})
	pretty := "{ \"session_id\" : \"session-1\", \"protocol_version\" : 5, \"type\" : \"close_session\" }"
	add(sealCase{meta: meta{"a non-canonical input is sealed in canonical form", flags("Seal", "Reencoding"), reqs("FRM-010", "ENC-002")},
		role: "worker", session: sessionOne, msgs: []string{pretty}, preserve: []sealExp{sealedAs(1, mClose)}, alsoLossy: true})
	add(sealCase{meta: meta{"message for another session is refused without using a sequence number", flags("Seal", "WrongSession", "StateUnchanged"), reqs("FRM-021", "FRM-023", "ERR-019")},
		role: "host", session: sessionOne, msgs: []string{mClose2, mClose}, preserve: []sealExp{sealFails("UnknownSession"), sealedAs(1, mClose)}, alsoLossy: true})
	add(sealCase{meta: meta{"invalid message is refused", flags("Seal", "Validation"), reqs("FRM-021", "MSG-015")},
		role: "host", session: sessionOne, msgs: []string{rep(mCancel, `"cancel-1"`, `"request-1"`), mCancel}, preserve: []sealExp{sealFails("CancellationIdMatchesRequest"), sealedAs(1, mCancel)}, alsoLossy: true})
	np := invokeWithJSON(`{"price":1.50}`)
	add(sealCase{meta: meta{"1.50 is not portable: refused in preserve mode; lossy mode reads it as 1.5", flags("Seal", "NonPortable", "ModeDependent", "TrailingZeros", "StateUnchanged"), reqs("ENC-037", "ERR-004", "FRM-023")},
		role: "host", session: sessionOne, msgs: []string{np, mClose},
		preserve: []sealExp{sealFails("NonPortableNumber"), sealedAs(1, mClose)},
		lossy:    []sealExp{sealedAs(1, invokeWithJSON(`{"price":1.5}`)), sealedAs(2, mClose)}, alsoLossy: true})
	add(sealCase{meta: meta{"1e2 is not portable: refused in preserve mode; lossy mode reads it as 100.0", flags("Seal", "NonPortable", "ModeDependent", "Exponent"), reqs("ENC-037", "ERR-004")},
		role: "worker", session: sessionOne, msgs: []string{rep(mResult, `{"format":"text","value":"ok"}`, `{"format":"json","value":[1e2]}`)},
		preserve: []sealExp{sealFails("NonPortableNumber")},
		lossy:    []sealExp{sealedAs(1, rep(mResult, `{"format":"text","value":"ok"}`, `{"format":"json","value":[100.0]}`))}, alsoLossy: true})
	add(sealCase{meta: meta{"a durable outcome is sealed whatever its numbers: 3.10 in a status payload is kept", flags("Seal", "NonPortable", "ModeDependent", "DurableOutcome"), reqs("ENC-054", "WRK-048")},
		role: "worker", session: sessionOne, msgs: []string{rep(mOpResult, `{"total":3}`, `{"total":3.10}`)},
		preserve: []sealExp{sealedAs(1, rep(mOpResult, `{"total":3}`, `{"total":3.10}`))},
		lossy:    []sealExp{sealedAs(1, rep(mOpResult, `{"total":3}`, `{"total":3.1}`))}, alsoLossy: true})
	resultWithJSON := func(value string) string {
		return rep(mResult, `{"format":"text","value":"ok"}`, `{"format":"json","value":`+value+`}`)
	}
	add(sealCase{meta: meta{"a received 0.10 proves a text-keeping peer: the echo of 0.10 is then sealed", flags("Seal", "NonPortable", "PeerProof"), reqs("ENC-053")},
		role: "worker", session: sessionOne, received: []string{invokeWithJSON(`{"x":0.10}`)},
		msgs: []string{resultWithJSON(`{"x":0.10}`)}, preserve: []sealExp{sealedAs(1, resultWithJSON(`{"x":0.10}`))}})
	add(sealCase{meta: meta{"a received 1e+2 and a 20-digit integer prove it too; any non-portable number may follow", flags("Seal", "NonPortable", "PeerProof"), reqs("ENC-053")},
		role: "worker", session: sessionOne, received: []string{invokeWithJSON(`[1e+2]`), invokeWithJSON(`[99999999999999999999]`)},
		msgs: []string{resultWithJSON(`[1.50,1e+400]`)}, preserve: []sealExp{sealedAs(1, resultWithJSON(`[1.50,1e+400]`))}})
	add(sealCase{meta: meta{"portable numbers and 0.10 inside a string prove nothing: 0.10 is still refused", flags("Seal", "NonPortable", "PeerProof", "StateUnchanged"), reqs("ENC-053", "ENC-037")},
		role: "worker", session: sessionOne, received: []string{invokeWithJSON(`{"a":0.1,"b":100.0,"c":"0.10","d":18446744073709551615}`)},
		msgs: []string{resultWithJSON(`{"x":0.10}`), mResult}, preserve: []sealExp{sealFails("NonPortableNumber"), sealedAs(1, mResult)}})
	add(sealCase{meta: meta{"a Lossy layout the reference's Lossy parser does not read back is non-portable but no proof", flags("Seal", "NonPortable", "PeerProof", "LossyRounding"), reqs("ENC-053")},
		role: "worker", session: sessionOne, received: []string{invokeWithJSON(`[1.4651248189898814e+246]`)},
		msgs: []string{resultWithJSON(`[1.4651248189898814e+246]`)}, preserve: []sealExp{sealFails("NonPortableNumber")}})
	add(sealCase{meta: meta{"a host that received a worker's 18446744073709551616 may send 1e+2", flags("Seal", "NonPortable", "PeerProof"), reqs("ENC-053")},
		role: "host", session: sessionOne, received: []string{resultWithJSON(`[18446744073709551616]`)},
		msgs: []string{dispatchWithJSON(`{"n":1e+2}`)}, preserve: []sealExp{sealedAs(1, dispatchWithJSON(`{"n":1e+2}`))}})
	add(sealCase{meta: meta{"-0 becomes 0 in preserve mode and -0.0 in lossy mode; both are portable", flags("Seal", "NegativeZero", "ModeDependent"), reqs("ENC-024", "ENC-028", "ENC-034")},
		role: "host", session: sessionOne, msgs: []string{dispatchWithJSON(`[-0]`)},
		preserve: []sealExp{sealedAs(1, dispatchWithJSON(`[0]`))},
		lossy:    []sealExp{sealedAs(1, dispatchWithJSON(`[-0.0]`))}, alsoLossy: true})
	add(sealCase{meta: meta{"the portability check runs before the session check", flags("Seal", "NonPortable", "CheckOrder", "ModeDependent"), reqs("FRM-022")},
		role: "host", session: sessionOne, msgs: []string{rep(np, "session-1", "session-2")},
		preserve: []sealExp{sealFails("NonPortableNumber")}, lossy: []sealExp{sealFails("UnknownSession")}, alsoLossy: true})
	add(sealCase{meta: meta{"the last outgoing sequence 2^64-1 can never be used", flags("Seal", "Boundary"), reqs("FRM-021", "FRM-024")},
		role: "host", session: sessionOne, start: 18446744073709551615, msgs: []string{mClose}, preserve: []sealExp{sealFails("SequenceExhausted")}})
	add(sealCase{meta: meta{"sequence 2^64-2 is the largest ever sealed", flags("Seal", "Boundary", "SequenceAdvance"), reqs("FRM-024", "FRM-023")},
		role: "worker", session: sessionOne, start: 18446744073709551614, msgs: []string{mClose, mClose},
		preserve: []sealExp{sealedAs(18446744073709551614, mClose), sealFails("SequenceExhausted")}})
	hostMax := 1<<20 - len(indTagInput("host", 1, "s", ""))
	add(sealCase{meta: meta{"largest host message whose tag input is exactly 1048576 bytes (session s)", flags("Seal", "SizeLimit", "Boundary", "LargeInput"), reqs("FRM-012", "FRM-013", "MSG-041")},
		role: "host", session: "s", msgs: []string{invokeInSession("s", hostMax)}, preserve: []sealExp{sealedAs(1, invokeInSession("s", hostMax))}})
	add(sealCase{meta: meta{"one byte more: the tag input is 1048577 bytes", flags("Seal", "SizeLimit", "Boundary", "LargeInput", "StateUnchanged"), reqs("FRM-012", "FRM-013", "FRM-023")},
		role: "host", session: "s", msgs: []string{invokeInSession("s", hostMax+1), mClose}, preserve: []sealExp{sealFails("WireFrameTooLarge"), sealFails("UnknownSession")}})
	workerMax := 1<<20 - len(indTagInput("worker", 1, "s", ""))
	add(sealCase{meta: meta{"largest worker message whose tag input is exactly 1048576 bytes (session s)", flags("Seal", "SizeLimit", "Boundary", "LargeInput"), reqs("FRM-012", "FRM-013")},
		role: "worker", session: "s", msgs: []string{invokeInSession("s", workerMax)}, preserve: []sealExp{sealedAs(1, invokeInSession("s", workerMax))}})
	add(sealCase{meta: meta{"one byte more for a worker sender", flags("Seal", "SizeLimit", "Boundary", "LargeInput"), reqs("FRM-012", "FRM-013")},
		role: "worker", session: "s", msgs: []string{invokeInSession("s", workerMax+1)}, preserve: []sealExp{sealFails("WireFrameTooLarge")}})
	return cs
}
