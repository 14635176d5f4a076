package protocol

import (
	"errors"
	"strings"
	"testing"
)

func u32(v uint32) Opt[uint32] { return Some(v) }

// Spec: MAN-013, MAN-014, MAN-015, MAN-016, MAN-017, MAN-018, MAN-028
func TestGrantAttenuation(t *testing.T) {
	parent := validGrant("tool") // calls 3, input 100, output 200, compensations 2, {file_root:root, secret:key}
	root := ResourceSelector{ResourceFileRoot, "root"}
	other := ResourceSelector{ResourceExecutable, "sh"}
	for _, tt := range []struct {
		name string
		a    GrantAttenuation
		kind ErrorKind
		want CapabilityGrant
	}{
		{"empty attenuation keeps the grant", GrantAttenuation{}, 0, parent},
		{"narrower limits", GrantAttenuation{MaxCalls: u32(1), MaxInputBytes: u32(50), MaxOutputBytes: u32(200), MaxCompensations: u32(0)}, 0,
			CapabilityGrant{"tool", FormatJSON, 1, 50, 200, 0, parent.Resources}},
		{"resource subset", GrantAttenuation{Resources: Some([]ResourceSelector{root, root})}, 0,
			CapabilityGrant{"tool", FormatJSON, 3, 100, 200, 2, []ResourceSelector{root}}},
		{"empty resource set", GrantAttenuation{Resources: Some([]ResourceSelector{})}, 0,
			CapabilityGrant{"tool", FormatJSON, 3, 100, 200, 2, nil}},
		{"zero calls", GrantAttenuation{MaxCalls: u32(0)}, ErrInvalidGrant, CapabilityGrant{}},
		{"zero input", GrantAttenuation{MaxInputBytes: u32(0)}, ErrInvalidGrant, CapabilityGrant{}},
		{"zero output", GrantAttenuation{MaxOutputBytes: u32(0)}, ErrInvalidGrant, CapabilityGrant{}},
		{"zero before widening", GrantAttenuation{MaxCalls: u32(0), MaxInputBytes: u32(1000)}, ErrInvalidGrant, CapabilityGrant{}},
		{"wider calls", GrantAttenuation{MaxCalls: u32(4)}, ErrAttenuationWidensLimits, CapabilityGrant{}},
		{"wider input", GrantAttenuation{MaxInputBytes: u32(101)}, ErrAttenuationWidensLimits, CapabilityGrant{}},
		{"wider output", GrantAttenuation{MaxOutputBytes: u32(201)}, ErrAttenuationWidensLimits, CapabilityGrant{}},
		{"wider compensations", GrantAttenuation{MaxCompensations: u32(3)}, ErrAttenuationWidensLimits, CapabilityGrant{}},
		{"widening before resources", GrantAttenuation{MaxCalls: u32(9), Resources: Some([]ResourceSelector{other})}, ErrAttenuationWidensLimits, CapabilityGrant{}},
		{"new resource", GrantAttenuation{Resources: Some([]ResourceSelector{root, other})}, ErrAttenuationExpandsResources, CapabilityGrant{}},
	} {
		got, err := parent.Attenuate(tt.a)
		if tt.kind != 0 {
			if !isKind(err, tt.kind) {
				t.Errorf("%s: %v, want %v", tt.name, err, tt.kind)
			}
			continue
		}
		if err != nil || !got.Equal(tt.want) {
			t.Errorf("%s: %+v, %v; want %+v", tt.name, got, err, tt.want)
		}
	}
	var pe *Error
	if _, err := parent.Attenuate(GrantAttenuation{MaxCalls: u32(0)}); !errors.As(err, &pe) || pe.Message != "attenuated limits must be greater than zero" {
		t.Errorf("zero-limit message: %v", err)
	}
	// The parent is validated first.
	bad := parent
	bad.Tool = "Bad"
	if _, err := bad.Attenuate(GrantAttenuation{MaxCalls: u32(0)}); !isTokenError(err, FieldTool, "Bad") {
		t.Errorf("invalid parent: %v", err)
	}
	// A compensation budget may be attenuated to zero, and the result is a valid grant.
	g, err := parent.Attenuate(GrantAttenuation{MaxCompensations: u32(0)})
	if err != nil || g.MaxCompensations != 0 || g.Validate() != nil {
		t.Errorf("compensations to zero: %+v, %v", g, err)
	}
}

func manifestOf(t *testing.T, gs ...CapabilityGrant) CapabilityManifest {
	t.Helper()
	m, err := NewCapabilityManifest("session", gs)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func tools(m CapabilityManifest) string {
	var s []string
	for _, g := range m.Grants {
		s = append(s, g.Tool)
	}
	return strings.Join(s, ",")
}

// Spec: MAN-009, MAN-019, MAN-020, MAN-021, MAN-022, MAN-023, MAN-024, MAN-025
func TestManifestAttenuation(t *testing.T) {
	m := manifestOf(t, validGrant("c"), validGrant("a"), validGrant("b"))
	for _, tt := range []struct {
		name  string
		a     ManifestAttenuation
		kind  ErrorKind
		tools string
	}{
		{"empty attenuation keeps everything in order", ManifestAttenuation{}, 0, "c,a,b"},
		{"allowed tools keep the original order", ManifestAttenuation{AllowedTools: Some([]string{"b", "c"})}, 0, "c,b"},
		{"an empty allowed set gives no grants", ManifestAttenuation{AllowedTools: Some([]string{})}, 0, ""},
		{"restriction of an unknown tool", ManifestAttenuation{Grants: map[string]GrantAttenuation{"zz": {}}}, ErrUnknownTool, ""},
		{"allowed tool that is not a token", ManifestAttenuation{AllowedTools: Some([]string{"A"})}, ErrInvalidToken, ""},
		{"allowed tool that is unknown", ManifestAttenuation{AllowedTools: Some([]string{"d"})}, ErrUnknownTool, ""},
		{"restriction keys are checked before allowed tools", ManifestAttenuation{
			AllowedTools: Some([]string{"A"}), Grants: map[string]GrantAttenuation{"zz": {}}}, ErrUnknownTool, ""},
		{"restriction keys need not be tokens to be unknown", ManifestAttenuation{Grants: map[string]GrantAttenuation{"Not A Token": {}}}, ErrUnknownTool, ""},
		{"a widening restriction of a kept tool", ManifestAttenuation{Grants: map[string]GrantAttenuation{"a": {MaxCalls: u32(9)}}}, ErrAttenuationWidensLimits, ""},
		{"a widening restriction of a dropped tool is ignored", ManifestAttenuation{
			AllowedTools: Some([]string{"b"}), Grants: map[string]GrantAttenuation{"a": {MaxCalls: u32(9)}}}, 0, "b"},
		{"the first error in grant order wins", ManifestAttenuation{Grants: map[string]GrantAttenuation{
			"a": {MaxCalls: u32(0)}, "c": {MaxCalls: u32(9)}}}, ErrAttenuationWidensLimits, ""},
	} {
		got, err := m.Attenuate(tt.a)
		if tt.kind != 0 {
			if !isKind(err, tt.kind) {
				t.Errorf("%s: %v, want %v", tt.name, err, tt.kind)
			}
			continue
		}
		if err != nil || tools(got) != tt.tools || got.SessionID != "session" || got.ProtocolVersion != ProtocolVersion {
			t.Errorf("%s: %q %+v, %v; want tools %q", tt.name, tools(got), got, err, tt.tools)
		}
	}
	var pe *Error
	if _, err := m.Attenuate(ManifestAttenuation{Grants: map[string]GrantAttenuation{"y": {}, "x": {}}}); !errors.As(err, &pe) || pe.Value != "x" {
		t.Errorf("unknown restriction keys are checked in ascending order: %v", err)
	}
	if _, err := m.Attenuate(ManifestAttenuation{AllowedTools: Some([]string{"z", "B", "A"})}); !isTokenError(err, FieldTool, "A") {
		t.Errorf("allowed tools are checked in ascending order: %v", err)
	}
	got, err := m.Attenuate(ManifestAttenuation{Grants: map[string]GrantAttenuation{"a": {MaxCalls: u32(1)}}})
	if err != nil || got.Grants[1].MaxCalls != 1 || got.Grants[0].MaxCalls != 3 {
		t.Errorf("restriction applied to the wrong grant: %+v, %v", got, err)
	}
	// An invalid parent fails first.
	bad := m
	bad.ProtocolVersion = 4
	if _, err := bad.Attenuate(ManifestAttenuation{Grants: map[string]GrantAttenuation{"zz": {}}}); !isKind(err, ErrUnsupportedVersion) {
		t.Errorf("invalid parent: %v", err)
	}
}

// Spec: MAN-010, MAN-011
func TestAttenuationJSON(t *testing.T) {
	if got := string(GrantAttenuation{}.AppendJSON(nil)); got != `{}` {
		t.Errorf("empty grant attenuation %s", got)
	}
	if got := string(ManifestAttenuation{}.AppendJSON(nil)); got != `{"grants":{}}` {
		t.Errorf("empty manifest attenuation %s", got)
	}
	a := GrantAttenuation{MaxCalls: u32(1), MaxCompensations: u32(0), Resources: Some([]ResourceSelector{})}
	if got := string(a.AppendJSON(nil)); got != `{"max_calls":1,"max_compensations":0,"resources":[]}` {
		t.Errorf("grant attenuation %s", got)
	}
	ma := ManifestAttenuation{AllowedTools: Some([]string{"b", "a", "b"}), Grants: map[string]GrantAttenuation{"b": {}, "a": {MaxInputBytes: u32(5)}}}
	want := `{"allowed_tools":["a","b"],"grants":{"a":{"max_input_bytes":5},"b":{}}}`
	if got := string(ma.AppendJSON(nil)); got != want {
		t.Errorf("manifest attenuation %s", got)
	}
	back, err := DecodeManifestAttenuation([]byte(want))
	if err != nil || string(back.AppendJSON(nil)) != want {
		t.Errorf("round trip %s, %v", back.AppendJSON(nil), err)
	}
	// Optional fields: null means absent; a repeated map key keeps the last value.
	d, err := DecodeManifestAttenuation([]byte(`{"allowed_tools":null,"grants":{"a":{"max_calls":null},"a":{"max_calls":2}}}`))
	if err != nil || string(d.AppendJSON(nil)) != `{"grants":{"a":{"max_calls":2}}}` {
		t.Errorf("nulls and repeated keys: %s, %v", d.AppendJSON(nil), err)
	}
	if _, err := DecodeGrantAttenuation([]byte(`{"max_calls":-1}`)); !isKind(err, ErrSerialization) {
		t.Errorf("negative limit: %v", err)
	}
	if g, err := DecodeGrantAttenuation([]byte(`[1]`)); err != nil || !g.MaxCalls.Set || g.MaxCalls.V != 1 {
		t.Errorf("positional attenuation: %+v, %v", g, err)
	}
}
