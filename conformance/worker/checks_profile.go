package worker

import (
	"strconv"
	"strings"

	"github.com/splashv5/conform/conformance"
)

// tricky text exercises escaping: control characters, quotes, backslash, slash, the two
// JavaScript line separators, non-BMP characters and a lone escape-looking sequence.
const trickyText = "é😀 \x00\x01\x1f\x7f \"quoted\" back\\slash /slash\n\r\t \u2028\u2029 <>&' \\u0041 日本語 \U0001F600\U0001F9EA"

// ProfileChecks returns the checks of area PROFILE: the conformance profile adapters.
func ProfileChecks() []*Check {
	return []*Check{
		&Check{
			ID: "CNF-PROFILE-01", Unreachable: unreachableAdapter, Level: conformance.Must, Requirements: []string{"PRF-003", "WRK-030", "WRK-090"},
			Title: "conf.text.echo returns ASCII text unchanged, answering before more input arrives",
			Run: func(t *T) {
				w := t.baseline()
				t.expectPayload("the echo", text("hello, worker"), w.invoke(toolTextEcho, text("hello, worker")))
				w.endInput()
			},
		},
		&Check{
			ID: "CNF-PROFILE-02", Unreachable: unreachableAdapter, Level: conformance.Must, Requirements: []string{"PRF-003", "ENC-012", "MSG-013"},
			Title: "conf.text.echo returns Unicode, control characters and escapes unchanged",
			Run: func(t *T) {
				w := t.baseline()
				t.expectPayload("the echo", text(trickyText), w.invoke(toolTextEcho, text(trickyText)))
				w.endInput()
			},
		},
		&Check{
			ID: "CNF-PROFILE-03", Unreachable: unreachableAdapter, Level: conformance.Must, Requirements: []string{"PRF-003"},
			Title: "conf.text.echo returns the empty text",
			Run: func(t *T) {
				w := t.baseline()
				t.expectPayload("the echo", text(""), w.invoke(toolTextEcho, text("")))
				w.endInput()
			},
		},
		&Check{
			ID: "CNF-PROFILE-04", Unreachable: unreachableAdapter, Level: conformance.Must, Requirements: []string{"PRF-004", "ENC-012"},
			Title: "conf.json.echo returns an object with Unicode keys, escapes and nesting, keys sorted",
			Run: func(t *T) {
				w := t.baseline()
				in := `{"zeta":{"b":[true,false,null],"a":"\u0000\"\\/\n"},"é":"😀","":{},"A":[],"\u2028":"line separator"}`
				got := w.invoke(toolJSONEcho, jsonPayload(in))
				t.expectPayload("the echo", jsonPayload(in), got)
				w.endInput()
			},
		},
		&Check{
			ID: "CNF-PROFILE-05", Unreachable: unreachableAdapter, Level: conformance.Must, Requirements: []string{"PRF-004", "ENC-035"},
			Title: "conf.json.echo returns an array of portable numbers unchanged",
			Run: func(t *T) {
				w := t.baseline()
				in := `[0,1,-1,18446744073709551615,-9223372036854775808,1.5,-2.5,0.1,123.456,1e+16,1e-7,0.0]`
				t.expectPayload("the echo", jsonPayload(in), w.invoke(toolJSONEcho, jsonPayload(in)))
				w.endInput()
			},
		},
		&Check{
			ID: "CNF-PROFILE-06", Unreachable: unreachableAdapter, Level: conformance.Must, Requirements: []string{"PRF-004", "MSG-036"},
			Title: "conf.json.echo accepts and returns a payload exactly 32 levels deep",
			Run: func(t *T) {
				w := t.baseline()
				in := nestedArrays(31, "7")
				t.expectPayload("the echo", jsonPayload(in), w.invoke(toolJSONEcho, jsonPayload(in)))
				w.endInput()
			},
		},
		&Check{
			ID: "CNF-PROFILE-07", Unreachable: unreachableAdapter, Level: conformance.Must, Requirements: []string{"PRF-016", "WRK-002", "CAN-023"},
			Title: "a slow tool in a baseline session waits and completes with \"done N\"",
			Run: func(t *T) {
				w := t.session(textGrant(toolTextEcho), textGrant(toolCancellable), textGrant(toolUncooperative))
				t.expectPayload("the answer", text("done 20"), w.invoke(toolCancellable, text("20")))
				t.expectPayload("the answer", text("done 007"), w.invoke(toolUncooperative, text("007")))
				w.endInput()
			},
		},
		&Check{
			ID: "CNF-PROFILE-08", Level: conformance.Must, Requirements: []string{"PRF-016", "WRK-030"},
			Title: "a slow tool refuses input that is not a decimal wait time (status 6)",
			Run: exits(exitAdapter, `the slow-tool input "-1"`, func(t *T) *Worker { return t.session(textGrant(toolTextEcho), textGrant(toolCancellable)) }, func(w *Worker) {
				w.sendInvoke(toolCancellable, text("-1"))
			}),
		},
		&Check{
			ID: "CNF-PROFILE-09", Level: conformance.Must, Requirements: []string{"PRF-016"},
			Title: "a slow tool refuses a wait time above 60,000 ms (status 6)",
			Run: exits(exitAdapter, `the slow-tool input "60001"`, func(t *T) *Worker { return t.session(textGrant(toolTextEcho), textGrant(toolCancellable)) }, func(w *Worker) {
				w.sendInvoke(toolCancellable, text("60001"))
			}),
		},
		&Check{
			ID: "CNF-PROFILE-10", Unreachable: unreachableAdapter, Level: conformance.Must, Requirements: []string{"PRF-003", "MSG-039"},
			Title: "conf.text.echo returns a 60 KiB text unchanged",
			Run: func(t *T) {
				w := t.baseline()
				big := repeat("0123456789abcdef", 60*64)
				t.expectPayload("the echo", text(big), w.invoke(toolTextEcho, text(big)))
				w.endInput()
			},
		},
		&Check{
			ID: "CNF-PROFILE-11", Level: conformance.Must, Requirements: []string{"PRF-001", "WRK-022", "WRK-023"},
			Title: "a worker answers many invocations in one session, one answer per frame",
			Run: func(t *T) {
				w := t.baseline()
				for i := range 20 {
					p := text(repeat("x", i))
					if i%2 == 1 {
						p = jsonPayload(`{"i":` + strconv.Itoa(i) + `}`)
						t.expectPayload("the echo", p, w.invoke(toolJSONEcho, p))
						continue
					}
					t.expectPayload("the echo", p, w.invoke(toolTextEcho, p))
				}
				w.endInput()
			},
		},
		&Check{
			ID: "CNF-PROFILE-12", Unreachable: unreachableAcceptance, Level: conformance.Must, Needs: []Need{NeedTypedJSON},
			Requirements: []string{"PRF-031", "WRK-005", "WRK-030"},
			Title:        "conf.json.typed answers a well-typed input with its typed output, in canonical form",
			Run: func(t *T) {
				w := t.session(jsonGrant(toolTyped))
				for _, c := range []struct{ in, want string }{
					{`{"text":"ab","repeat":3}`, `{"count":3,"text":"ababab"}`},
					{`{"repeat":1,"text":"é😀\u0000\""}`, `{"count":1,"text":"é😀\u0000\""}`},
					{`{"repeat":16,"text":""}`, `{"count":16,"text":""}`},
				} {
					t.expectPayload("the typed answer", jsonPayload(c.want), w.invoke(toolTyped, jsonPayload(c.in)))
				}
				w.endInput()
			},
		},
		&Check{
			ID: "CNF-PROFILE-14", Level: conformance.Must, Needs: []Need{NeedTypedJSON},
			Requirements: []string{"PRF-032", "PRF-027", "WRK-005", "WRK-096", "WRK-097"},
			Title:        "conf.json.typed refuses a member of the wrong type: a number as text, a string or 2.0 as repeat (InvalidJsonInput, status 6)",
			Run:          typedRefusals("InvalidJsonInput", `{"text":5,"repeat":2}`, `{"text":"ab","repeat":"2"}`, `{"text":"ab","repeat":2.0}`),
		},
		&Check{
			ID: "CNF-PROFILE-16", Level: conformance.Must, Needs: []Need{NeedTypedJSON},
			Requirements: []string{"PRF-025", "PRF-027", "WRK-005", "WRK-096", "WRK-097"},
			Title:        "conf.json.typed never answers its null output for repeat 0 (InvalidJsonOutput, status 6)",
			Run:          typedRefusals("InvalidJsonOutput", `{"repeat":0,"text":"ab"}`),
		},
		&Check{
			ID: "CNF-PROFILE-17", Level: conformance.Must, Needs: []Need{NeedTypedJSON},
			Requirements: []string{"PRF-026", "WRK-005", "WRK-040", "WRK-096", "WRK-097"},
			Title:        "a dispatch_operation for conf.json.typed is refused: the typed helper serves invoke only (status 5)",
			Run: func(t *T) {
				w := t.session(jsonGrant(toolTyped))
				t.expectPayload("the typed answer", jsonPayload(`{"count":2,"text":"abab"}`),
					w.invoke(toolTyped, jsonPayload(`{"repeat":2,"text":"ab"}`)))
				w.sendDispatch(toolTyped, "op-typed-1", jsonPayload(`{"repeat":2,"text":"ab"}`))
				w.expectExit(exitRejected, "a dispatch_operation for conf.json.typed, which declares no durable contract")
			},
		},
		&Check{
			ID: "CNF-PROFILE-18", Level: conformance.Must, Needs: []Need{NeedTypedJSON},
			Requirements: []string{"PRF-031", "PRF-032", "PRF-027", "WRK-005", "WRK-096", "WRK-097"},
			Title:        "conf.json.typed answers the positional form [\"ab\",2] and refuses other arrays: a wrapped object, three elements, swapped members (InvalidJsonInput, status 6)",
			Run: func(t *T) {
				w := t.session(jsonGrant(toolTyped))
				t.expectPayload("the typed answer to the positional form", jsonPayload(`{"count":2,"text":"abab"}`), w.invoke(toolTyped, jsonPayload(`["ab",2]`)))
				w.endInput()
				typedRefusals("InvalidJsonInput", `[{"text":"ab","repeat":2}]`, `["ab",2,true]`, `[2,"ab"]`)(t)
			},
		},
		&Check{
			ID: "CNF-PROFILE-19", Level: conformance.Must, Needs: []Need{NeedTypedJSON},
			Requirements: []string{"PRF-032", "PRF-027", "WRK-005", "WRK-096", "WRK-097"},
			Title:        "conf.json.typed refuses a missing member, an unknown member and a repeat above 255 (InvalidJsonInput, status 6)",
			Run:          typedRefusals("InvalidJsonInput", `{"repeat":2}`, `{"extra":true,"repeat":2,"text":"ab"}`, `{"repeat":256,"text":"ab"}`),
		},
		&Check{
			ID: "CNF-PROFILE-20", Unreachable: unreachableAcceptance, Level: conformance.Must, Needs: []Need{NeedTypedJSON},
			Requirements: []string{"PRF-031", "ENC-022", "WRK-005"},
			Title:        "conf.json.typed answers repeat counts up to 255, and a member repeated in the input by its last occurrence",
			Run: func(t *T) {
				w := t.session(jsonGrant(toolTyped))
				t.expectPayload("the typed answer for repeat 17", jsonPayload(`{"count":17,"text":"xxxxxxxxxxxxxxxxx"}`),
					w.invoke(toolTyped, jsonPayload(`{"repeat":17,"text":"x"}`)))
				t.expectPayload("the typed answer for repeat 255", jsonPayload(`{"count":255,"text":""}`),
					w.invoke(toolTyped, jsonPayload(`{"repeat":255,"text":""}`)))
				id := w.nextRequestID()
				canonical := `{"repeat":2,"text":"ab"}`
				w.writeLine(w.respell(w.invocation(id, toolTyped, jsonPayload(canonical)), canonical, `{"text":"x","repeat":9,"text":"ab","repeat":2}`))
				t.expectPayload("the typed answer to an input whose members repeat (the last occurrence wins)",
					jsonPayload(`{"count":2,"text":"abab"}`), w.expectResult(id))
				w.endInput()
			},
		},
	}
}

// typedRefusals returns a check body that, for each JSON input in turn, opens a session
// granting conf.json.typed, invokes it with the input and expects no answer and the end of the
// session (MUST), with the adapter status class and a diagnostic naming the adapter error kind
// (SHOULD, PRF-027).
func typedRefusals(kind string, inputs ...string) func(*T) {
	return func(t *T) {
		for _, in := range inputs {
			w := t.session(jsonGrant(toolTyped))
			w.sendInvoke(toolTyped, jsonPayload(in))
			w.expectExit(exitAdapter, "conf.json.typed given "+in)
			diag := strings.TrimSpace(w.stderr.Excerpt())
			if !strings.Contains(strings.ToLower(diag), strings.ToLower(kind)) {
				t.shouldf("a diagnostic naming the adapter error kind "+kind+" for the input "+in,
					"standard error: "+orNone([]string{diag}))
			}
		}
	}
}
