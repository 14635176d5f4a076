package protocol

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
)

func validGrant(tool string) CapabilityGrant {
	return CapabilityGrant{Tool: tool, Format: FormatJSON, MaxCalls: 3, MaxInputBytes: 100, MaxOutputBytes: 200, MaxCompensations: 2,
		Resources: []ResourceSelector{{ResourceFileRoot, "root"}, {ResourceSecret, "key"}}}
}

func grants(n int) []CapabilityGrant {
	out := make([]CapabilityGrant, n)
	for i := range out {
		out[i] = validGrant("tool-" + strconv.Itoa(i))
	}
	return out
}

type kindCase struct {
	name string
	err  error
	kind ErrorKind
}

func checkKinds(t *testing.T, cases []kindCase) {
	t.Helper()
	for _, c := range cases {
		if c.kind == 0 {
			if c.err != nil {
				t.Errorf("%s: unexpected error %v", c.name, c.err)
			}
			continue
		}
		if !isKind(c.err, c.kind) {
			t.Errorf("%s: got %v, want %v", c.name, c.err, c.kind)
		}
	}
}

// Spec: MAN-006, MAN-007, MAN-008, MSG-041
func TestManifestValidationOrder(t *testing.T) {
	m := func(version uint16, session string, gs []CapabilityGrant) error {
		return CapabilityManifest{ProtocolVersion: version, SessionID: session, Grants: gs}.Validate()
	}
	badGrant := validGrant("bad")
	badGrant.MaxCalls = 0
	checkKinds(t, []kindCase{
		{"version first", m(4, "S", grants(129)), ErrUnsupportedVersion},
		{"then the grant count", m(5, "S", grants(129)), ErrTooManyGrants},
		{"128 grants are fine", m(5, "s", grants(128)), 0},
		{"zero grants are fine", m(5, "s", nil), 0},
		{"then the session token", m(5, "S", []CapabilityGrant{badGrant}), ErrInvalidToken},
		{"each grant validates before the duplicate check of a later one",
			m(5, "s", []CapabilityGrant{validGrant("a"), badGrant, validGrant("a")}), ErrInvalidGrant},
		{"a duplicate before an invalid grant",
			m(5, "s", []CapabilityGrant{validGrant("a"), validGrant("a"), badGrant}), ErrDuplicateGrant},
		{"a duplicate's own validation comes first",
			m(5, "s", []CapabilityGrant{validGrant("bad"), badGrant}), ErrInvalidGrant},
	})
	var pe *Error
	if err := m(5, "s", grants(129)); !errors.As(err, &pe) || pe.Maximum != 128 {
		t.Errorf("TooManyGrants maximum: %v", err)
	}
	if err := m(5, "s", []CapabilityGrant{validGrant("a"), validGrant("b"), validGrant("a")}); !errors.As(err, &pe) || pe.Value != "a" {
		t.Errorf("DuplicateGrant tool: %v", err)
	}
	if err := m(5, "Session", nil); !isTokenError(err, FieldSessionID, "Session") {
		t.Errorf("session token: %v", err)
	}
}

// Spec: MAN-001, MAN-002, MAN-003, MAN-004, ENC-048
func TestGrantValidationOrder(t *testing.T) {
	with := func(f func(*CapabilityGrant)) error {
		g := validGrant("t")
		f(&g)
		return g.Validate()
	}
	manyResources := func(n int, id string) []ResourceSelector {
		rs := make([]ResourceSelector, n)
		for i := range rs {
			rs[i] = ResourceSelector{ResourceExecutable, id + strconv.Itoa(i)}
		}
		return rs
	}
	checkKinds(t, []kindCase{
		{"tool before limits", with(func(g *CapabilityGrant) { g.Tool = "T"; g.MaxCalls = 0 }), ErrInvalidToken},
		{"max_calls zero", with(func(g *CapabilityGrant) { g.MaxCalls = 0; g.MaxInputBytes = 0 }), ErrInvalidGrant},
		{"input zero", with(func(g *CapabilityGrant) { g.MaxInputBytes = 0 }), ErrInvalidGrant},
		{"output zero", with(func(g *CapabilityGrant) { g.MaxOutputBytes = 0 }), ErrInvalidGrant},
		{"limits before the resource count", with(func(g *CapabilityGrant) { g.MaxOutputBytes = 0; g.Resources = manyResources(65, "r") }), ErrInvalidGrant},
		{"65 resources", with(func(g *CapabilityGrant) { g.Resources = manyResources(65, "R") }), ErrTooManyResources},
		{"64 resources", with(func(g *CapabilityGrant) { g.Resources = manyResources(64, "r") }), 0},
		{"64 distinct resources with repeats", with(func(g *CapabilityGrant) {
			g.Resources = append(manyResources(64, "r"), manyResources(64, "r")...)
		}), 0},
		{"zero compensations is valid", with(func(g *CapabilityGrant) { g.MaxCompensations = 0 }), 0},
		{"invalid resource id", with(func(g *CapabilityGrant) { g.Resources = []ResourceSelector{{ResourceSecret, ""}} }), ErrInvalidToken},
	})
	var pe *Error
	if err := with(func(g *CapabilityGrant) { g.MaxCalls = 0 }); !errors.As(err, &pe) || pe.Message != "max_calls must be greater than zero" {
		t.Errorf("max_calls message: %v", err)
	}
	if err := with(func(g *CapabilityGrant) { g.MaxOutputBytes = 0 }); !errors.As(err, &pe) || pe.Message != "byte limits must be greater than zero" {
		t.Errorf("byte limit message: %v", err)
	}
	if err := with(func(g *CapabilityGrant) { g.Resources = manyResources(65, "r") }); !errors.As(err, &pe) || pe.Maximum != 64 {
		t.Errorf("TooManyResources maximum: %v", err)
	}
	// Resource ids are checked in set order: kind first, then id bytes.
	err := with(func(g *CapabilityGrant) {
		g.Resources = []ResourceSelector{{ResourceSecret, "A"}, {ResourceFileRoot, "Z"}, {ResourceFileRoot, "B"}}
	})
	if !isTokenError(err, FieldResourceSelector, "B") {
		t.Errorf("first invalid selector in set order: %v, want B", err)
	}
}

// Spec: MSG-002, MSG-003, MSG-004, MSG-005
func TestTokenGrammar(t *testing.T) {
	for _, tt := range []struct {
		value string
		ok    bool
	}{
		{"a", true}, {".", true}, {"-", true}, {"_", true}, {"..-_", true}, {"cmp-", true},
		{"session-1", true}, {"a.b_c-9", true}, {strings.Repeat("a", 128), true},
		{"", false}, {strings.Repeat("a", 129), false}, {"A", false}, {"a b", false}, {"a/b", false},
		{"é", false}, {"a\x00", false}, {"a:b", false}, {"a+b", false},
	} {
		if got := IsToken(tt.value); got != tt.ok {
			t.Errorf("IsToken(%q) = %v", tt.value, got)
		}
		err := ValidateToken(FieldRequestID, tt.value)
		if tt.ok != (err == nil) || (!tt.ok && !isTokenError(err, FieldRequestID, tt.value)) {
			t.Errorf("ValidateToken(%q) = %v", tt.value, err)
		}
	}
	checkKinds(t, []kindCase{
		{"cmp- alone", ValidateCompensationKey("cmp-"), 0},
		{"cmp-undo", ValidateCompensationKey("cmp-undo"), 0},
		{"no prefix", ValidateCompensationKey("cmp"), ErrInvalidCompensationKey},
		{"prefix later", ValidateCompensationKey("x-cmp-"), ErrInvalidCompensationKey},
		{"token first", ValidateCompensationKey("CMP-1"), ErrInvalidToken},
	})
	if err := ValidateCompensationKey("Cmp"); !isTokenError(err, FieldCompensationKey, "Cmp") {
		t.Errorf("compensation key label: %v", err)
	}
	hex64 := strings.Repeat("0123456789abcdef", 4)
	for _, tt := range []struct {
		s  string
		ok bool
	}{{hex64, true}, {strings.ToUpper(hex64), false}, {hex64[1:], false}, {hex64 + "0", false}, {hex64[:63] + "g", false}, {" " + hex64[1:], false}} {
		if IsFingerprint(tt.s) != tt.ok {
			t.Errorf("IsFingerprint(%q) = %v", tt.s, !tt.ok)
		}
	}
}

const fp64 = "b4586b43cee35f3490e1be033cf424c5d927417c4e5af7cd685123764a8c8be9"

// Spec: MSG-014, MSG-015, MSG-016, MSG-017, MSG-018, MSG-019, MSG-020, MSG-031
func TestHeaderValidationOrders(t *testing.T) {
	inv := func(v uint16, s, r, tool string) error {
		return ToolInvocation{v, s, r, tool, TextPayload("x")}.ValidateHeader()
	}
	res := func(v uint16, s, r string) error { return ToolResult{v, s, r, TextPayload("x")}.ValidateHeader() }
	can := func(v uint16, s, c, r, tool string) error {
		return WorkerCancellationRequest{v, s, c, r, tool}.Validate()
	}
	canRes := func(v uint16, s, c, r, tool string) error {
		return WorkerCancellationResult{v, s, c, r, tool, OutcomeUnsupported}.Validate()
	}
	obj := JSONPayload(canonjson.Object())
	scalar := JSONPayload(canonjson.Uint(1))
	disp := func(v uint16, s, r, tool, k string, p ToolPayload) error {
		return OperationDispatchRequest{v, s, r, tool, k, p}.Validate()
	}
	comp := func(k, scope, fp string, p ToolPayload) error {
		return OperationCompensationRequest{5, "s", "r", "t", "op", k, scope, fp, p}.Validate()
	}
	compRes := func(k, scope, fp string, st OperationStatus) error {
		return OperationCompensationResult{5, "s", "r", "t", "op", k, scope, fp, st}.Validate()
	}
	checkKinds(t, []kindCase{
		{"invoke: version", inv(4, "S", "R", "T"), ErrUnsupportedVersion},
		{"invoke: session", inv(5, "S", "R", "T"), ErrInvalidToken},
		{"invoke: ok", inv(5, "s", "r", "t"), 0},
		{"result: version", res(6, "S", "R"), ErrUnsupportedVersion},
		{"cancel: version", can(0, "S", "C", "R", "T"), ErrUnsupportedVersion},
		{"cancel: ids equal", can(5, "s", "same", "same", "t"), ErrCancellationIdMatchesRequest},
		{"cancel: tokens before equality", can(5, "s", "same", "same", "T"), ErrInvalidToken},
		{"cancellation result: ids equal", canRes(5, "s", "x", "x", "t"), ErrCancellationIdMatchesRequest},
		{"dispatch: header before payload", disp(5, "s", "r", "t", "K", scalar), ErrInvalidToken},
		{"dispatch: payload", disp(5, "s", "r", "t", "k", scalar), ErrInvalidJsonEnvelope},
		{"dispatch: ok", disp(5, "s", "r", "t", "k", obj), 0},
		{"compensation: key token", comp("CMP-1", "T", "x", scalar), ErrInvalidToken},
		{"compensation: key prefix", comp("undo-1", "T", "x", scalar), ErrInvalidCompensationKey},
		{"compensation: tenant scope", comp("cmp-", "T", "x", scalar), ErrInvalidToken},
		{"compensation: fingerprint", comp("cmp-", "t", strings.ToUpper(fp64), scalar), ErrInvalidCompensationGrantFingerprint},
		{"compensation: payload last", comp("cmp-", "t", fp64, scalar), ErrInvalidJsonEnvelope},
		{"compensation: ok", comp("cmp-", "t", fp64, obj), 0},
		{"compensation result: status last", compRes("cmp-1", "t", fp64, Failed("")), ErrInvalidOperationFailure},
		{"compensation result: fingerprint before status", compRes("cmp-1", "t", fp64[:63], Failed("")), ErrInvalidCompensationGrantFingerprint},
		{"reconcile: operation key", OperationReconcileRequest{5, "s", "r", "t", ""}.Validate(), ErrInvalidToken},
		{"operation result: header before status", OperationReconcileResult{5, "s", "r", "t", "K", Failed("")}.Validate(), ErrInvalidToken},
		{"operation result: status", OperationReconcileResult{5, "s", "r", "t", "k", Succeeded(scalar)}.Validate(), ErrInvalidJsonEnvelope},
	})
	for _, tt := range []struct {
		err   error
		field string
		value string
	}{
		{inv(5, "s", "R", "T"), FieldRequestID, "R"},
		{inv(5, "s", "r", "T"), FieldTool, "T"},
		{res(5, "s", "R"), FieldRequestID, "R"},
		{can(5, "s", "C", "R", "T"), FieldCancellationID, "C"},
		{can(5, "s", "c", "R", "T"), FieldRequestID, "R"},
		{can(5, "s", "c", "r", "T"), FieldTool, "T"},
		{disp(5, "s", "r", "t", "K", obj), FieldOperationKey, "K"},
		{comp("cmp-", "T", fp64, obj), FieldTenantScope, "T"},
	} {
		if !isTokenError(tt.err, tt.field, tt.value) {
			t.Errorf("got %v, want InvalidToken{%q, %q}", tt.err, tt.field, tt.value)
		}
	}
}

// Spec: MSG-024, MSG-041
func TestStatusValidation(t *testing.T) {
	var pe *Error
	err := Failed(strings.Repeat("x", 4097)).Validate()
	if !isKind(err, ErrOperationFailureTooLarge) || !errors.As(err, &pe) || pe.Actual != 4097 || pe.Maximum != 4096 {
		t.Errorf("4097-byte failure: %v", err)
	}
	checkKinds(t, []kindCase{
		{"4096 bytes", Failed(strings.Repeat("é", 2048)).Validate(), 0},
		{"4097 bytes of UTF-8", Failed(strings.Repeat("é", 2048) + "x").Validate(), ErrOperationFailureTooLarge},
		{"empty", Failed("").Validate(), ErrInvalidOperationFailure},
		{"running", Running().Validate(), 0},
		{"cancelled", Cancelled().Validate(), 0},
		{"succeeded text", Succeeded(TextPayload("")).Validate(), 0},
		{"succeeded array", Succeeded(JSONPayload(canonjson.Array())).Validate(), 0},
		{"succeeded null", Succeeded(JSONPayload(canonjson.Null())).Validate(), ErrInvalidJsonEnvelope},
		{"pending is not a wire status", OperationStatus{State: StatePending}.Validate(), ErrSerialization},
		{"pending is a journal state", OperationStatus{State: StatePending}.ValidateState(), 0},
	})
}

// Spec section 2.7: invoke and result payloads are not checked by message validation; dispatch,
// compensation and status-bearing messages are.
//
// Spec: MSG-031, MSG-032, MSG-011
func TestWhenPayloadsAreChecked(t *testing.T) {
	deep := nestedArrayText(40, false)
	status := func(kind, payload string) string {
		return `{"type":"` + kind + `","result":{"protocol_version":5,"session_id":"s","request_id":"r","tool":"t","operation_key":"k","status":{"state":"succeeded","payload":` + payload + `}}}`
	}
	runAcceptCases(t, []acceptCase{
		{"invoke with a scalar", invokeWithPayload(`{"format":"json","value":7}`), invokeWithPayload(`{"format":"json","value":7}`), ""},
		{"invoke too deep", invokeWithPayload(`{"format":"json","value":` + deep + `}`), invokeWithPayload(`{"format":"json","value":` + deep + `}`), ""},
		{"result with null", `{"type":"result","result":{"protocol_version":5,"session_id":"s","request_id":"r","payload":{"format":"json","value":null}}}`,
			`{"type":"result","result":{"protocol_version":5,"session_id":"s","request_id":"r","payload":{"format":"json","value":null}}}`, ""},
		{"dispatch with a scalar", `{"type":"dispatch_operation","request":{"protocol_version":5,"session_id":"s","request_id":"r","tool":"t","operation_key":"k","payload":{"format":"json","value":"x"}}}`, "!InvalidJsonEnvelope", ""},
		{"dispatch too deep", `{"type":"dispatch_operation","request":{"protocol_version":5,"session_id":"s","request_id":"r","tool":"t","operation_key":"k","payload":{"format":"json","value":` + deep + `}}}`, "!JsonPayloadTooDeep", ""},
		{"compensation with null", `{"type":"compensate_operation","request":{"protocol_version":5,"session_id":"s","request_id":"r","tool":"t","operation_key":"k","compensation_key":"cmp-1","tenant_scope":"ten","grant_fingerprint":"` + fp64 + `","payload":{"format":"json","value":null}}}`, "!InvalidJsonEnvelope", ""},
		{"operation_result succeeded scalar", status("operation_result", `{"format":"json","value":true}`), "!InvalidJsonEnvelope", ""},
		{"reconciled_operation succeeded scalar", status("reconciled_operation", `{"format":"json","value":1}`), "!InvalidJsonEnvelope", ""},
		{"operation_result failed empty", strings.Replace(opResult, `{"state":"running"}`, `{"state":"failed","message":""}`, 1), "!InvalidOperationFailure", ""},
		{"compensation_result succeeded too deep", `{"type":"compensation_result","result":{"protocol_version":5,"session_id":"s","request_id":"r","tool":"t","operation_key":"k","compensation_key":"cmp-1","tenant_scope":"ten","grant_fingerprint":"` + fp64 + `","status":{"state":"succeeded","payload":{"format":"json","value":` + deep + `}}}}`, "!JsonPayloadTooDeep", ""},
		{"cancel with equal ids", `{"type":"cancel","request":{"protocol_version":5,"session_id":"s","cancellation_id":"r","request_id":"r","tool":"t"}}`, "!CancellationIdMatchesRequest", ""},
		{"open_session validates the whole manifest", openWithGrant(strings.Replace(grantText, `"max_output_bytes":3`, `"max_output_bytes":0`, 1)), "!InvalidGrant", ""},
	})
}

// Spec: MSG-028, MSG-029, MSG-030
func TestMessageSessionAndType(t *testing.T) {
	status := Running()
	msgs := []Message{
		OpenSessionMessage{CapabilityManifest{5, "m", nil}},
		InvokeMessage{ToolInvocation{5, "m", "r", "t", TextPayload("")}},
		ResultMessage{ToolResult{5, "m", "r", TextPayload("")}},
		DispatchOperationMessage{OperationDispatchRequest{5, "m", "r", "t", "k", JSONPayload(canonjson.Object())}},
		OperationResultMessage{OperationReconcileResult{5, "m", "r", "t", "k", status}},
		CompensateOperationMessage{OperationCompensationRequest{5, "m", "r", "t", "k", "cmp-1", "x", fp64, JSONPayload(canonjson.Object())}},
		CompensationResultMessage{OperationCompensationResult{5, "m", "r", "t", "k", "cmp-1", "x", fp64, status}},
		ReconcileOperationMessage{OperationReconcileRequest{5, "m", "r", "t", "k"}},
		ReconciledOperationMessage{OperationReconcileResult{5, "m", "r", "t", "k", status}},
		CancelMessage{WorkerCancellationRequest{5, "m", "c", "r", "t"}},
		CancellationResultMessage{WorkerCancellationResult{5, "m", "c", "r", "t", OutcomeAcknowledged}},
		CloseSessionMessage{5, "m"},
	}
	for i, m := range msgs {
		if m.Type() != MessageTypes[i] {
			t.Errorf("message %d: type %q, want %q", i, m.Type(), MessageTypes[i])
		}
		if m.SessionID() != "m" {
			t.Errorf("%s: SessionID %q", m.Type(), m.SessionID())
		}
		enc, err := EncodeMessage(m)
		if err != nil {
			t.Fatalf("%s: %v", m.Type(), err)
		}
		if !strings.HasPrefix(string(enc), `{"type":"`+string(m.Type())+`",`) {
			t.Errorf("%s: tag not first: %s", m.Type(), enc)
		}
		for _, mode := range bothModes {
			back, err := DecodeMessage(enc, mode)
			if err != nil || string(back.AppendJSON(nil)) != string(enc) {
				t.Errorf("%s: round trip %v", m.Type(), err)
			}
		}
	}
	// operation_result and reconciled_operation carry the same body and differ only in the tag.
	a, _ := EncodeMessage(msgs[4])
	b, _ := EncodeMessage(msgs[8])
	if strings.TrimPrefix(string(a), `{"type":"operation_result"`) != strings.TrimPrefix(string(b), `{"type":"reconciled_operation"`) {
		t.Errorf("bodies differ:\n%s\n%s", a, b)
	}
}

// Spec: MSG-034, MSG-041
func TestEncodeMessageValidatesAndBounds(t *testing.T) {
	if _, err := EncodeMessage(CloseSessionMessage{4, "s"}); !isKind(err, ErrUnsupportedVersion) {
		t.Errorf("invalid message: %v", err)
	}
	if _, err := EncodeMessage(nil); !isKind(err, ErrSerialization) {
		t.Errorf("nil message: %v", err)
	}
	// An invoke whose encoding is exactly 1 MiB passes; one byte more fails.
	base := InvokeMessage{ToolInvocation{5, "s", "r", "t", TextPayload("")}}
	overhead := len(base.AppendJSON(nil))
	fits := InvokeMessage{ToolInvocation{5, "s", "r", "t", TextPayload(strings.Repeat("x", MaxWireFrameBytes-overhead))}}
	if enc, err := EncodeMessage(fits); err != nil || len(enc) != MaxWireFrameBytes {
		t.Errorf("1 MiB message: %d bytes, %v", len(enc), err)
	}
	over := InvokeMessage{ToolInvocation{5, "s", "r", "t", TextPayload(strings.Repeat("x", MaxWireFrameBytes-overhead+1))}}
	var pe *Error
	if _, err := EncodeMessage(over); !isKind(err, ErrWireFrameTooLarge) || !errors.As(err, &pe) || pe.Actual != MaxWireFrameBytes+1 {
		t.Errorf("oversized message: %v", err)
	}
}

// Spec: MSG-015, MSG-019, MSG-020
func TestResultMatching(t *testing.T) {
	req := WorkerCancellationRequest{5, "s", "c", "r", "t"}
	res, err := NewWorkerCancellationResult(req, OutcomeTooLate)
	if err != nil || !res.MatchesRequest(req) {
		t.Fatalf("NewWorkerCancellationResult: %+v, %v", res, err)
	}
	for _, change := range []func(*WorkerCancellationResult){
		func(r *WorkerCancellationResult) { r.ProtocolVersion = 4 },
		func(r *WorkerCancellationResult) { r.SessionID = "x" },
		func(r *WorkerCancellationResult) { r.CancellationID = "x" },
		func(r *WorkerCancellationResult) { r.RequestID = "x" },
		func(r *WorkerCancellationResult) { r.Tool = "x" },
	} {
		r := res
		change(&r)
		if r.MatchesRequest(req) {
			t.Errorf("changed result %+v still matches", r)
		}
	}
	if _, err := NewWorkerCancellationResult(WorkerCancellationRequest{5, "s", "r", "r", "t"}, OutcomeTooLate); !isKind(err, ErrCancellationIdMatchesRequest) {
		t.Errorf("invalid request: %v", err)
	}

	binding, err := NewOperationCompensationBinding("t", "op", "cmp-1", "tenant", fp64)
	if err != nil {
		t.Fatal(err)
	}
	creq, err := NewOperationCompensationRequest("s", "r", binding, JSONPayload(canonjson.Object()))
	if err != nil {
		t.Fatal(err)
	}
	cres, err := NewOperationCompensationResult("s", "r", binding, Running())
	if err != nil || !cres.MatchesRequest(creq) {
		t.Fatalf("compensation result does not match: %v", err)
	}
	for _, change := range []func(*OperationCompensationResult){
		func(r *OperationCompensationResult) { r.TenantScope = "other" },
		func(r *OperationCompensationResult) { r.GrantFingerprint = strings.Repeat("0", 64) },
		func(r *OperationCompensationResult) { r.CompensationKey = "cmp-2" },
		func(r *OperationCompensationResult) { r.OperationKey = "op2" },
	} {
		r := cres
		change(&r)
		if r.MatchesRequest(creq) {
			t.Errorf("changed compensation result %+v still matches", r)
		}
	}
	for _, tt := range []struct {
		b    OperationCompensationBinding
		kind ErrorKind
	}{
		{OperationCompensationBinding{"T", "op", "x", "T", ""}, ErrInvalidToken},
		{OperationCompensationBinding{"t", "op", "x", "T", ""}, ErrInvalidCompensationKey},
		{OperationCompensationBinding{"t", "op", "cmp-", "T", ""}, ErrInvalidToken},
		{OperationCompensationBinding{"t", "op", "cmp-", "t", ""}, ErrInvalidCompensationGrantFingerprint},
	} {
		if err := tt.b.Validate(); !isKind(err, tt.kind) {
			t.Errorf("binding %+v: %v, want %v", tt.b, err, tt.kind)
		}
	}

	dreq, err := NewOperationDispatchRequest("s", "r", "t", "k", JSONPayload(canonjson.Array()))
	if err != nil {
		t.Fatal(err)
	}
	rres, err := NewOperationReconcileResult("s", "r", "t", "k", Cancelled())
	if err != nil || !rres.MatchesDispatch(dreq) || !rres.MatchesRequest(OperationReconcileRequest{5, "s", "r", "t", "k"}) {
		t.Fatalf("operation result does not match: %v", err)
	}
	rres.OperationKey = "k2"
	if rres.MatchesDispatch(dreq) {
		t.Error("different operation key still matches")
	}
}
