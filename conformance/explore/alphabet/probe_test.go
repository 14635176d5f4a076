package alphabet_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/splashv5/conform/conformance/explore/alphabet"
	"github.com/splashv5/conform/impl/bootstrap"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/spec"
)

var probeNeeds = []alphabet.Need{alphabet.NeedDurable, alphabet.NeedCancel, alphabet.NeedCompensation, alphabet.NeedStoreFault,
	alphabet.NeedTypedJSON, alphabet.NeedSecret, alphabet.NeedEffectFence}

// open concretizes n and opens every frame line it writes with the worker's authenticator.
func open(t *testing.T, s *alphabet.Session, w *protocol.Authenticator, n alphabet.Name) []protocol.Message {
	t.Helper()
	a, err := s.Concretize(n)
	if err != nil {
		t.Fatalf("%s: %v", n, err)
	}
	var out []protocol.Message
	for _, line := range bytes.Split(a.Line, []byte{'\n'}) {
		f, err := w.Open(line)
		if err != nil {
			t.Fatalf("%s: the worker refuses %s: %v", n, line, err)
		}
		out = append(out, f.Message)
	}
	return out
}

func TestProbesCiteExistingRequirementsAndAreNoSymbols(t *testing.T) {
	for _, p := range alphabet.Probes {
		if len(p.Spec) == 0 {
			t.Errorf("probe %s cites no requirement", p.Name)
		}
		for _, id := range p.Spec {
			if _, ok := spec.Find(id); !ok {
				t.Errorf("probe %s cites %s, which is not a requirement", p.Name, id)
			}
		}
		if _, ok := alphabet.Lookup(p.Name); ok {
			t.Errorf("probe %s is a symbol of the learned alphabet", p.Name)
		}
	}
	if got := alphabet.ProbesFor(false, probeNeeds...); len(got) != len(alphabet.Probes)-3 {
		t.Errorf("the lossy number model leaves out %d probes, want the 3 number probes", len(alphabet.Probes)-len(got))
	}
	for _, p := range alphabet.ProbesFor(true) {
		if len(p.Needs) > 0 {
			t.Errorf("probe %s needs %v, admitted for a worker with no needs", p.Name, p.Needs)
		}
	}
}

// Spec: EXP-019 — the probe opening grants every other tool of the profile, with the JSON
// echo's output limit under its input limit and the typed tool's call budget at 2; the limit
// probe sends exactly max_input_bytes; the JSON probes send a scalar and 33 levels.
func TestProbeOpeningAndInvocations(t *testing.T) {
	k := key(t)
	defer k.Close()
	s, w := newSession(t, k, probeNeeds...), worker(t, k)
	m := open(t, s, w, alphabet.OpenProbe)[0].(protocol.OpenSessionMessage)
	grants := map[string]protocol.CapabilityGrant{}
	for _, g := range m.Manifest.Grants {
		grants[g.Tool] = g
	}
	for _, tool := range []string{"conf.text.echo", "conf.durable.record", "conf.json.echo", "conf.text.undeclared", "conf.json.typed", "conf.secret.sign"} {
		if _, ok := grants[tool]; !ok {
			t.Errorf("open_probe does not grant %s", tool)
		}
	}
	if g := grants["conf.json.echo"]; g.MaxOutputBytes >= g.MaxInputBytes {
		t.Errorf("the JSON echo's output limit %d is not under its input limit %d", g.MaxOutputBytes, g.MaxInputBytes)
	}
	if g := grants["conf.json.typed"]; g.MaxCalls != 2 {
		t.Errorf("conf.json.typed max_calls %d, want 2", g.MaxCalls)
	}
	if rs := grants["conf.secret.sign"].Resources; len(rs) != 2 || rs[1] != (protocol.ResourceSelector{Kind: protocol.ResourceSecret, ID: alphabet.SecretID}) {
		t.Errorf("conf.secret.sign resources %v, want the stub secret's selector", rs)
	}
	inv := open(t, s, w, alphabet.InvokeAtLimit)[0].(protocol.InvokeMessage).Invocation
	if len(inv.Payload.Text) != int(grants["conf.text.echo"].MaxInputBytes) {
		t.Errorf("invoke_at_limit sends %d bytes, want exactly the limit %d", len(inv.Payload.Text), grants["conf.text.echo"].MaxInputBytes)
	}
	inv = open(t, s, w, alphabet.InvokeJSONScalar)[0].(protocol.InvokeMessage).Invocation
	if k := inv.Payload.JSON.Kind(); k == canonjson.KindObject || k == canonjson.KindArray {
		t.Errorf("invoke_json_scalar sends a container")
	}
	inv = open(t, s, w, alphabet.InvokeJSONDeep)[0].(protocol.InvokeMessage).Invocation
	if inv.Payload.JSON.WithinDepth(32) || !inv.Payload.JSON.WithinDepth(33) {
		t.Errorf("invoke_json_deep is not 33 levels deep")
	}
	if ms := open(t, s, w, alphabet.InvokeTypedBurst); len(ms) != 3 {
		t.Errorf("invoke_typed_burst sends %d invokes, want one over the budget of 2", len(ms))
	}
	inv = open(t, s, w, alphabet.InvokeNumbers)[0].(protocol.InvokeMessage).Invocation
	if _, _, portable := canonjson.AppendJSONPortability(nil, inv.Payload.JSON); portable {
		t.Errorf("invoke_numbers sends only portable numbers")
	}
	a, err := s.Concretize(alphabet.LineOverCap)
	if err != nil || !a.NoNewline || len(a.Line) != protocol.MaxWireFrameBytes+1 {
		t.Errorf("line_over_cap: %d bytes, no line feed %v (%v), want the frame limit plus one without a line feed", len(a.Line), a.NoNewline, err)
	}
}

// Spec: EXP-019 — a reflected frame carries a tag computed for the worker as sender, which the
// host's own opener accepts and the worker's refuses; a version-4 invoke is tagged over its
// changed text.
func TestProbeReflectedAndVersion4(t *testing.T) {
	k := key(t)
	defer k.Close()
	s, w := newSession(t, k, probeNeeds...), worker(t, k)
	open(t, s, w, alphabet.OpenProbe)
	a, err := s.Concretize(alphabet.InvokeReflected)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Open(a.Line); err == nil {
		t.Error("the worker opens a frame tagged with its own role")
	}
	host, err := protocol.NewAuthenticator(sessionID, k, protocol.RoleHost, canonjson.Preserve, protocol.WithSequences(1, 2))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := host.Open(a.Line); err != nil {
		t.Errorf("the frame is not tagged for the worker role: %v", err)
	}
	s2, w2 := newSession(t, k, probeNeeds...), worker(t, k)
	open(t, s2, w2, alphabet.OpenProbe)
	a, err = s2.Concretize(alphabet.InvokeVersion4)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(a.Line, []byte(`"protocol_version":4`)) {
		t.Errorf("invoke_version_4 sends %s", a.Line)
	}
	if _, err := w2.Open(a.Line); err == nil || strings.Contains(err.Error(), "tag") {
		t.Errorf("the worker's refusal of a version-4 invoke is %v, want one of the version, not the tag", err)
	}
}

// Spec: EXP-019 — the durable probes: an exact duplicate dispatch and compensation repeat the
// operation key, input (and compensation key) under a fresh request id; a compensation names
// the worker's scope and the live grant's fingerprint, the bad-fingerprint probe another one;
// the reconciliation burst is one over the per-tool budget.
func TestProbeDurable(t *testing.T) {
	k := key(t)
	defer k.Close()
	s, w := newSession(t, k, probeNeeds...), worker(t, k)
	s.SetScope("tenant-a")
	m := open(t, s, w, alphabet.OpenProbe)[0].(protocol.OpenSessionMessage)
	var durable protocol.CapabilityGrant
	for _, g := range m.Manifest.Grants {
		if g.Tool == "conf.durable.record" {
			durable = g
		}
	}
	d1 := open(t, s, w, alphabet.Dispatch)[0].(protocol.DispatchOperationMessage).Request
	d2 := open(t, s, w, alphabet.DispatchAgain)[0].(protocol.DispatchOperationMessage).Request
	if d1.OperationKey != d2.OperationKey || !d1.Payload.Equal(d2.Payload) || d1.RequestID == d2.RequestID {
		t.Errorf("dispatch_again: %+v after %+v, want the same key and input under a fresh request id", d2, d1)
	}
	c1 := open(t, s, w, alphabet.Compensate)[0].(protocol.CompensateOperationMessage).Request
	fp, _ := durable.CompensationFingerprint()
	if c1.TenantScope != "tenant-a" || c1.GrantFingerprint != fp || c1.OperationKey != d1.OperationKey {
		t.Errorf("compensate: %+v, want scope tenant-a, the live grant's fingerprint and key %s", c1, d1.OperationKey)
	}
	c2 := open(t, s, w, alphabet.CompensateAgain)[0].(protocol.CompensateOperationMessage).Request
	if c2.CompensationKey != c1.CompensationKey || c2.RequestID == c1.RequestID {
		t.Errorf("compensate_again: %+v after %+v", c2, c1)
	}
	c3 := open(t, s, w, alphabet.CompensateBadFP)[0].(protocol.CompensateOperationMessage).Request
	if c3.GrantFingerprint == fp {
		t.Error("compensate_bad_fingerprint names the live grant's fingerprint")
	}
	if ms := open(t, s, w, alphabet.ReconcileBurst); len(ms) != 17 {
		t.Errorf("reconcile_burst sends %d reconciliations, want 17", len(ms))
	}
}

// Spec: EXP-019 — restart probes: the same session id and key again, a bootstrap whose version
// byte is wrong, and its header alone.
func TestProbeBootstraps(t *testing.T) {
	k, k2 := key(t), key(t)
	defer k.Close()
	defer k2.Close()
	s := newSession(t, k, probeNeeds...)
	var good bytes.Buffer
	if err := s.WriteBootstrap(&good); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Concretize(alphabet.RestartSameSession); err != nil {
		t.Fatal(err)
	}
	if err := s.Restart("explore-other", k2, canonjson.Preserve); err != nil {
		t.Fatal(err)
	}
	var again bytes.Buffer
	if err := s.WriteBootstrap(&again); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(good.Bytes(), again.Bytes()) {
		t.Error("restart_same_session does not give the fresh process the same session id and key")
	}
	for _, c := range []struct {
		probe alphabet.Name
		size  int
	}{{alphabet.RestartBadVersion, bootstrap.Size(len("explore-other"))}, {alphabet.RestartBadHeader, len(bootstrap.Magic) + 2}} {
		if _, err := s.Concretize(c.probe); err != nil {
			t.Fatal(err)
		}
		if err := s.Restart("explore-other", k2, canonjson.Preserve); err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := s.WriteBootstrap(&b); err != nil {
			t.Fatal(err)
		}
		if b.Len() != c.size || b.Bytes()[len(bootstrap.Magic)] == bootstrap.Version {
			t.Errorf("%s: %d bytes, version byte %d; want %d bytes and a version other than %d", c.probe, b.Len(), b.Bytes()[len(bootstrap.Magic)], c.size, bootstrap.Version)
		}
		if _, err := bootstrap.Read(bytes.NewReader(b.Bytes())); err == nil {
			t.Errorf("%s: the bootstrap reads", c.probe)
		}
	}
}
