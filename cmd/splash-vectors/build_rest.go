package main

import (
	"encoding/hex"
	"strings"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/vectors/vectorfmt"
)

func buildBootstrap(c *checker) (string, any, *fileBuilder) {
	b := newFileBuilder(vectorfmt.BootstrapFile, c)
	readG := vectorfmt.BootstrapGroup{Type: vectorfmt.BootstrapReadType, Tests: []vectorfmt.BootstrapTest{}}
	writeG := vectorfmt.BootstrapGroup{Type: vectorfmt.BootstrapWriteType, Tests: []vectorfmt.BootstrapTest{}}
	for _, row := range bootstrapCases() {
		if row.write {
			want := indBootstrap(row.session, [32]byte(padKey(row.key)))
			if row.err == "" && row.recordedBytes != "" && hex.EncodeToString(want) != row.recordedBytes {
				b.failf("%q: independent bytes differ from the recorded reference bytes", row.comment)
			}
			t := vectorfmt.BootstrapTest{Case: b.newCase(row.meta, row.err), SessionID: strPtr(row.session), KeyHex: strPtr(hex.EncodeToString(row.key))}
			if row.err == "" {
				t.OutputHex = strPtr(hex.EncodeToString(want))
			}
			t.WrappedError = row.wrapped
			writeG.Tests = append(writeG.Tests, t)
			continue
		}
		if row.recordedBytes != "" && hex.EncodeToString(row.input) != row.recordedBytes {
			b.failf("%q: input differs from the recorded reference bytes", row.comment)
		}
		t := vectorfmt.BootstrapTest{Case: b.newCase(row.meta, row.err), InputHex: strPtr(hex.EncodeToString(row.input))}
		if row.err != "" {
			t.WrappedError = row.wrapped
		} else {
			t.SessionID, t.KeyHex, t.Consumed = strPtr(row.session), strPtr(hex.EncodeToString(row.key)), &row.consumed
		}
		readG.Tests = append(readG.Tests, t)
	}
	doc := vectorfmt.Bootstrap{TestGroups: []vectorfmt.BootstrapGroup{readG, writeG}}
	doc.Header = b.header()
	return b.name, doc, b
}

// padKey returns key as 32 bytes (only used to lay out the expected bytes of a valid row).
func padKey(key []byte) []byte {
	out := make([]byte, 32)
	copy(out, key)
	return out
}

func buildManifests(c *checker) (string, any, *fileBuilder) {
	b := newFileBuilder(vectorfmt.ManifestsFile, c)
	g := vectorfmt.ManifestGroup{Type: vectorfmt.ManifestValidateType, Tests: []vectorfmt.ManifestTest{}}
	for _, row := range manifestCases() {
		t := vectorfmt.ManifestTest{Case: b.newCase(row.meta, row.exp.err), Input: b.text(row.input)}
		if row.exp.err == "" {
			t.Output = b.text(row.exp.out)
		}
		g.Tests = append(g.Tests, t)
	}
	doc := vectorfmt.Manifests{TestGroups: []vectorfmt.ManifestGroup{g}}
	doc.Header = b.header()
	return b.name, doc, b
}

func buildAttenuation(c *checker) (string, any, *fileBuilder) {
	b := newFileBuilder(vectorfmt.AttenuationFile, c)
	grantG := vectorfmt.AttenuationGroup{Type: vectorfmt.GrantAttenuateType, Tests: []vectorfmt.AttenuationTest{}}
	manG := vectorfmt.AttenuationGroup{Type: vectorfmt.ManifestAttenuateType, Tests: []vectorfmt.AttenuationTest{}}
	for _, row := range attenuationCases() {
		t := vectorfmt.AttenuationTest{Case: b.newCase(row.meta, row.exp.err), Attenuation: b.text(row.att)}
		if row.exp.err == "" {
			t.Output = b.text(row.exp.out)
		}
		if row.manifest {
			t.Manifest = b.text(row.parent)
			manG.Tests = append(manG.Tests, t)
		} else {
			t.Grant = b.text(row.parent)
			grantG.Tests = append(grantG.Tests, t)
		}
	}
	doc := vectorfmt.Attenuation{TestGroups: []vectorfmt.AttenuationGroup{grantG, manG}}
	doc.Header = b.header()
	return b.name, doc, b
}

func buildFingerprints(c *checker) (string, any, *fileBuilder) {
	b := newFileBuilder(vectorfmt.FingerprintsFile, c)
	inputG := map[canonjson.Mode]*vectorfmt.FingerprintGroup{}
	for _, m := range modes {
		inputG[m] = &vectorfmt.FingerprintGroup{Type: vectorfmt.CanonicalInputType, Mode: m.String(), Tests: []vectorfmt.FingerprintTest{}}
	}
	grantG := vectorfmt.FingerprintGroup{Type: vectorfmt.GrantFingerprintType, Tests: []vectorfmt.FingerprintTest{}}
	for _, row := range fingerprintCases() {
		if row.grant {
			t := vectorfmt.FingerprintTest{Case: b.newCase(row.meta, row.preserve.err), Grant: b.text(row.input)}
			if row.preserve.err == "" {
				want := indGrantFingerprint(row.preserve.out)
				if row.recordedFP != "" && want != row.recordedFP {
					b.failf("%q: independent fingerprint %s differs from the recorded reference value %s", row.comment, want, row.recordedFP)
				}
				t.Fingerprint = strPtr(want)
			}
			grantG.Tests = append(grantG.Tests, t)
			continue
		}
		lossy := row.lossy
		if lossy.isZero() {
			lossy = row.preserve
		}
		if (lossy != row.preserve) != hasFlag(row.flags, "ModeDependent") {
			b.failf("%q: ModeDependent flag does not match the expectations", row.comment)
		}
		for _, m := range modes {
			exp := row.preserve
			if m == canonjson.Lossy {
				exp = lossy
			}
			t := vectorfmt.FingerprintTest{Case: b.newCase(row.meta, exp.err), Payload: b.text(row.input)}
			what := row.comment + " [" + m.String() + "]"
			if exp.err == "" {
				ci := indCanonicalInput(row.format, exp.out)
				wantHex, wantFP := hex.EncodeToString(ci), indInputFingerprint(ci)
				if row.recordedFP != "" && wantFP != row.recordedFP {
					b.failf("%s: independent fingerprint %s differs from the recorded reference value %s", what, wantFP, row.recordedFP)
				}
				if row.recordedPrefix != "" && !strings.HasPrefix(wantHex, row.recordedPrefix) {
					b.failf("%s: independent bytes %s do not start with the recorded reference prefix %s", what, wantHex, row.recordedPrefix)
				}
				t.CanonicalHex, t.Fingerprint = strPtr(wantHex), strPtr(wantFP)
			}
			inputG[m].Tests = append(inputG[m].Tests, t)
		}
	}
	doc := vectorfmt.Fingerprints{TestGroups: []vectorfmt.FingerprintGroup{*inputG[canonjson.Preserve], *inputG[canonjson.Lossy], grantG}}
	doc.Header = b.header()
	return b.name, doc, b
}
