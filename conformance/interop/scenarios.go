package interop

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/driver"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
)

// Scenario is one interop scenario: a session driven through the host against the real worker,
// judged at both ends and on the wire. Every scenario is a MUST; its Features are the driver
// features it needs (HDR-010) and its Needs the worker's (IOP-008).
type Scenario = conformance.Check[*T]

// Catalog returns every scenario, ordered by ID.
func Catalog() conformance.Catalog[*T] {
	return conformance.SortedCatalog(echoScenarios(), numberScenarios(), budgetScenarios(), durableScenarios(), cancelScenarios(), closeScenarios())
}

// CatalogEntries returns the digest entries of the scenario catalog.
func CatalogEntries() []conformance.CatalogEntry { return Catalog().Entries() }

// Suite describes the interop suite: its version and the digest of its scenario catalog.
func Suite() conformance.SuiteInfo { return conformance.NewSuiteInfo("interop", CatalogEntries()) }

// Tools of the conformance profile (PRF-001) the scenarios grant.
const (
	toolTextEcho      = "conf.text.echo"
	toolJSONEcho      = "conf.json.echo"
	toolDurable       = "conf.durable.record"
	toolCancellable   = "conf.slow.cancellable"
	toolUncooperative = "conf.slow.uncooperative"
)

const (
	featureInvoke     = "invoke"
	featureDurable    = "durable"
	featureCancel     = "cancel"
	featureRecover    = "recover"
	featureCompensate = "compensate"
)

func grant(tool string, format protocol.EnvelopeFormat) protocol.CapabilityGrant {
	return protocol.CapabilityGrant{Tool: tool, Format: format, MaxCalls: 100, MaxInputBytes: 64 << 10, MaxOutputBytes: 64 << 10}
}

func durableGrant() protocol.CapabilityGrant {
	g := grant(toolDurable, protocol.FormatJSON)
	g.MaxCompensations = 2
	return g
}

func jsonValue(s string) canonjson.Value {
	v, err := canonjson.ParseValue([]byte(s), canonjson.Preserve)
	if err != nil {
		panic(fmt.Sprintf("interop: bad JSON literal %q: %v", s, err))
	}
	return v
}

func payloadJSON(p protocol.ToolPayload) json.RawMessage { return json.RawMessage(p.AppendJSON(nil)) }

// invoke runs one invocation through the driver and returns its outcome.
func (t *T) invoke(requestID, tool string, p protocol.ToolPayload) driver.Outcome {
	return t.call(map[string]any{"op": "invoke", "request_id": requestID, "tool": tool, "payload": payloadJSON(p)})
}

// expectPayload requires an ok outcome carrying exactly want.
func (t *T) expectPayload(what string, o driver.Outcome, want protocol.ToolPayload) {
	if !o.OK || !samePayload(o.Payload, want) {
		t.Failf(what+": "+string(want.AppendJSON(nil)), string(o.Raw()))
	}
}

// samePayload reports whether an outcome's payload (plain JSON, HDR-030's decision) is want:
// read in Preserve mode, its canonical form is want's.
func samePayload(raw json.RawMessage, want protocol.ToolPayload) bool {
	p, err := protocol.DecodeToolPayload(raw, canonjson.Preserve)
	return err == nil && string(p.AppendJSON(nil)) == string(want.AppendJSON(nil))
}

// closeClean ends an ordinary or cancellable session as HDR-023 says and requires a clean end at
// both ends: the driver reports exit 0, and the relay saw the worker exit 0 (WRK-092).
func (t *T) closeClean(r *relay) {
	if o := t.call(map[string]any{"op": "close"}); !o.OK {
		t.Failf("close answered with ok"+t.Cite("HDR-023"), string(o.Raw()))
	}
	o := t.call(map[string]any{"op": "wait"})
	if code := r.exitStatus(); code != 0 {
		t.Failf("the worker exits 0 at the end of the session"+t.Cite("WRK-092"), fmt.Sprintf("exit status %d", code))
	}
	if !o.OK || o.ExitCode == nil || *o.ExitCode != 0 {
		t.Failf(`the driver sees the clean end: {"ok":true,"exit_code":0}`+t.Cite("HDR-024"), string(o.Raw()))
	}
}

func echoScenarios() []*Scenario {
	texts := []string{"", "ping", "héllo wörld ✓ 𝄞 日本語", "quote \" backslash \\ slash / tab \t newline \n",
		"controls \u0000\u0001\u001f\u007f", "\u2028\u2029 separators", "surrogate-free \U0010ffff", strings.Repeat("long ", 1000)}
	values := []string{
		`{"b":1,"a":2,"é":3,"A":4,"":5}`,
		`{"escapes":"\" \\ \/ \b \f \n \r \t \u0000 \u001f \u00e9 \ud834\udd1e"}`,
		strings.Repeat(`[`, 30) + `{"deep":true}` + strings.Repeat(`]`, 30), // the deepest value at depth 32 (MSG-036)
		`[null,true,false,"",[],{}]`,
		`{"portable":[0,-1,1.5,0.1,-2.5e-7,1e+22,18446744073709551615,-9223372036854775808,5e-324,1.7976931348623157e+308]}`,
	}
	return []*Scenario{
		{ID: "CNF-IOP-ECHO-01", Title: "text echo corpus: Unicode, escapes and control characters come back unchanged",
			Requirements: []string{"PRF-003", "ENC-001", "HDR-021", "IOP-002"}, Features: []string{featureInvoke},
			Run: func(t *T) {
				r := t.start(protocol.BaselineSession, nil, grant(toolTextEcho, protocol.FormatText))
				for i, s := range texts {
					p := protocol.TextPayload(s)
					t.expectPayload(fmt.Sprintf("the echo of text %d", i+1), t.invoke(fmt.Sprintf("req-%d", i+1), toolTextEcho, p), p)
				}
				t.closeClean(r)
			}},
		{ID: "CNF-IOP-ECHO-02", Title: "JSON echo corpus: key order, escapes, depth and portable numbers come back in canonical form",
			Requirements: []string{"PRF-004", "ENC-034", "ENC-035", "HDR-021", "IOP-002"}, Features: []string{featureInvoke},
			Run: func(t *T) {
				r := t.start(protocol.BaselineSession, nil, grant(toolJSONEcho, protocol.FormatJSON))
				for i, v := range values {
					p := protocol.JSONPayload(jsonValue(v))
					t.expectPayload(fmt.Sprintf("the echo of value %d", i+1), t.invoke(fmt.Sprintf("req-%d", i+1), toolJSONEcho, p), p)
				}
				t.closeClean(r)
			}},
	}
}

// disputedNumbers are number spellings the two reference builds disagree on (spec/01 §1.4):
// a Preserve reader keeps their text, a Lossy one computes another tag or cannot read them.
var disputedNumbers = []string{"1e2", "0.10", "1.50", "-0", "18446744073709551616", "1e400", "1e-400", "100000000000000000000000"}

func numberScenarios() []*Scenario {
	return []*Scenario{
		{ID: "CNF-IOP-NUMBER-01", Title: "number spellings the reference builds disagree on are refused by the host or kept verbatim, never silently altered",
			Requirements: []string{"ENC-034", "ENC-036", "ENC-037", "ENC-053", "ENC-055", "IOP-007"}, Features: []string{featureInvoke},
			Run: numberHazard},
	}
}

// numberHazard sends each disputed spelling in a session of its own. Every pair must either
// have the host refuse it before a frame (ENC-037) or carry it through unchanged; a pair whose
// worker reads numbers lossily and whose host sends it ends the session at the worker's tag
// check, which is the documented hazard (ENC-055), not a failure. A changed echo fails.
func numberHazard(t *T) {
	var refused, kept, rejected []string
	for i, tok := range disputedNumbers {
		r := t.start(protocol.BaselineSession, nil, grant(toolJSONEcho, protocol.FormatJSON))
		p := protocol.JSONPayload(jsonValue(`{"n":` + tok + `}`))
		o := t.invoke(fmt.Sprintf("num-%d", i+1), toolJSONEcho, p)
		t.call(map[string]any{"op": "close"})
		t.call(map[string]any{"op": "wait"})
		code := r.exitStatus() // every event of the relay is in once its exit is
		sent := r.count(HostSide, protocol.TypeInvoke) > 0
		switch {
		case !sent && !o.OK:
			refused = append(refused, tok)
		case sent && o.OK && samePayload(o.Payload, p):
			kept = append(kept, tok)
		case sent && !o.OK && code == 4:
			rejected = append(rejected, tok)
		default:
			t.Failf(fmt.Sprintf("%s refused by the host, or echoed verbatim as %s", tok, p.AppendJSON(nil)),
				fmt.Sprintf("sent %v, outcome %s, worker exit %d", sent, conformance.Clip(string(o.Raw()), 200), code))
		}
	}
	t.Logf("refused by the host: %v; kept verbatim: %v; rejected by the worker: %v", refused, kept, rejected)
	if t.pair.Host.Numbers != t.pair.Worker.Numbers {
		t.hazard = fmt.Sprintf("the host's number model is %s and the worker's %s (spec/01 §1.4, ENC-055): "+
			"of %d disputed spellings the host refused %d before sending (ENC-037), %d passed unchanged, and the worker's "+
			"tag check rejected %d, ending the session; a host that sends only portable numbers never meets it",
			t.pair.Host.Numbers, t.pair.Worker.Numbers, len(disputedNumbers), len(refused), len(kept), len(rejected))
	} else if len(rejected) > 0 {
		t.Failf("every disputed spelling refused by the host or kept by the worker: both read numbers "+t.pair.Worker.Numbers,
			fmt.Sprintf("the worker rejected %v", rejected))
	}
}

func budgetScenarios() []*Scenario {
	return []*Scenario{
		{ID: "CNF-IOP-BUDGET-01", Title: "the host enforces the grant's limits before sending: refused invocations reach no worker, spend nothing, and the session goes on",
			Requirements: []string{"AUZ-008", "AUZ-010", "HDR-022", "IOP-005"}, Features: []string{featureInvoke},
			Run: func(t *T) {
				g := grant(toolTextEcho, protocol.FormatText)
				g.MaxCalls, g.MaxInputBytes = 2, 8
				r := t.start(protocol.BaselineSession, nil, g)
				if o := t.invoke("req-1", toolTextEcho, protocol.TextPayload("123456789")); o.OK || o.Error != "Denied" {
					t.Failf(`"Denied" for a payload over max_input_bytes`, string(o.Raw()))
				}
				t.expectPayload("the echo at exactly max_input_bytes", t.invoke("req-1", toolTextEcho, protocol.TextPayload("12345678")), protocol.TextPayload("12345678"))
				t.expectPayload("the second call", t.invoke("req-2", toolTextEcho, protocol.TextPayload("x")), protocol.TextPayload("x"))
				if o := t.invoke("req-3", toolTextEcho, protocol.TextPayload("x")); o.OK || o.Error != "Denied" {
					t.Failf(`"Denied" for a call over max_calls`, string(o.Raw()))
				}
				t.closeClean(r)
				if n := r.count(HostSide, protocol.TypeInvoke); n != 2 {
					t.Failf("2 invokes on the wire, none for the refused ones", fmt.Sprintf("%d", n))
				}
			}},
		{ID: "CNF-IOP-BUDGET-02", Title: "1,024 identities per session: the worker answers all 1,024, the host refuses the 1,025th before sending",
			Requirements: []string{"AUZ-006", "AUZ-024", "IOP-005"}, Features: []string{featureInvoke},
			Run: func(t *T) {
				g := grant(toolTextEcho, protocol.FormatText)
				g.MaxCalls = 2 * protocol.MaxSessionRequestIDs
				r := t.start(protocol.BaselineSession, nil, g)
				n := protocol.MaxSessionRequestIDs
				t.pipeline(n, func(i int) map[string]any {
					return map[string]any{"op": "invoke", "request_id": fmt.Sprintf("fill-%04d", i), "tool": toolTextEcho, "payload": payloadJSON(protocol.TextPayload("x"))}
				})
				t.Logf("%d invocations answered", n)
				if o := t.invoke("fill-over", toolTextEcho, protocol.TextPayload("x")); o.OK || o.Error != "Denied" {
					t.Failf(`"Denied" for the 1,025th identity (AUZ-006)`, string(o.Raw()))
				}
				t.closeClean(r)
				if got := r.count(HostSide, protocol.TypeInvoke); got != n {
					t.Failf(fmt.Sprintf("%d invokes on the wire", n), fmt.Sprintf("%d", got))
				}
			}},
	}
}

// pipeline writes n commands ahead (commands(i), 1-based) from a goroutine, so that neither a
// full pipe to the driver nor a round trip per command slows the scenario, and requires an ok
// outcome for each, in order.
func (t *T) pipeline(n int, commands func(i int) map[string]any) {
	ids := make(chan uint64, n)
	go func() {
		defer close(ids)
		for i := 1; i <= n; i++ {
			id, err := t.drv.Send(commands(i))
			if err != nil {
				return
			}
			ids <- id
		}
	}()
	got := 0
	for id := range ids {
		o, err := t.drv.Await(id, t.Deadline)
		if err != nil || !o.OK {
			t.Failf(fmt.Sprintf("%d commands answered with ok", n), fmt.Sprintf("command %d: %v %s", id, err, conformance.Clip(string(o.Raw()), 200)))
		}
		got++
	}
	if got != n {
		t.End(conformance.Crash, "the host driver stopped reading commands")
	}
}

// expectOK requires an ok outcome.
func (t *T) expectOK(o driver.Outcome, what string) {
	if !o.OK {
		t.Failf(what+" answered with ok", string(o.Raw()))
	}
}
