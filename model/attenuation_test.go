package model_test

import (
	"errors"
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/model"
)

var (
	attIDs   = []string{"a", "b", "c"}
	attTools = []string{"t0", "t1", "t2", "t3", "t4"}
)

func attSelectors(t *rapid.T, label string) model.SelectorSet {
	n := rapid.IntRange(0, 4).Draw(t, label+" count")
	out := model.SelectorSet{}
	for i := 0; i < n; i++ {
		out[model.Selector{
			Kind: rapid.IntRange(0, 3).Draw(t, label+" kind"),
			ID:   rapid.SampledFrom(attIDs).Draw(t, label+" id"),
		}] = true
	}
	return out
}

func attLimit(t *rapid.T, label string, lo uint64) uint64 {
	if rapid.IntRange(0, 9).Draw(t, label+" huge") == 0 {
		return 4294967295
	}
	return rapid.Uint64Range(lo, 5).Draw(t, label)
}

// attAuthority draws a valid grant authority.
func attAuthority(t *rapid.T, tool string) model.Authority {
	a := model.Authority{Tool: tool, Format: rapid.SampledFrom([]string{"text", "json"}).Draw(t, "format")}
	for i := range a.Limits {
		lo := uint64(1)
		if model.Limit(i) == model.LimitCompensations {
			lo = 0
		}
		a.Limits[i] = attLimit(t, fmt.Sprintf("limit %d", i), lo)
	}
	a.Resources = attSelectors(t, "resources")
	return a
}

// attRestriction draws any restriction, including zero, widening and expanding ones.
func attRestriction(t *rapid.T, label string) model.Restriction {
	var r model.Restriction
	for i := range r.Limits {
		if rapid.Bool().Draw(t, fmt.Sprintf("%s set %d", label, i)) {
			r.Limits[i] = model.OptLimit{V: attLimit(t, fmt.Sprintf("%s limit %d", label, i), 0), Set: true}
		}
	}
	if rapid.Bool().Draw(t, label+" set resources") {
		r.Resources, r.SetResources = attSelectors(t, label+" resources"), true
	}
	return r
}

func attToGrant(a model.Authority) protocol.CapabilityGrant {
	g := protocol.CapabilityGrant{
		Tool:             a.Tool,
		MaxCalls:         uint32(a.Limits[model.LimitCalls]),
		MaxInputBytes:    uint32(a.Limits[model.LimitInputBytes]),
		MaxOutputBytes:   uint32(a.Limits[model.LimitOutputBytes]),
		MaxCompensations: uint32(a.Limits[model.LimitCompensations]),
	}
	if a.Format == "json" {
		g.Format = protocol.FormatJSON
	}
	for _, s := range a.Resources.Sorted() {
		g.Resources = append(g.Resources, protocol.ResourceSelector{Kind: protocol.ResourceKind(s.Kind), ID: s.ID})
	}
	return g
}

func attFromGrant(g protocol.CapabilityGrant) model.Authority {
	a := model.Authority{Tool: g.Tool, Format: g.Format.String(), Resources: model.SelectorSet{}}
	a.Limits = [model.NumLimits]uint64{uint64(g.MaxCalls), uint64(g.MaxInputBytes), uint64(g.MaxOutputBytes), uint64(g.MaxCompensations)}
	for _, r := range g.Resources {
		a.Resources[model.Selector{Kind: int(r.Kind), ID: r.ID}] = true
	}
	return a
}

func attToAttenuation(r model.Restriction) protocol.GrantAttenuation {
	opt := func(l model.OptLimit) protocol.Opt[uint32] {
		return protocol.Opt[uint32]{V: uint32(l.V), Set: l.Set}
	}
	a := protocol.GrantAttenuation{
		MaxCalls:         opt(r.Limits[model.LimitCalls]),
		MaxInputBytes:    opt(r.Limits[model.LimitInputBytes]),
		MaxOutputBytes:   opt(r.Limits[model.LimitOutputBytes]),
		MaxCompensations: opt(r.Limits[model.LimitCompensations]),
	}
	if r.SetResources {
		rs := []protocol.ResourceSelector{}
		for _, s := range r.Resources.Sorted() {
			rs = append(rs, protocol.ResourceSelector{Kind: protocol.ResourceKind(s.Kind), ID: s.ID})
		}
		a.Resources = protocol.Some(rs)
	}
	return a
}

// attExpectedKind maps a model verdict to the error kind the implementation must return.
var attExpectedKind = map[model.Outcome]protocol.ErrorKind{
	model.ZeroLimit:   protocol.ErrInvalidGrant,
	model.Widens:      protocol.ErrAttenuationWidensLimits,
	model.Expands:     protocol.ErrAttenuationExpandsResources,
	model.UnknownTool: protocol.ErrUnknownTool,
	model.InvalidTool: protocol.ErrInvalidToken,
}

func attCheckVerdict(t *rapid.T, err error, verdict model.Outcome) {
	if verdict == model.Attenuated {
		if err != nil {
			t.Fatalf("model accepts, implementation fails: %v", err)
		}
		return
	}
	want := attExpectedKind[verdict]
	if !errors.Is(err, want) {
		t.Fatalf("model says %v, implementation returned %v (want %v)", verdict, err, want)
	}
}

// Spec: MAN-013, MAN-014, MAN-015, MAN-016, MAN-017, MAN-018, MAN-026, MAN-028, MAN-030
func TestGrantAttenuationMatchesModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		parent := attAuthority(t, "tool")
		r := attRestriction(t, "r")
		pg := attToGrant(parent)
		before := string(pg.AppendJSON(nil))
		got, err := pg.Attenuate(attToAttenuation(r))
		if after := string(pg.AppendJSON(nil)); after != before {
			t.Fatalf("attenuation changed its parent: %s -> %s", before, after)
		}
		want, verdict := model.Attenuate(parent, r)
		attCheckVerdict(t, err, verdict)
		if err != nil {
			return
		}
		if err := got.Validate(); err != nil {
			t.Fatalf("result does not validate: %v", err)
		}
		if !attFromGrant(got).Equal(want) {
			t.Fatalf("result %+v, model %+v", got, want)
		}
		if !attFromGrant(got).Leq(parent) {
			t.Fatalf("result %+v widens %+v", got, pg)
		}
	})
}

// Spec: MAN-029
func TestGrantAttenuationComposesAsMeet(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		parent := attAuthority(t, "tool")
		r1, r2 := attRestriction(t, "r1"), attRestriction(t, "r2")
		pg := attToGrant(parent)
		first, err := pg.Attenuate(attToAttenuation(r1))
		if err != nil {
			return
		}
		second, err := first.Attenuate(attToAttenuation(r2))
		if err != nil {
			return
		}
		once, err := pg.Attenuate(attToAttenuation(r1.Meet(r2)))
		if err != nil {
			t.Fatalf("two attenuations succeed but their meet fails: %v", err)
		}
		if !once.Equal(second) {
			t.Fatalf("attenuate twice %+v, by the meet %+v", second, once)
		}
		if !attFromGrant(second).Leq(attFromGrant(first)) || !attFromGrant(first).Leq(parent) {
			t.Fatalf("composition is not monotone: %+v, %+v, %+v", pg, first, second)
		}
		// The model agrees with itself on the same law.
		m1, _ := model.Attenuate(parent, r1)
		m2, _ := model.Attenuate(m1, r2)
		mm, verdict := model.Attenuate(parent, r1.Meet(r2))
		if verdict != model.Attenuated || !mm.Equal(m2) {
			t.Fatalf("model composition: %v %+v vs %+v", verdict, mm, m2)
		}
	})
}

func attManifest(t *rapid.T) model.ManifestAuthority {
	n := rapid.IntRange(0, len(attTools)).Draw(t, "grants")
	tools := rapid.Permutation(attTools).Draw(t, "tool order")[:n]
	m := model.ManifestAuthority{Session: "session"}
	for _, tool := range tools {
		m.Grants = append(m.Grants, attAuthority(t, tool))
	}
	return m
}

func attManifestRestriction(t *rapid.T, m model.ManifestAuthority) model.ManifestRestriction {
	var present []string
	for _, g := range m.Grants {
		present = append(present, g.Tool)
	}
	// Mostly the manifest's own tools; sometimes a tool it lacks or a name that is not a token.
	odd := []string{"zz", "Bad", ""}
	if rapid.IntRange(0, 4).Draw(t, "odd names") == 0 {
		odd = append(odd, attTools...)
	} else {
		odd = nil
	}
	names := append(append([]string{}, present...), odd...)
	var r model.ManifestRestriction
	if rapid.Bool().Draw(t, "set allowed") {
		r.SetAllowed, r.Allowed = true, map[string]bool{}
		for _, name := range names {
			if rapid.Bool().Draw(t, "allow "+name) {
				r.Allowed[name] = true
			}
		}
	}
	r.Grants = map[string]model.Restriction{}
	for _, name := range names {
		if rapid.Bool().Draw(t, "restrict "+name) {
			r.Grants[name] = attRestriction(t, "restriction "+name)
		}
	}
	return r
}

func attToManifest(m model.ManifestAuthority) protocol.CapabilityManifest {
	out := protocol.CapabilityManifest{ProtocolVersion: protocol.ProtocolVersion, SessionID: m.Session}
	for _, g := range m.Grants {
		out.Grants = append(out.Grants, attToGrant(g))
	}
	return out
}

func attFromManifest(m protocol.CapabilityManifest) model.ManifestAuthority {
	out := model.ManifestAuthority{Session: m.SessionID}
	for _, g := range m.Grants {
		out.Grants = append(out.Grants, attFromGrant(g))
	}
	return out
}

func attToManifestAttenuation(r model.ManifestRestriction) protocol.ManifestAttenuation {
	out := protocol.ManifestAttenuation{Grants: map[string]protocol.GrantAttenuation{}}
	if r.SetAllowed {
		tools := []string{}
		for name := range r.Allowed {
			tools = append(tools, name)
		}
		out.AllowedTools = protocol.Some(tools)
	}
	for name, g := range r.Grants {
		out.Grants[name] = attToAttenuation(g)
	}
	return out
}

func attManifestEqual(a, b model.ManifestAuthority) bool {
	if a.Session != b.Session || len(a.Grants) != len(b.Grants) {
		return false
	}
	for i := range a.Grants {
		if !a.Grants[i].Equal(b.Grants[i]) {
			return false
		}
	}
	return true
}

// Spec: MAN-019, MAN-020, MAN-021, MAN-022, MAN-023, MAN-024, MAN-025, MAN-027, MAN-029
func TestManifestAttenuationMatchesModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		parent := attManifest(t)
		r := attManifestRestriction(t, parent)
		pm := attToManifest(parent)
		if err := pm.Validate(); err != nil {
			t.Fatalf("generated manifest is invalid: %v", err)
		}
		got, err := pm.Attenuate(attToManifestAttenuation(r))
		want, verdict, tool := model.AttenuateManifest(parent, r)
		attCheckVerdict(t, err, verdict)
		if err != nil {
			var pe *protocol.Error
			if (verdict == model.UnknownTool || verdict == model.InvalidTool) && (!errors.As(err, &pe) || pe.Value != tool) {
				t.Fatalf("error %v names the wrong tool, want %q", err, tool)
			}
			return
		}
		if err := got.Validate(); err != nil {
			t.Fatalf("result does not validate: %v", err)
		}
		gotModel := attFromManifest(got)
		if !attManifestEqual(gotModel, want) {
			t.Fatalf("result %+v, model %+v", gotModel, want)
		}
		if !gotModel.Leq(parent) {
			t.Fatalf("result %+v is not below %+v", gotModel, parent)
		}
		// Attenuating the result again stays below it.
		r2 := attManifestRestriction(t, gotModel)
		again, err := got.Attenuate(attToManifestAttenuation(r2))
		if err == nil && !attFromManifest(again).Leq(gotModel) {
			t.Fatalf("second attenuation %+v is not below %+v", again, got)
		}
	})
}
