package model_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/authorizer"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/journal"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/model"
	"pgregory.net/rapid"
)

const journalScope = "tenant"

// journalPayload is a payload valid for its own format, with its abstract description in each
// number mode (sizes counted by hand).
type journalPayload struct {
	src      string // text, or JSON source
	json     bool
	preserve model.Payload
	lossy    model.Payload
}

func (p journalPayload) spec(m canonjson.Mode) model.Payload {
	if m == canonjson.Lossy {
		return p.lossy
	}
	return p.preserve
}

func (p journalPayload) make(m canonjson.Mode) protocol.ToolPayload {
	if p.json {
		return protocol.JSONPayload(mustJSON(p.src, m))
	}
	return protocol.TextPayload(p.src)
}

func journalPayloads() []journalPayload {
	text := func(s string) journalPayload {
		spec := model.Payload{Format: "text", Shape: model.ShapeValid, Size: len(s), Value: "text:" + s, WireLen: wireText(len(s))}
		return journalPayload{s, false, spec, spec}
	}
	// js describes JSON whose canonical form (same in both modes) has size bytes.
	js := func(src, label string, size int) journalPayload {
		spec := model.Payload{Format: "json", Shape: model.ShapeValid, Size: size, Value: label, WireLen: wireJSON(size)}
		return journalPayload{src, true, spec, spec}
	}
	// modal describes JSON whose canonical form differs between the modes.
	modal := func(src, preserveLabel string, preserveSize int, lossyLabel string, lossySize int) journalPayload {
		return journalPayload{src, true,
			model.Payload{Format: "json", Shape: model.ShapeValid, Size: preserveSize, Value: preserveLabel, WireLen: wireJSON(preserveSize)},
			model.Payload{Format: "json", Shape: model.ShapeValid, Size: lossySize, Value: lossyLabel, WireLen: wireJSON(lossySize)}}
	}
	big := strings.Repeat("y", 5000)
	return []journalPayload{
		text("a"),
		text("hello"),
		text(big), // 5,000 bytes: big enough to reach the 256 KiB journal bound
		js(`{"k":1}`, "json:k1", 7),
		js(`{ "k" : 1 }`, "json:k1", 7),
		js(`[1,2,3]`, "json:123", 7),
		js(`{"b":[true,null],"a":"x"}`, "json:ab", 25), // {"a":"x","b":[true,null]}
		modal(`{"n":1.0}`, "json:n1.0", 9, "json:n1f", 9),
		modal(`{"n":1.00}`, "json:n1.00", 10, "json:n1f", 9), // lossy writes 1.0
		js(`{"n":1}`, "json:n1", 7),
		js(`{"big":"`+big+`"}`, "json:big", 5010),
	}
}

// journalGrants returns calc (json) and echo (text) grants; narrow lowers the output limits to
// 8 bytes and flipped swaps the formats, so that tokens from the three issuers stand for three
// versions of the current grant.
func journalGrants(variant string) []protocol.CapabilityGrant {
	out := uint32(6000)
	calc, echo := protocol.FormatJSON, protocol.FormatText
	switch variant {
	case "narrow":
		out = 8
	case "flipped":
		calc, echo = echo, calc
	}
	return []protocol.CapabilityGrant{
		{Tool: "calc", Format: calc, MaxCalls: 1 << 20, MaxInputBytes: 6000, MaxOutputBytes: out, MaxCompensations: 1 << 20},
		{Tool: "echo", Format: echo, MaxCalls: 1 << 20, MaxInputBytes: 6000, MaxOutputBytes: out, MaxCompensations: 1 << 20},
	}
}

// journalIssuer authorizes requests with fresh ids, replacing its authorizer before the id
// capacity runs out (the journal does not check provenance).
type journalIssuer struct {
	manifest protocol.CapabilityManifest
	grants   map[string]model.Grant
	a        *authorizer.SessionAuthorizer
	next     int
}

func newJournalIssuer(t *rapid.T, variant string) *journalIssuer {
	gs := journalGrants(variant)
	m, err := protocol.NewCapabilityManifest(modelSession, gs)
	if err != nil {
		t.Fatalf("%v", err)
	}
	is := &journalIssuer{manifest: m, grants: map[string]model.Grant{}}
	for _, g := range modelGrants(t, gs) {
		is.grants[g.Tool] = g
	}
	return is
}

func (is *journalIssuer) authorizer(t *rapid.T) *authorizer.SessionAuthorizer {
	if is.a == nil || is.a.ReservedRequestIDs() >= protocol.MaxSessionRequestIDs-1 {
		a, err := authorizer.New(is.manifest)
		if err != nil {
			t.Fatalf("%v", err)
		}
		is.a = a
	}
	is.next++
	return is.a
}

func (is *journalIssuer) id() string { return fmt.Sprintf("req-%d", is.next) }

type journalHarness struct {
	mode     canonjson.Mode
	j        *journal.Journal
	m        *model.Journal
	issuers  map[string]*journalIssuer
	payloads []journalPayload
	// byLabel maps an identity label to one concrete payload with that label, and its input
	// fingerprint, for comparing stored records.
	byLabel      map[string]protocol.ToolPayload
	fingerprints map[string]string
	fresh        int
	// home holds, per operation key, the tool and payload indexes most requests reuse, so that
	// sequences of requests for one key usually agree and only sometimes drift.
	home map[string][3]int
}

// homeFor returns the usual tool, dispatch payload and compensation payload of a key,
// choosing them on first use.
func (h *journalHarness) homeFor(t *rapid.T, key string) (string, journalPayload, journalPayload) {
	hm, ok := h.home[key]
	if !ok {
		hm = [3]int{rapid.IntRange(0, 1).Draw(t, "homeTool"), rapid.IntRange(0, len(h.payloads)-1).Draw(t, "homePayload"),
			rapid.IntRange(0, len(h.payloads)-1).Draw(t, "homeCompensation")}
		h.home[key] = hm
	}
	tools := []string{"calc", "echo"}
	return tools[hm[0]], h.payloads[hm[1]], h.payloads[hm[2]]
}

// drift reports whether a request departs from its key's usual tool or payload.
func (h *journalHarness) drift(t *rapid.T, label string) bool {
	return rapid.IntRange(0, 7).Draw(t, label) == 0
}

// request draws a key with its tool and dispatch payload.
func (h *journalHarness) request(t *rapid.T) (string, string, journalPayload) {
	key := h.key(t)
	tool, p, _ := h.homeFor(t, key)
	if h.drift(t, "driftTool") {
		tool = h.tool(t)
	}
	if h.drift(t, "driftPayload") {
		p = h.payload(t)
	}
	return tool, key, p
}

func (h *journalHarness) remember(p journalPayload) (protocol.ToolPayload, model.Payload) {
	impl, spec := p.make(h.mode), p.spec(h.mode)
	if _, ok := h.byLabel[spec.Value]; !ok {
		h.byLabel[spec.Value] = impl
	}
	return impl, spec
}

func (h *journalHarness) issuer(t *rapid.T) *journalIssuer {
	return h.issuers[rapid.SampledFrom([]string{"wide", "wide", "wide", "wide", "narrow", "flipped"}).Draw(t, "issuer")]
}

func (h *journalHarness) payload(t *rapid.T) journalPayload {
	return rapid.SampledFrom(h.payloads).Draw(t, "payload")
}

func (h *journalHarness) key(t *rapid.T) string {
	return rapid.SampledFrom([]string{"k0", "k1", "k2"}).Draw(t, "key")
}

func (h *journalHarness) tool(t *rapid.T) string {
	return rapid.SampledFrom([]string{"calc", "calc", "echo"}).Draw(t, "tool")
}

// status draws a status; a succeeded payload usually has the format of the tool's wide grant.
func (h *journalHarness) status(t *rapid.T, tool string) (protocol.OperationStatus, model.Status) {
	switch rapid.IntRange(0, 5).Draw(t, "state") {
	case 0:
		return protocol.Running(), model.Status{State: "running"}
	case 1:
		return protocol.Cancelled(), model.Status{State: "cancelled"}
	case 2:
		msg := rapid.SampledFrom([]string{"", "boom", "bang", strings.Repeat("m", 4000)}).Draw(t, "message")
		return protocol.Failed(msg), model.Status{State: "failed", Message: msg}
	default:
		p := h.payload(t)
		if !h.drift(t, "driftResult") {
			want := tool == "calc" // calc is the JSON tool of the wide grants
			for p.json != want {
				p = h.payload(t)
			}
		}
		impl, spec := h.remember(p)
		return protocol.Succeeded(impl), model.Status{State: "succeeded", Payload: spec}
	}
}

// dispatchToken authorizes a dispatch; ok is false when the authorizer refuses it (the input
// does not fit the issuer's grant), in which case the command is skipped.
func (h *journalHarness) dispatchToken(t *rapid.T, is *journalIssuer, tool, key string, p journalPayload) (authorizer.AuthorizedOperationInvocation, model.Ticket, bool) {
	impl, spec := h.remember(p)
	a := is.authorizer(t)
	tok, err := a.AuthorizeOperation(protocol.OperationDispatchRequest{ProtocolVersion: 5, SessionID: modelSession, RequestID: is.id(), Tool: tool, OperationKey: key, Payload: impl})
	if err != nil {
		return tok, model.Ticket{}, false
	}
	return tok, model.Ticket{Grant: is.grants[tool], Dispatch: model.Dispatch{Tool: tool, OperationKey: key, Payload: spec}}, true
}

func (h *journalHarness) reconcileToken(t *rapid.T, is *journalIssuer, tool, key string) (authorizer.AuthorizedOperationReconciliation, model.Ticket) {
	a := is.authorizer(t)
	tok, err := a.AuthorizeReconciliation(protocol.OperationReconcileRequest{ProtocolVersion: 5, SessionID: modelSession, RequestID: is.id(), Tool: tool, OperationKey: key})
	if err != nil {
		t.Fatalf("reconciliation: %v", err)
	}
	return tok, model.Ticket{Grant: is.grants[tool], Reconcile: model.Reconcile{Tool: tool, OperationKey: key}}
}

func (h *journalHarness) compensationToken(t *rapid.T, is *journalIssuer) (authorizer.AuthorizedOperationCompensation, model.Ticket, bool) {
	key := h.key(t)
	tool, _, p := h.homeFor(t, key)
	if h.drift(t, "driftTool") {
		tool = h.tool(t)
	}
	if h.drift(t, "driftPayload") {
		p = h.payload(t)
	}
	impl, spec := h.remember(p)
	g := is.grants[tool]
	req := protocol.OperationCompensationRequest{
		ProtocolVersion: 5, SessionID: modelSession, RequestID: is.id(), Tool: tool, OperationKey: key,
		CompensationKey:  rapid.SampledFrom([]string{"cmp-1", "cmp-1", "cmp-1", "cmp-1", "cmp-1", "cmp-2"}).Draw(t, "cmpKey"),
		TenantScope:      rapid.SampledFrom([]string{journalScope, journalScope, journalScope, journalScope, journalScope, "tenant-2"}).Draw(t, "tenant"),
		GrantFingerprint: g.Fingerprint, Payload: impl,
	}
	tok, err := is.authorizer(t).AuthorizeCompensation(req)
	if err != nil {
		return tok, model.Ticket{}, false
	}
	return tok, model.Ticket{Grant: g, Compensation: model.Compensation{
		Tool: tool, OperationKey: key, CompensationKey: req.CompensationKey, TenantScope: req.TenantScope,
		GrantFingerprint: req.GrantFingerprint, Payload: spec,
	}}, true
}

func sameState(impl protocol.OperationStatus, m model.JournalState, byLabel map[string]protocol.ToolPayload) bool {
	if impl.State.WireName() != m.State {
		return false
	}
	switch m.State {
	case "succeeded":
		return impl.Payload.Equal(byLabel[m.Payload.Value])
	case "failed":
		return impl.Message == m.Message
	}
	return true
}

func (h *journalHarness) compareState(t *rapid.T, op string, impl protocol.OperationStatus, m model.JournalState) {
	if !sameState(impl, m, h.byLabel) {
		t.Fatalf("%s: implementation state %v, model %s", op, impl.State, m.State)
	}
}

// fingerprintOf returns the input fingerprint of the payload with the label.
func (h *journalHarness) fingerprintOf(t *rapid.T, label string) string {
	if fp, ok := h.fingerprints[label]; ok {
		return fp
	}
	fp, err := protocol.OperationInputFingerprint(h.byLabel[label])
	if err != nil {
		t.Fatalf("%v", err)
	}
	h.fingerprints[label] = fp
	return fp
}

// check compares the journal with the model: records, states, fingerprints and the size.
func (h *journalHarness) check(t *rapid.T) {
	rs := h.j.Records()
	if len(rs) != len(h.m.Records) {
		t.Fatalf("%d records, model %d (%s)", len(rs), len(h.m.Records), h.m.Describe())
	}
	for i, r := range rs {
		mr := h.m.Records[i]
		if r.Tool != mr.Tool || r.OperationKey != mr.Key || r.InputFingerprint != h.fingerprintOf(t, mr.Input) {
			t.Fatalf("record %d differs from the model", i)
		}
		h.compareState(t, "record "+mr.Key, r.State, mr.State)
		if (r.Compensation == nil) != (mr.Compensation == nil) {
			t.Fatalf("record %s: compensation presence differs", mr.Key)
		}
		if c := r.Compensation; c != nil {
			mc := mr.Compensation
			if c.CompensationKey != mc.Key || c.GrantFingerprint != mc.GrantFingerprint || c.InputFingerprint != h.fingerprintOf(t, mc.Input) {
				t.Fatalf("record %s: compensation differs from the model", mr.Key)
			}
			h.compareState(t, "compensation "+mr.Key, c.State, mc.State)
		}
	}
	if h.j.Size() != h.m.Size() {
		t.Fatalf("journal Size %d, model %d", h.j.Size(), h.m.Size())
	}
	if h.j.Size() > model.MaxJournalBytes {
		t.Fatalf("journal over the bound: %d", h.j.Size())
	}
}

// checkReload checks that the journal's JSON loads back to an equal journal that serializes
// to the same bytes.
func (h *journalHarness) checkReload(t *rapid.T) {
	out, err := h.j.ToJSON()
	if err != nil {
		t.Fatalf("ToJSON: %v", err)
	}
	if len(out) != h.m.Size() {
		t.Fatalf("journal is %d bytes, model %d", len(out), h.m.Size())
	}
	back, err := journal.FromJSON(out, h.mode)
	if err != nil || !back.Equal(h.j) {
		t.Fatalf("journal does not reload: %v", err)
	}
	if again, _ := back.ToJSON(); !bytes.Equal(again, out) {
		t.Fatal("reloaded journal serializes differently")
	}
}

func admissionName(a journal.Admission) string {
	if a.Kind == 0 {
		return ""
	}
	return a.Kind.String()
}

// Spec: JRN-005, JRN-009, JRN-010, JRN-011, JRN-012, JRN-013, JRN-015, JRN-016, JRN-017, JRN-018
// Spec: JRN-019, JRN-020, JRN-021, JRN-022, JRN-023
func TestJournalModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		mode := rapid.SampledFrom([]canonjson.Mode{canonjson.Preserve, canonjson.Lossy}).Draw(t, "mode")
		j, err := journal.New(journalScope)
		if err != nil {
			t.Fatalf("%v", err)
		}
		h := &journalHarness{
			mode: mode, j: j, m: model.NewJournal(journalScope), payloads: journalPayloads(),
			issuers: map[string]*journalIssuer{
				"wide": newJournalIssuer(t, "wide"), "narrow": newJournalIssuer(t, "narrow"), "flipped": newJournalIssuer(t, "flipped"),
			},
			byLabel:      map[string]protocol.ToolPayload{},
			fingerprints: map[string]string{},
			home:         map[string][3]int{},
		}
		admit := func(t *rapid.T) {
			tool, key, p := h.request(t)
			tok, mt, ok := h.dispatchToken(t, h.issuer(t), tool, key, p)
			if !ok {
				t.Skip("not authorized")
			}
			a, err := h.j.Admit(tok)
			mk, ms, merr := h.m.Admit(mt)
			compare(t, "admit", kindName(t, err), merr)
			if admissionName(a) != mk {
				t.Fatalf("admit: implementation %q, model %q", admissionName(a), mk)
			}
			if mk == model.AdmitExisting {
				h.compareState(t, "admit", a.State, ms)
			}
		}
		actions := map[string]func(*rapid.T){
			"admit": admit,
			"admitFresh": func(t *rapid.T) {
				// Admit new keys, each observed as succeeded with a small or a 5,000-byte
				// result, to reach the record and size bounds.
				n := rapid.SampledFrom([]int{1, 5, 20, 40, 64}).Draw(t, "n")
				result := h.payloads[rapid.SampledFrom([]int{0, 2}).Draw(t, "result")]
				impl, spec := h.remember(result)
				for i := 0; i < n; i++ {
					h.fresh++
					tok, mt, ok := h.dispatchToken(t, h.issuers["wide"], "echo", fmt.Sprintf("fresh-%d", h.fresh), h.payloads[0])
					if !ok {
						t.Fatalf("fresh dispatch not authorized")
					}
					_, err := h.j.Admit(tok)
					_, _, merr := h.m.Admit(mt)
					compare(t, "admitFresh", kindName(t, err), merr)
					_, err = h.j.Observe(tok, protocol.Succeeded(impl))
					_, merr = h.m.Observe(mt, model.Status{State: "succeeded", Payload: spec})
					compare(t, "admitFresh/observe", kindName(t, err), merr)
				}
			},
			"observe": func(t *rapid.T) {
				tool, key, p := h.request(t)
				tok, mt, ok := h.dispatchToken(t, h.issuer(t), tool, key, p)
				if !ok {
					t.Skip("not authorized")
				}
				st, ms := h.status(t, tool)
				got, err := h.j.Observe(tok, st)
				want, merr := h.m.Observe(mt, ms)
				compare(t, "observe", kindName(t, err), merr)
				if err == nil {
					h.compareState(t, "observe", got, want)
				}
			},
			"validateReconciliation": func(t *rapid.T) {
				tool, key, _ := h.request(t)
				tok, mt := h.reconcileToken(t, h.issuer(t), tool, key)
				compare(t, "validateReconciliation", kindName(t, h.j.ValidateReconciliation(tok)), h.m.ValidateReconciliation(mt))
			},
			"observeReconciliation": func(t *rapid.T) {
				tool, key, _ := h.request(t)
				tok, mt := h.reconcileToken(t, h.issuer(t), tool, key)
				st, ms := h.status(t, tool)
				got, err := h.j.ObserveReconciliation(tok, st)
				want, merr := h.m.ObserveReconciliation(mt, ms)
				compare(t, "observeReconciliation", kindName(t, err), merr)
				if err == nil {
					h.compareState(t, "observeReconciliation", got, want)
				}
			},
			"admitCompensation": func(t *rapid.T) {
				tok, mt, ok := h.compensationToken(t, h.issuer(t))
				if !ok {
					t.Skip("not authorized")
				}
				a, err := h.j.AdmitCompensation(tok)
				mk, ms, merr := h.m.AdmitCompensation(mt)
				compare(t, "admitCompensation", kindName(t, err), merr)
				if admissionName(a) != mk {
					t.Fatalf("admitCompensation: implementation %q, model %q", admissionName(a), mk)
				}
				if mk == model.AdmitExisting {
					h.compareState(t, "admitCompensation", a.State, ms)
				}
			},
			"observeCompensation": func(t *rapid.T) {
				tok, mt, ok := h.compensationToken(t, h.issuer(t))
				if !ok {
					t.Skip("not authorized")
				}
				st, ms := h.status(t, mt.Compensation.Tool)
				got, err := h.j.ObserveCompensation(tok, st)
				want, merr := h.m.ObserveCompensation(mt, ms)
				compare(t, "observeCompensation", kindName(t, err), merr)
				if err == nil {
					h.compareState(t, "observeCompensation", got, want)
				}
			},
			"": h.check,
		}
		actions["admitAgain"] = actions["admit"]
		actions["admitOnceMore"] = actions["admit"]
		actions["observeAgain"] = actions["observe"]
		actions["admitCompensationAgain"] = actions["admitCompensation"]
		actions["observeCompensationAgain"] = actions["observeCompensation"]
		// A journal needs longer histories than one Repeat's default length to reach
		// compensations and the bounds; Repeat runs continue on the same journal.
		for range 4 {
			t.Repeat(actions)
			h.checkReload(t)
		}
	})
}
