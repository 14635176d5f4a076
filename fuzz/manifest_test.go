package fuzz

import (
	"bytes"
	"slices"
	"testing"

	"github.com/splashv5/conform/impl/protocol"
)

// manifestHandSeeds are manifests (the one of reference anchor A1, the grant of anchor A5, both
// in docs/reference-anchors.md, and invalid or alternative spellings); attenuationHandSeeds are
// manifest attenuations.
var (
	manifestHandSeeds = []string{
		`{"protocol_version":5,"session_id":"session-1","grants":[{"tool":"text.echo","format":"text","max_calls":1,"max_input_bytes":16384,"max_output_bytes":65536,"max_compensations":0,"resources":[]}]}`,
		`{"protocol_version":5,"session_id":"s","grants":[{"tool":"release.publish","format":"json","max_calls":1,"max_input_bytes":16384,"max_output_bytes":65536,"max_compensations":1,"resources":[{"kind":"file_root","id":"aa"},{"kind":"file_root","id":"zz"},{"kind":"network_origin","id":"release-api"},{"kind":"secret","id":"release-token"}]},{"tool":"a","format":"text","max_calls":9,"max_input_bytes":9,"max_output_bytes":9}]}`,
		`[5,"s",[["t","json",3,4,5],["u","text",1,1,1,2,[{"kind":"executable","id":"sh"},{"kind":"executable","id":"sh"}]]]]`,
		`{"protocol_version":5,"session_id":"s","grants":[]}`,
		`{"protocol_version":5,"session_id":"S","grants":[{"tool":"t","format":"text","max_calls":0,"max_input_bytes":1,"max_output_bytes":1}]}`,
		`{"protocol_version":4,"session_id":"s","grants":[{"tool":"t","format":"text","max_calls":1,"max_input_bytes":1,"max_output_bytes":1},{"tool":"t","format":"text","max_calls":1,"max_input_bytes":1,"max_output_bytes":1}]}`,
		"", "{}", `{"protocol_version":5,"session_id":"s","grants":null}`,
	}
	attenuationHandSeeds = []string{
		`{"grants":{}}`,
		`{"allowed_tools":[],"grants":{}}`,
		`{"allowed_tools":["release.publish","a"],"grants":{"release.publish":{"max_calls":1,"max_compensations":0,"resources":[{"kind":"secret","id":"release-token"}]}}}`,
		`{"allowed_tools":["a"],"grants":{"release.publish":{"max_calls":100}}}`,
		`{"grants":{"a":{"max_input_bytes":0}}}`,
		`{"grants":{"t":{"resources":[{"kind":"executable","id":"other"}]}}}`,
		`{"allowed_tools":["T"],"grants":{"zz":{}}}`,
		`[["u","t","u"],{"u":[1,1,1,0,[]],"t":{}}]`,
		"", `{"grants":{"a":null}}`,
	}
)

// grantBelow reports g ⊑ p: same tool and format, no larger limit, no new resource.
func grantBelow(g, p protocol.CapabilityGrant) bool {
	if g.Tool != p.Tool || g.Format != p.Format || g.MaxCalls > p.MaxCalls || g.MaxInputBytes > p.MaxInputBytes ||
		g.MaxOutputBytes > p.MaxOutputBytes || g.MaxCompensations > p.MaxCompensations {
		return false
	}
	for _, r := range g.Resources {
		if !slices.Contains(p.Resources, r) {
			return false
		}
	}
	return true
}

// manifestBelow reports m ⊑ n: same session, and m's grants are, in n's order, below n's.
func manifestBelow(m, n protocol.CapabilityManifest) bool {
	if m.SessionID != n.SessionID || m.ProtocolVersion != n.ProtocolVersion {
		return false
	}
	j := 0
	for _, g := range m.Grants {
		for j < len(n.Grants) && n.Grants[j].Tool != g.Tool {
			j++
		}
		if j == len(n.Grants) || !grantBelow(g, n.Grants[j]) {
			return false
		}
		j++
	}
	return true
}

// FuzzManifest decodes a manifest and a manifest attenuation from arbitrary input. Decoding,
// validation and attenuation never panic and fail only with protocol error kinds; a valid
// manifest re-encodes and re-decodes to an equal manifest; a successful attenuation is a valid
// manifest below its parent that survives the same round trip. The seeds are every pair of
// the hand seeds above and the manifests, grants and attenuations of the vectors
// (manifestSeedPairs).
//
// Spec: MAN-005, MAN-006, MAN-009, MAN-025, MAN-026, MAN-027, ERR-017
func FuzzManifest(f *testing.F) {
	for _, m := range manifestHandSeeds {
		for _, a := range attenuationHandSeeds {
			f.Add([]byte(m), []byte(a))
		}
	}
	for _, p := range manifestSeedPairs(f) {
		f.Add(p.manifest, p.attenuation)
	}
	f.Fuzz(func(t *testing.T, manifestJSON, attenuationJSON []byte) {
		classified := func(err error) {
			if _, ok := protocol.KindOf(err); !ok {
				t.Fatalf("error outside the protocol kinds: %v", err)
			}
		}
		roundTrip := func(m protocol.CapabilityManifest) {
			enc := m.AppendJSON(nil)
			back, err := protocol.DecodeManifest(enc)
			if err != nil {
				t.Fatalf("encoding %q does not decode: %v", enc, err)
			}
			if !back.Equal(m) || !bytes.Equal(back.AppendJSON(nil), enc) {
				t.Fatalf("round trip changed the manifest:\n%q\n%q", enc, back.AppendJSON(nil))
			}
			if err := back.Validate(); err != nil {
				t.Fatalf("re-decoded manifest does not validate: %v", err)
			}
		}
		m, err := protocol.DecodeManifest(manifestJSON)
		if err != nil {
			classified(err)
			return
		}
		if err := m.Validate(); err != nil {
			classified(err)
		} else {
			roundTrip(m)
		}
		a, err := protocol.DecodeManifestAttenuation(attenuationJSON)
		if err != nil {
			classified(err)
			return
		}
		if enc := a.AppendJSON(nil); true {
			back, err := protocol.DecodeManifestAttenuation(enc)
			if err != nil || !bytes.Equal(back.AppendJSON(nil), enc) {
				t.Fatalf("attenuation round trip: %q, %v", enc, err)
			}
		}
		before := m.AppendJSON(nil)
		r, err := m.Attenuate(a)
		if !bytes.Equal(m.AppendJSON(nil), before) {
			t.Fatal("attenuation changed its parent")
		}
		if err != nil {
			classified(err)
			if m.Validate() == nil {
				if k, _ := protocol.KindOf(err); !slices.Contains([]protocol.ErrorKind{
					protocol.ErrUnknownTool, protocol.ErrInvalidToken, protocol.ErrInvalidGrant,
					protocol.ErrAttenuationWidensLimits, protocol.ErrAttenuationExpandsResources,
				}, k) {
					t.Fatalf("unexpected attenuation error for a valid manifest: %v", err)
				}
			}
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("an invalid manifest was attenuated: %v", err)
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("attenuated manifest does not validate: %v", err)
		}
		if !manifestBelow(r, m) {
			t.Fatalf("attenuation widened:\n%s\n%s", before, r.AppendJSON(nil))
		}
		roundTrip(r)
	})
}
