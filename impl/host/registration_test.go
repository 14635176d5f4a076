package host

import (
	"strings"
	"testing"
	"time"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/schema"
)

func jv(t testing.TB, s string) canonjson.Value {
	t.Helper()
	v, err := canonjson.ParseValue([]byte(s), canonjson.Preserve)
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return v
}

func jvp(t testing.TB, s string) *canonjson.Value {
	v := jv(t, s)
	return &v
}

// Spec: RUN-010
func TestDefaults(t *testing.T) {
	p := NewPolicy("t")
	want := Policy{Name: "t", Format: FormatText, MaxCalls: 1, MaxAttempts: 1, MaxInputBytes: 16384, MaxOutputBytes: 65536}
	if p.Name != want.Name || p.Format != want.Format || p.MaxCalls != 1 || p.MaxAttempts != 1 ||
		p.MaxInputBytes != 16384 || p.MaxOutputBytes != 65536 || p.HasDeadline || p.Stream != nil {
		t.Fatalf("default policy = %+v", p)
	}
	if JSONPolicy("t").Format != FormatJSON {
		t.Fatal("JSONPolicy is not JSON")
	}
	if s := DefaultStreamPolicy(); s != (StreamPolicy{64, 8192, 65536, 65536}) {
		t.Fatalf("default stream = %+v", s)
	}
	r, err := New(Config{Entropy: failingReader{}})
	wantNoError(t, err)
	if r.maxPending != 64 || r.maxTools != 128 || r.maxCatalog != 524288 || r.MaxAuditEvents() != 1024 {
		t.Fatalf("runtime defaults = %d %d %d %d", r.maxPending, r.maxTools, r.maxCatalog, r.MaxAuditEvents())
	}
	for _, cfg := range []Config{{MaxPendingTools: -1}, {MaxTools: -1}, {MaxCatalogBytes: -1}} {
		if _, err := New(cfg); err == nil {
			t.Fatalf("%+v accepted", cfg)
		} else {
			wantKind(t, err, ErrInvalidLimits)
		}
	}
}

// Spec: RUN-011
func TestRegistrationCheckOrder(t *testing.T) {
	streamed := NewPolicy("Bad Name").WithStream(StreamPolicy{})
	badMeta := Metadata{Description: strings.Repeat("d", 4097)}

	r, _ := newTestRuntime(t, Config{MaxTools: 1})
	mustRegister(t, r.RegisterTool(NewPolicy("existing"), Metadata{}, echo))
	lease, err := r.IssueLease(nil, nil)
	wantNoError(t, err)
	wantNoError(t, r.ActivateLease(lease))
	// (1) the lease wins over everything else.
	wantKind(t, r.RegisterTool(streamed, badMeta, echo), ErrActiveCapabilityLease)
	r.DeactivateLease()
	// (2) stream on a host-pump tool wins over the name.
	err = r.RegisterTool(streamed, badMeta, echo)
	wantKind(t, err, ErrInvalidPolicy)
	if err.Error() != "stream policy requires an external tool" {
		t.Fatalf("message = %q", err)
	}
	// (3) the policy (name first) wins over the metadata.
	wantKind(t, r.RegisterExternalTool(NewPolicy("Bad Name"), badMeta), ErrInvalidName)
	// (4) the metadata wins over the nonce.
	noNonce, _ := newTestRuntime(t, Config{Entropy: failingReader{}})
	wantKind(t, noNonce.RegisterExternalTool(NewPolicy("x"), badMeta), ErrInvalidMetadata)
	// (5) the nonce wins over the duplicate.
	mustRegister(t, noNonce.RegisterTool(NewPolicy("x"), Metadata{}, echo))
	wantKind(t, noNonce.RegisterExternalTool(NewPolicy("x"), Metadata{}), ErrNonceUnavailable)
	// (6) the duplicate wins over the catalog limit.
	wantKind(t, r.RegisterTool(NewPolicy("existing"), Metadata{}, echo), ErrDuplicateTool)
	// (7) the catalog limit.
	err = r.RegisterTool(NewPolicy("other"), Metadata{}, echo)
	wantKind(t, err, ErrCatalogToolLimitExceeded)
	if err.Error() != "tool catalog exceeds its maximum of 1 tools" {
		t.Fatalf("message = %q", err)
	}
}

// Spec: RUN-012
func TestPolicyValidation(t *testing.T) {
	r, _ := newTestRuntime(t, Config{})
	mod := func(f func(*Policy)) Policy {
		p := NewPolicy("t")
		f(&p)
		return p
	}
	cases := []struct {
		p    Policy
		kind error
		msg  string
	}{
		{mod(func(p *Policy) { p.Name = "" }), ErrInvalidName, ""},
		{mod(func(p *Policy) { p.Name = "Upper" }), ErrInvalidName, ""},
		{mod(func(p *Policy) { p.Name = strings.Repeat("a", 129) }), ErrInvalidName, ""},
		{mod(func(p *Policy) { p.Name = "a b"; p.MaxCalls = 0 }), ErrInvalidName, ""},
		{mod(func(p *Policy) { p.MaxCalls = 0; p.MaxAttempts = 0 }), ErrInvalidPolicy, "max_calls must be greater than zero"},
		{mod(func(p *Policy) { p.MaxAttempts = 0; p.MaxInputBytes = 0 }), ErrInvalidPolicy, "max_attempts must be greater than zero"},
		{mod(func(p *Policy) { p.MaxInputBytes = 0 }), ErrInvalidPolicy, "tool byte limits must be greater than zero"},
		{mod(func(p *Policy) { p.MaxOutputBytes = 0 }), ErrInvalidPolicy, "tool byte limits must be greater than zero"},
		{NewPolicy("t").WithStream(StreamPolicy{0, 1, 1, 1}), ErrInvalidPolicy, "stream limits must be greater than zero"},
		{NewPolicy("t").WithStream(StreamPolicy{1, 1, 1, 0}), ErrInvalidPolicy, "stream limits must be greater than zero"},
		{NewPolicy("t").WithStream(StreamPolicy{1, 2, 1, 1}), ErrInvalidPolicy, "max stream chunk bytes cannot exceed the total stream byte limit"},
	}
	for i, c := range cases {
		err := r.RegisterExternalTool(c.p, Metadata{})
		wantKind(t, err, c.kind)
		if c.msg != "" && err.Error() != c.msg {
			t.Fatalf("case %d: message = %q, want %q", i, err, c.msg)
		}
	}
	mustRegister(t, r.RegisterExternalTool(NewPolicy("t").WithStream(StreamPolicy{1, 1, 1, 1}), Metadata{}))
	mustRegister(t, r.RegisterExternalTool(NewPolicy(strings.Repeat("a", 128)), Metadata{}))
}

// Spec: RUN-013
func TestMetadataValidation(t *testing.T) {
	r, _ := newTestRuntime(t, Config{})
	big := `{"description":"` + strings.Repeat("x", 32*1024-17) + `"}` // 32,769 bytes
	if n := len(jv(t, big).JSON()); n != 32769 {
		t.Fatalf("fixture is %d bytes", n)
	}
	exact := `{"description":"` + strings.Repeat("x", 32*1024-18) + `"}` // 32,768 bytes
	cases := []struct {
		format DataFormat
		meta   Metadata
		msg    string
	}{
		{FormatJSON, Metadata{Description: strings.Repeat("d", 4097), InputSchema: jvp(t, "5")}, "tool description exceeds the byte limit"},
		{FormatText, Metadata{InputSchema: jvp(t, "5")}, "schemas require a JSON tool policy"},
		{FormatText, Metadata{OutputSchema: jvp(t, "{}")}, "schemas require a JSON tool policy"},
		{FormatJSON, Metadata{InputSchema: jvp(t, "[]")}, "tool schemas must be JSON objects"},
		{FormatJSON, Metadata{OutputSchema: jvp(t, big)}, "tool schema exceeds the byte limit"},
	}
	for i, c := range cases {
		p := NewPolicy("t")
		p.Format = c.format
		err := r.RegisterExternalTool(p, c.meta)
		wantKind(t, err, ErrInvalidMetadata)
		if err.Error() != c.msg {
			t.Fatalf("case %d: message = %q", i, err)
		}
	}
	mustRegister(t, r.RegisterExternalTool(JSONPolicy("ok"), Metadata{Description: strings.Repeat("d", 4096), InputSchema: jvp(t, exact)}))
}

// descA is the catalog descriptor of NewPolicy("a") on a host-pump tool, written by hand.
const descA = `{"name":"a","format":"text","dispatch":"host_pump","contract_enforced":false,"max_calls":1,"max_attempts":1,"max_input_bytes":16384,"max_output_bytes":65536,"description":""}`

// Spec: RUN-014
func TestCatalogByteLimit(t *testing.T) {
	max := len(descA) + 2
	r, _ := newTestRuntime(t, Config{MaxCatalogBytes: max})
	mustRegister(t, r.RegisterTool(NewPolicy("a"), Metadata{}, echo))
	if got := string(r.CatalogJSON()); got != "["+descA+"]" {
		t.Fatalf("catalog = %s", got)
	}
	err := r.RegisterTool(NewPolicy("b"), Metadata{}, echo)
	wantKind(t, err, ErrCatalogByteLimitExceeded)
	re := err.(*RegistrationError)
	if re.Actual != 2*len(descA)+3 || re.Maximum != max {
		t.Fatalf("actual %d maximum %d, want %d %d", re.Actual, re.Maximum, 2*len(descA)+3, max)
	}
	r2, _ := newTestRuntime(t, Config{MaxCatalogBytes: 2*len(descA) + 3})
	mustRegister(t, r2.RegisterTool(NewPolicy("a"), Metadata{}, echo))
	mustRegister(t, r2.RegisterTool(NewPolicy("b"), Metadata{}, echo))
	if n := len(r2.CatalogJSON()); n != 2*len(descA)+3 {
		t.Fatalf("catalog is %d bytes", n)
	}
}

// Spec: RUN-015
func TestJSONEntryPointsRequireJSONPolicyFirst(t *testing.T) {
	r, _ := newTestRuntime(t, Config{})
	contract, err := schema.NewContract(jv(t, `{"type":"object"}`), jv(t, `{"type":"object"}`))
	wantNoError(t, err)
	lease, _ := r.IssueLease(nil, nil)
	wantNoError(t, r.ActivateLease(lease))
	text := NewPolicy("t")
	handler := func(JSONToolRequest) (canonjson.Value, error) { return canonjson.Object(), nil }
	for _, err := range []error{
		r.RegisterJSONTool(text, Metadata{}, handler),
		r.RegisterValidatedJSONTool(text, Metadata{}, contract, handler),
		r.RegisterExternalJSONTool(text, Metadata{}),
		r.RegisterValidatedExternalJSONTool(text, Metadata{}, contract),
	} {
		wantKind(t, err, ErrInvalidPolicy)
	}
	wantKind(t, r.RegisterExternalTool(text, Metadata{}), ErrActiveCapabilityLease)
	r.DeactivateLease()
	mustRegister(t, r.RegisterExternalTool(JSONPolicy("json.by.plain"), Metadata{}))
	mustRegister(t, r.RegisterExternalTool(NewPolicy("text.by.plain"), Metadata{}))
	d, _ := r.Descriptor("json.by.plain")
	if d.Format != FormatJSON || d.Dispatch != DispatchExternal {
		t.Fatalf("descriptor = %+v", d)
	}
}

// Spec: RUN-016, RUN-017
func TestCatalogDescriptorsAndContracts(t *testing.T) {
	r, _ := newTestRuntime(t, Config{})
	contract, err := schema.NewContract(jv(t, `{"type":"object","required":["x"]}`), jv(t, `{"type":"array"}`))
	wantNoError(t, err)
	p := JSONPolicy("b.validated").WithDeadline(1500*time.Millisecond + 999*time.Microsecond).
		WithStream(StreamPolicy{2, 3, 4, 5})
	p.MaxAttempts = 3
	meta := Metadata{Description: "Ünïcode \"q\"", InputSchema: jvp(t, `{"ignored":true}`)}
	mustRegister(t, r.RegisterValidatedExternalJSONTool(p, meta, contract))
	mustRegister(t, r.RegisterExternalJSONTool(JSONPolicy("a.plain"), Metadata{InputSchema: jvp(t, `{"z":1,"a":2}`)}))
	want := `[` +
		`{"name":"a.plain","format":"json","dispatch":"external","contract_enforced":false,"max_calls":1,"max_attempts":1,"max_input_bytes":16384,"max_output_bytes":65536,"description":"","input_schema":{"a":2,"z":1}},` +
		`{"name":"b.validated","format":"json","dispatch":"external","contract_enforced":true,"max_calls":1,"max_attempts":3,"max_input_bytes":16384,"max_output_bytes":65536,"max_deferred_millis":1500,"stream":{"max_chunks":2,"max_chunk_bytes":3,"max_total_bytes":4,"max_emitted_bytes":5},"description":"Ünïcode \"q\"","input_schema":{"required":["x"],"type":"object"},"output_schema":{"type":"array"}}` +
		`]`
	if got := string(r.CatalogJSON()); got != want {
		t.Fatalf("catalog:\n got %s\nwant %s", got, want)
	}
	if fp := r.CatalogFingerprint(); fp != hashParts([]byte("splash-capability-catalog-v1"), lp([]byte(want))) {
		t.Fatalf("fingerprint = %s", fp)
	}
	cat := r.Catalog()
	if len(cat) != 2 || cat[0].Name != "a.plain" || !cat[1].ContractEnforced {
		t.Fatalf("catalog = %+v", cat)
	}
}

// Spec: RUN-018
func TestFailedRegistrationRetainsNothing(t *testing.T) {
	r, _ := newTestRuntime(t, Config{})
	wantKind(t, r.RegisterExternalTool(NewPolicy("t"), Metadata{Description: strings.Repeat("d", 5000)}), ErrInvalidMetadata)
	if _, ok := r.Descriptor("t"); ok {
		t.Fatal("a refused tool is registered")
	}
	if string(r.CatalogJSON()) != "[]" {
		t.Fatalf("catalog = %s", r.CatalogJSON())
	}
	mustRegister(t, r.RegisterExternalTool(NewPolicy("t"), Metadata{}))
}

// Spec: RUN-019, RUN-120
func TestStreamRedactorConfiguration(t *testing.T) {
	r, _ := newTestRuntime(t, Config{})
	mustRegister(t, r.RegisterTool(NewPolicy("local"), Metadata{}, echo))
	mustRegister(t, r.RegisterExternalTool(NewPolicy("plain"), Metadata{}))
	streamed := NewPolicy("streamed").WithStream(DefaultStreamPolicy())
	streamed.MaxCalls = 2
	mustRegister(t, r.RegisterExternalTool(streamed, Metadata{}))
	upper := func(s string) string { return strings.ToUpper(s) }
	wantKind(t, r.SetExternalStreamRedactor("missing", upper), ErrStreamUnknownTool)
	wantKind(t, r.SetExternalStreamRedactor("local", upper), ErrStreamNotExternal)
	wantKind(t, r.SetExternalStreamRedactor("plain", upper), ErrStreamDisabled)
	wantNoError(t, r.SetExternalStreamRedactor("streamed", func(s string) string { return "first" }))
	wantNoError(t, r.SetExternalStreamRedactor("streamed", upper)) // replaceable before the first start
	id, err := r.Start("streamed", "in")
	wantNoError(t, err)
	err = r.SetExternalStreamRedactor("streamed", func(string) string { return "late" })
	wantKind(t, err, ErrStreamAlreadyReserved)
	if _, err := r.ClaimExternal(id); err != nil {
		t.Fatal(err)
	}
	ch, err := r.PushExternalChunk(id, "abc")
	wantNoError(t, err)
	if ch.Text != "ABC" {
		t.Fatalf("released text = %q: the redactor changed after the first reservation", ch.Text)
	}
}
