package main

import (
	"fmt"
	"strings"
)

// ---- bootstrap.json ----

// bootCase is a reader row (input given) or a writer row (session and key given). For a
// valid reader row the expected session, key and consumed count are stated; for a valid
// writer row the output is computed from the layout (BOOT-001) and, when recordedBytes is set,
// must equal those bytes recorded from the Rust reference.
type bootCase struct {
	meta
	write         bool
	input         []byte
	session       string
	key           []byte
	consumed      int
	err           string
	wrapped       string
	recordedBytes string
}

const recordedBootstrapHex = "53504c50424f4f540109" + "73657373696f6e2d31" + "abababababababababababababababababababababababababababababababab"

func bootstrapCases() []bootCase {
	good := indBootstrap(sessionOne, keyAB)
	frameAfter := []byte(frame("host", 1, mOpen) + "\n")
	cat := func(parts ...[]byte) []byte {
		var out []byte
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	withSession := func(sid []byte, key [32]byte) []byte {
		return cat([]byte("SPLPBOOT"), []byte{1, byte(len(sid))}, sid, key[:])
	}
	zero := [32]byte{}
	read := func(comment string, in []byte, sid string, key []byte, f []string, r []string) bootCase {
		return bootCase{meta: meta{comment, f, r}, input: in, session: sid, key: key, consumed: 42 + len(sid)}
	}
	readErr := func(comment string, in []byte, kind, wrapped string, f []string, r []string) bootCase {
		return bootCase{meta: meta{comment, f, r}, input: in, err: kind, wrapped: wrapped}
	}
	eof := "UnexpectedEof"
	long := strings.Repeat("s", 128)
	cs := []bootCase{
		{meta: meta{"reference anchor A9: session-1 with key 0xab…", flags("ReferenceAnchor", "Bootstrap"), reqs("BOOT-001", "BOOT-012")}, input: good, session: sessionOne, key: keyAB[:], consumed: 51, recordedBytes: recordedBootstrapHex},
		read("the reader stops at the first byte of the following JSON frame", cat(good, frameAfter), sessionOne, keyAB[:], flags("Bootstrap", "Trailing"), reqs("BOOT-012", "BOOT-002")),
		read("one-byte session id", withSession([]byte("s"), key07), "s", key07[:], flags("Bootstrap", "Boundary"), reqs("BOOT-001", "BOOT-012")),
		read("128-byte session id", withSession([]byte(long), key07), long, key07[:], flags("Bootstrap", "Boundary"), reqs("BOOT-008", "BOOT-012")),
		read("punctuation-only session id", withSession([]byte("..-_"), key08), "..-_", key08[:], flags("Bootstrap", "Token"), reqs("MSG-002", "BOOT-010")),
		readErr("empty stream", nil, "Io", eof, flags("Bootstrap", "Truncated"), reqs("BOOT-005")),
		readErr("stream ends inside the magic", good[:7], "Io", eof, flags("Bootstrap", "Truncated"), reqs("BOOT-005")),
		readErr("stream ends after the magic", good[:8], "Io", eof, flags("Bootstrap", "Truncated"), reqs("BOOT-005")),
		readErr("stream ends after the version", good[:9], "Io", eof, flags("Bootstrap", "Truncated"), reqs("BOOT-005")),
		readErr("stream ends after the length byte", good[:10], "Io", eof, flags("Bootstrap", "Truncated"), reqs("BOOT-005")),
		readErr("stream ends inside the session id", good[:14], "Io", eof, flags("Bootstrap", "Truncated"), reqs("BOOT-005")),
		readErr("stream ends before the key", good[:19], "Io", eof, flags("Bootstrap", "Truncated"), reqs("BOOT-005")),
		readErr("stream ends one byte before the end of the key", good[:50], "Io", eof, flags("Bootstrap", "Truncated", "Boundary"), reqs("BOOT-005")),
		readErr("wrong last magic byte", cat([]byte("SPLPBOOX"), good[8:]), "InvalidMagic", "", flags("Bootstrap"), reqs("BOOT-006", "ERR-002", "ERR-010")),
		readErr("lowercase magic", cat([]byte("splpboot"), good[8:]), "InvalidMagic", "", flags("Bootstrap"), reqs("BOOT-006")),
		readErr("a JSON frame instead of a bootstrap", frameAfter, "InvalidMagic", "", flags("Bootstrap"), reqs("BOOT-006")),
		readErr("wrong magic is reported before a short stream", []byte("SPLPBOOX"), "InvalidMagic", "", flags("Bootstrap", "CheckOrder"), reqs("BOOT-006", "BOOT-005", "ERR-002", "ERR-007")),
		readErr("version 0", cat(good[:8], []byte{0}, good[9:]), "UnsupportedVersion", "", flags("Bootstrap", "Version"), reqs("BOOT-007")),
		readErr("version 2", cat(good[:8], []byte{2}, good[9:]), "UnsupportedVersion", "", flags("Bootstrap", "Version"), reqs("BOOT-007")),
		readErr("version 0xff followed by nothing", cat(good[:8], []byte{0xff}), "UnsupportedVersion", "", flags("Bootstrap", "Version", "CheckOrder"), reqs("BOOT-007")),
		readErr("session id length 0", cat(good[:9], []byte{0}, keyAB[:]), "InvalidSessionIdLength", "", flags("Bootstrap", "Boundary"), reqs("BOOT-008", "ERR-002")),
		readErr("session id length 129", cat(good[:9], []byte{129}, []byte(strings.Repeat("s", 129)), keyAB[:]), "InvalidSessionIdLength", "", flags("Bootstrap", "Boundary"), reqs("BOOT-008")),
		readErr("session id length 255 with nothing after it", cat(good[:9], []byte{255}), "InvalidSessionIdLength", "", flags("Bootstrap", "CheckOrder"), reqs("BOOT-008")),
		readErr("session id that is not UTF-8", withSession([]byte{'s', 0xff}, keyAB), "InvalidSessionIdEncoding", "", flags("Bootstrap", "InvalidUtf8"), reqs("BOOT-009", "ERR-002")),
		readErr("session id with a capital letter", withSession([]byte("Session-1"), keyAB), "Protocol", "InvalidToken", flags("Bootstrap", "Token"), reqs("BOOT-010", "BOOT-023")),
		readErr("session id with a space", withSession([]byte("a b"), keyAB), "Protocol", "InvalidToken", flags("Bootstrap", "Token"), reqs("BOOT-010")),
		readErr("non-ASCII UTF-8 session id", withSession([]byte("sé"), keyAB), "Protocol", "InvalidToken", flags("Bootstrap", "Token", "Unicode"), reqs("BOOT-009", "BOOT-010")),
		readErr("invalid session id is reported before a truncated key", cat(good[:9], []byte{3}, []byte("A-B"), keyAB[:5]), "Protocol", "InvalidToken", flags("Bootstrap", "CheckOrder", "Truncated"), reqs("BOOT-010")),
		readErr("all-zero key", withSession([]byte(sessionOne), zero), "Protocol", "WeakSessionKey", flags("Bootstrap"), reqs("BOOT-011", "FRM-039")),
		{meta: meta{"reference anchor A9 written", flags("ReferenceAnchor", "Bootstrap"), reqs("BOOT-001", "BOOT-004")}, write: true, session: sessionOne, key: keyAB[:], recordedBytes: recordedBootstrapHex},
		{meta: meta{"writer with a one-byte session id", flags("Bootstrap"), reqs("BOOT-001", "BOOT-003")}, write: true, session: "s", key: key07[:]},
		{meta: meta{"writer with a 128-byte session id", flags("Bootstrap", "Boundary"), reqs("BOOT-001", "BOOT-003")}, write: true, session: long, key: key08[:]},
		{meta: meta{"writer refuses a session id that is not a token", flags("Bootstrap", "Token"), reqs("BOOT-003")}, write: true, session: "Session-1", key: keyAB[:], err: "InvalidToken"},
		{meta: meta{"writer refuses an empty session id", flags("Bootstrap", "Token"), reqs("BOOT-003")}, write: true, session: "", key: keyAB[:], err: "InvalidToken"},
		{meta: meta{"writer refuses a 129-byte session id", flags("Bootstrap", "Token", "Boundary"), reqs("BOOT-003", "MSG-041")}, write: true, session: strings.Repeat("s", 129), key: keyAB[:], err: "InvalidToken"},
		{meta: meta{"writer refuses an all-zero key", flags("Bootstrap"), reqs("BOOT-003", "FRM-039")}, write: true, session: sessionOne, key: zero[:], err: "WeakSessionKey"},
		{meta: meta{"writer refuses a 31-byte key", flags("Bootstrap", "Boundary"), reqs("BOOT-003", "FRM-038")}, write: true, session: sessionOne, key: keyAB[:31], err: "InvalidSessionKeyLength"},
	}
	return cs
}

// ---- manifests.json ----

// manCase decodes a manifest and validates it.
type manCase struct {
	meta
	input string
	exp   expect
}

func manifestJSON(session string, grants ...string) string {
	return `{"protocol_version":5,"session_id":"` + session + `","grants":[` + strings.Join(grants, ",") + `]}`
}

func grantJSON(tool, format string, calls, in, outb, comp int, resources string) string {
	return fmt.Sprintf(`{"tool":"%s","format":"%s","max_calls":%d,"max_input_bytes":%d,"max_output_bytes":%d,"max_compensations":%d,"resources":[%s]}`,
		tool, format, calls, in, outb, comp, resources)
}

func selectors(kind, prefix string, n int) string {
	var parts []string
	for i := 0; i < n; i++ {
		parts = append(parts, fmt.Sprintf(`{"kind":"%s","id":"%s%03d"}`, kind, prefix, i))
	}
	return strings.Join(parts, ",")
}

func grants(n int) []string {
	var gs []string
	for i := 0; i < n; i++ {
		gs = append(gs, grantJSON(fmt.Sprintf("tool.%03d", i), "text", 1, 1, 1, 0, ""))
	}
	return gs
}

var (
	gEcho    = grantJSON("text.echo", "text", 1, 16384, 65536, 0, "")
	gRelease = grantJSON("release.publish", "json", 1, 16384, 65536, 1,
		`{"kind":"file_root","id":"aa"},{"kind":"file_root","id":"zz"},{"kind":"network_origin","id":"release-api"},{"kind":"secret","id":"release-token"}`)
	gReleaseShuffled = grantJSON("release.publish", "json", 1, 16384, 65536, 1,
		`{"kind":"secret","id":"release-token"},{"kind":"file_root","id":"zz"},{"kind":"network_origin","id":"release-api"},{"kind":"file_root","id":"aa"},{"kind":"file_root","id":"zz"}`)
)

func manifestCases() []manCase {
	ok := func(comment, in, out string, f []string, r ...string) manCase {
		return manCase{meta{comment, f, r}, in, expect{out: out}}
	}
	bad := func(comment, in, kind string, f []string, r ...string) manCase {
		return manCase{meta{comment, f, r}, in, fail(kind)}
	}
	seed := `{
  "protocol_version": 5,
  "session_id": "release-42",
  "grants": [
    {
      "tool": "release.publish",
      "format": "json",
      "max_calls": 1,
      "max_input_bytes": 16384,
      "max_output_bytes": 65536,
      "max_compensations": 1,
      "resources": [
        {"kind": "network_origin", "id": "release-api"},
        {"kind": "secret", "id": "release-token"}
      ]
    }
  ]
}`
	g128 := grants(128)
	g129 := grants(129)
	return []manCase{
		ok("the example manifest of the protocol documentation", seed,
			manifestJSON("release-42", grantJSON("release.publish", "json", 1, 16384, 65536, 1, `{"kind":"network_origin","id":"release-api"},{"kind":"secret","id":"release-token"}`)),
			flags("Reencoding", "Whitespace"), "MAN-006", "MSG-009"),
		ok("zero grants are valid", manifestJSON(sessionOne), manifestJSON(sessionOne), flags("CanonicalForm"), "MAN-008"),
		ok("grant order is kept, not sorted", manifestJSON(sessionOne, gRelease, gEcho), manifestJSON(sessionOne, gRelease, gEcho), flags("CanonicalForm"), "MAN-009"),
		ok("resources are sorted and deduplicated", manifestJSON(sessionOne, gReleaseShuffled), manifestJSON(sessionOne, gRelease), flags("Dedup", "Reencoding"), "MSG-007", "ENC-004", "ENC-048"),
		ok("defaulted grant members may be missing", manifestJSON(sessionOne, `{"tool":"text.echo","format":"text","max_calls":1,"max_input_bytes":16384,"max_output_bytes":65536}`),
			manifestJSON(sessionOne, gEcho), flags("DefaultField"), "MSG-008", "ENC-046"),
		ok("unknown members are ignored", `{"protocol_version":5,"session_id":"session-1","grants":[],"owner":"ops"}`, manifestJSON(sessionOne), flags("UnknownField"), "MSG-021"),
		ok("manifest in positional form", `[5,"session-1",[["text.echo","text",1,16384,65536,0,[]]]]`, manifestJSON(sessionOne, gEcho), flags("PositionalArray"), "ENC-049"),
		ok("128 grants are valid", manifestJSON(sessionOne, g128...), manifestJSON(sessionOne, g128...), flags("Limit", "Boundary"), "MAN-006", "MSG-041"),
		bad("129 grants", manifestJSON(sessionOne, g129...), "TooManyGrants", flags("Limit", "Boundary"), "MAN-006", "MSG-041"),
		bad("the grant count is checked before the session id", manifestJSON("Bad Session", g129...), "TooManyGrants", flags("Limit", "CheckOrder"), "MAN-006", "ERR-006"),
		bad("the version is checked before the grant count", rep(manifestJSON(sessionOne, g129...), `:5,`, `:4,`), "UnsupportedVersion", flags("Version", "CheckOrder"), "MAN-006", "MSG-001"),
		bad("protocol version 6", rep(manifestJSON(sessionOne), `:5,`, `:6,`), "UnsupportedVersion", flags("Version"), "MAN-006"),
		bad("invalid session id", manifestJSON("Session-1", gEcho), "InvalidToken", flags("Token"), "MAN-006", "MSG-003"),
		bad("the session id is checked before the grants", manifestJSON("session 1", rep(gEcho, `"max_calls":1`, `"max_calls":0`)), "InvalidToken", flags("Token", "CheckOrder"), "MAN-006"),
		bad("invalid tool name", manifestJSON(sessionOne, rep(gEcho, "text.echo", "Text.Echo")), "InvalidToken", flags("Token"), "MAN-001"),
		bad("max_calls 0", manifestJSON(sessionOne, rep(gEcho, `"max_calls":1`, `"max_calls":0`)), "InvalidGrant", flags("Validation"), "MAN-001", "MAN-002"),
		bad("max_input_bytes 0", manifestJSON(sessionOne, rep(gEcho, `"max_input_bytes":16384`, `"max_input_bytes":0`)), "InvalidGrant", flags("Validation"), "MAN-002"),
		bad("max_output_bytes 0", manifestJSON(sessionOne, rep(gEcho, `"max_output_bytes":65536`, `"max_output_bytes":0`)), "InvalidGrant", flags("Validation"), "MAN-002"),
		ok("max_compensations 0 is valid", manifestJSON(sessionOne, gEcho), manifestJSON(sessionOne, gEcho), flags("CanonicalForm"), "MAN-004"),
		ok("64 resources are valid", manifestJSON(sessionOne, grantJSON("files.read", "text", 1, 1, 1, 0, selectors("file_root", "r", 64))),
			manifestJSON(sessionOne, grantJSON("files.read", "text", 1, 1, 1, 0, selectors("file_root", "r", 64))), flags("Limit", "Boundary"), "MAN-003", "MSG-041"),
		bad("65 resources", manifestJSON(sessionOne, grantJSON("files.read", "text", 1, 1, 1, 0, selectors("file_root", "r", 65))), "TooManyResources", flags("Limit", "Boundary"), "MAN-003", "MSG-041"),
		ok("65 entries of which two are equal count as 64", manifestJSON(sessionOne, grantJSON("files.read", "text", 1, 1, 1, 0, selectors("file_root", "r", 64)+`,{"kind":"file_root","id":"r000"}`)),
			manifestJSON(sessionOne, grantJSON("files.read", "text", 1, 1, 1, 0, selectors("file_root", "r", 64))), flags("Limit", "Dedup", "Boundary"), "MAN-003", "ENC-048"),
		bad("invalid resource id", manifestJSON(sessionOne, grantJSON("files.read", "text", 1, 1, 1, 0, `{"kind":"secret","id":"API_KEY"}`)), "InvalidToken", flags("Token"), "MAN-001", "MSG-007"),
		bad("the resource count is checked before resource ids", manifestJSON(sessionOne, grantJSON("files.read", "text", 1, 1, 1, 0, selectors("file_root", "r", 64)+`,{"kind":"secret","id":"BAD"}`)),
			"TooManyResources", flags("Limit", "CheckOrder"), "MAN-001", "MAN-003"),
		bad("zero max_calls is checked before a bad resource id", manifestJSON(sessionOne, grantJSON("files.read", "text", 0, 1, 1, 0, `{"kind":"secret","id":"BAD"}`)), "InvalidGrant", flags("CheckOrder"), "MAN-001"),
		bad("two grants for one tool", manifestJSON(sessionOne, gEcho, gRelease, gEcho), "DuplicateGrant", flags("Validation"), "MAN-007"),
		bad("a duplicate that is also invalid reports its own validation error", manifestJSON(sessionOne, gEcho, rep(gEcho, `"max_calls":1`, `"max_calls":0`)), "InvalidGrant", flags("CheckOrder"), "MAN-006", "MAN-007"),
		bad("an earlier invalid grant wins over a later duplicate", manifestJSON(sessionOne, rep(gRelease, `"max_output_bytes":65536`, `"max_output_bytes":0`), gEcho, gEcho), "InvalidGrant", flags("CheckOrder"), "MAN-006"),
		bad("grants missing", `{"protocol_version":5,"session_id":"session-1"}`, "Serialization", flags("MissingField"), "ENC-046"),
		bad("grants null", `{"protocol_version":5,"session_id":"session-1","grants":null}`, "Serialization", flags("NullField"), "ENC-047"),
		bad("protocol_version as a string", `{"protocol_version":"5","session_id":"session-1","grants":[]}`, "Serialization", flags("IntegerField"), "ENC-042"),
		bad("max_calls -0 in a standalone manifest is rejected (a direct field)", manifestJSON(sessionOne, rep(gEcho, `"max_calls":1`, `"max_calls":-0`)), "Serialization", flags("IntegerField", "NegativeZero"), "ENC-043"),
		bad("duplicate grants member", `{"protocol_version":5,"session_id":"session-1","grants":[],"grants":[]}`, "Serialization", flags("DuplicateField"), "ENC-045"),
		bad("unknown format", manifestJSON(sessionOne, rep(gEcho, `"format":"text"`, `"format":"binary"`)), "Serialization", flags("UnknownVariant"), "MSG-006"),
	}
}

// ---- attenuation.json ----

type attCase struct {
	meta
	manifest bool
	parent   string
	att      string
	exp      expect
}

var (
	attGrant = grantJSON("release.publish", "json", 4, 16384, 65536, 2,
		`{"kind":"file_root","id":"aa"},{"kind":"network_origin","id":"release-api"},{"kind":"secret","id":"release-token"}`)
	attA        = grantJSON("a.tool", "text", 3, 100, 200, 0, "")
	attB        = grantJSON("b.tool", "json", 5, 1000, 2000, 1, `{"kind":"secret","id":"k"},{"kind":"executable","id":"x"}`)
	attBNorm    = grantJSON("b.tool", "json", 5, 1000, 2000, 1, `{"kind":"executable","id":"x"},{"kind":"secret","id":"k"}`)
	attC        = grantJSON("c.tool", "text", 1, 10, 10, 0, "")
	attManifest = manifestJSON(sessionOne, attA, attB, attC)
)

func attenuationCases() []attCase {
	g := func(comment, att string, exp expect, f []string, r ...string) attCase {
		return attCase{meta{comment, f, r}, false, attGrant, att, exp}
	}
	gp := func(comment, parent, att string, exp expect, f []string, r ...string) attCase {
		return attCase{meta{comment, f, r}, false, parent, att, exp}
	}
	m := func(comment, att string, exp expect, f []string, r ...string) attCase {
		return attCase{meta{comment, f, r}, true, attManifest, att, exp}
	}
	mp := func(comment, parent, att string, exp expect, f []string, r ...string) attCase {
		return attCase{meta{comment, f, r}, true, parent, att, exp}
	}
	res := `{"kind":"file_root","id":"aa"},{"kind":"network_origin","id":"release-api"},{"kind":"secret","id":"release-token"}`
	return []attCase{
		g("empty attenuation returns the grant unchanged", `{}`, out(attGrant), flags("Identity"), "MAN-028", "MAN-014", "MAN-010"),
		g("lower max_calls", `{"max_calls":1}`, out(grantJSON("release.publish", "json", 1, 16384, 65536, 2, res)), flags(), "MAN-014", "MAN-026"),
		g("lower every limit", `{"max_calls":2,"max_input_bytes":10,"max_output_bytes":20,"max_compensations":1}`, out(grantJSON("release.publish", "json", 2, 10, 20, 1, res)), flags(), "MAN-014"),
		g("equal limits do not widen", `{"max_calls":4,"max_input_bytes":16384,"max_output_bytes":65536,"max_compensations":2}`, out(attGrant), flags("Boundary"), "MAN-016"),
		g("max_compensations may become 0", `{"max_compensations":0}`, out(grantJSON("release.publish", "json", 4, 16384, 65536, 0, res)), flags(), "MAN-015"),
		g("max_calls 0", `{"max_calls":0}`, fail("InvalidGrant"), flags("Validation"), "MAN-015"),
		g("max_input_bytes 0", `{"max_input_bytes":0}`, fail("InvalidGrant"), flags("Validation"), "MAN-015"),
		g("max_output_bytes 0", `{"max_output_bytes":0}`, fail("InvalidGrant"), flags("Validation"), "MAN-015"),
		g("max_calls above the parent's", `{"max_calls":5}`, fail("AttenuationWidensLimits"), flags("Widening"), "MAN-016"),
		g("max_input_bytes above the parent's", `{"max_input_bytes":16385}`, fail("AttenuationWidensLimits"), flags("Widening", "Boundary"), "MAN-016"),
		g("max_output_bytes above the parent's", `{"max_output_bytes":4294967295}`, fail("AttenuationWidensLimits"), flags("Widening"), "MAN-016"),
		g("max_compensations above the parent's", `{"max_compensations":3}`, fail("AttenuationWidensLimits"), flags("Widening"), "MAN-016"),
		g("a zero limit is reported before a widened one", `{"max_calls":0,"max_input_bytes":99999999}`, fail("InvalidGrant"), flags("CheckOrder"), "MAN-015", "MAN-016"),
		g("a widened limit is reported before expanded resources", `{"max_calls":9,"resources":[{"kind":"secret","id":"other"}]}`, fail("AttenuationWidensLimits"), flags("CheckOrder", "Widening"), "MAN-016", "MAN-017"),
		g("an explicitly empty resource set", `{"resources":[]}`, out(grantJSON("release.publish", "json", 4, 16384, 65536, 2, "")), flags("EmptySet"), "MAN-017", "MAN-010"),
		g("a subset of the resources", `{"resources":[{"kind":"secret","id":"release-token"}]}`, out(grantJSON("release.publish", "json", 4, 16384, 65536, 2, `{"kind":"secret","id":"release-token"}`)), flags(), "MAN-017"),
		g("repeated selectors in the attenuation are deduplicated", `{"resources":[{"kind":"secret","id":"release-token"},{"kind":"file_root","id":"aa"},{"kind":"secret","id":"release-token"}]}`,
			out(grantJSON("release.publish", "json", 4, 16384, 65536, 2, `{"kind":"file_root","id":"aa"},{"kind":"secret","id":"release-token"}`)), flags("Dedup"), "MAN-017", "ENC-048"),
		g("a resource the parent lacks", `{"resources":[{"kind":"secret","id":"other"}]}`, fail("AttenuationExpandsResources"), flags("Widening"), "MAN-017"),
		g("the same id under another kind is another resource", `{"resources":[{"kind":"file_root","id":"release-token"}]}`, fail("AttenuationExpandsResources"), flags("Widening"), "MAN-017", "MSG-007"),
		g("an invalid selector id is not a subset (the subset check comes first)", `{"resources":[{"kind":"secret","id":"BAD"}]}`, fail("AttenuationExpandsResources"), flags("CheckOrder"), "MAN-017", "MAN-018"),
		g("null fields mean absent", `{"max_calls":null,"resources":null}`, out(attGrant), flags("NullField", "Identity"), "ENC-047", "MAN-010"),
		g("unknown attenuation members are ignored", `{"max_calls":1,"scope":"x"}`, out(grantJSON("release.publish", "json", 1, 16384, 65536, 2, res)), flags("UnknownField"), "MSG-021"),
		g("a negative limit does not decode", `{"max_calls":-1}`, fail("Serialization"), flags("IntegerField"), "ENC-042"),
		gp("an invalid parent is rejected first", rep(attGrant, `"max_calls":4`, `"max_calls":0`), `{}`, fail("InvalidGrant"), flags("CheckOrder"), "MAN-013", "MAN-005"),
		gp("a parent with an invalid tool name", rep(attGrant, "release.publish", "Release"), `{"max_calls":1}`, fail("InvalidToken"), flags("Token", "CheckOrder"), "MAN-013"),
		gp("resources of the parent are normalized before the subset check", grantJSON("b.tool", "json", 5, 1000, 2000, 1, `{"kind":"secret","id":"k"},{"kind":"executable","id":"x"},{"kind":"secret","id":"k"}`),
			`{"resources":[{"kind":"secret","id":"k"}]}`, out(grantJSON("b.tool", "json", 5, 1000, 2000, 1, `{"kind":"secret","id":"k"}`)), flags("Dedup"), "MAN-017"),

		m("empty attenuation returns the manifest unchanged", `{"grants":{}}`, out(manifestJSON(sessionOne, attA, attBNorm, attC)), flags("Identity"), "MAN-028", "MAN-011"),
		m("grants member may be missing", `{}`, out(manifestJSON(sessionOne, attA, attBNorm, attC)), flags("Identity", "DefaultField"), "MAN-011", "ENC-046"),
		m("keep one tool", `{"allowed_tools":["b.tool"],"grants":{}}`, out(manifestJSON(sessionOne, attBNorm)), flags(), "MAN-022", "MAN-027"),
		m("kept tools stay in the parent's order", `{"allowed_tools":["c.tool","a.tool"],"grants":{}}`, out(manifestJSON(sessionOne, attA, attC)), flags(), "MAN-022", "MAN-009"),
		m("an empty allowed_tools gives a manifest without grants", `{"allowed_tools":[],"grants":{}}`, out(manifestJSON(sessionOne)), flags("EmptySet"), "MAN-022", "MAN-008"),
		m("repeated allowed tools are deduplicated", `{"allowed_tools":["a.tool","a.tool"],"grants":{}}`, out(manifestJSON(sessionOne, attA)), flags("Dedup"), "MAN-022", "ENC-048"),
		m("restrict one kept grant", `{"grants":{"a.tool":{"max_calls":1}}}`, out(manifestJSON(sessionOne, grantJSON("a.tool", "text", 1, 100, 200, 0, ""), attBNorm, attC)), flags(), "MAN-023"),
		m("restrict and drop", `{"allowed_tools":["b.tool"],"grants":{"b.tool":{"resources":[{"kind":"secret","id":"k"}],"max_compensations":0}}}`,
			out(manifestJSON(sessionOne, grantJSON("b.tool", "json", 5, 1000, 2000, 0, `{"kind":"secret","id":"k"}`))), flags(), "MAN-022", "MAN-023", "MAN-027"),
		m("allowed tool not in the manifest", `{"allowed_tools":["x.tool"],"grants":{}}`, fail("UnknownTool"), flags(), "MAN-021"),
		m("allowed tool that is not a token", `{"allowed_tools":["A Tool"],"grants":{}}`, fail("InvalidToken"), flags("Token"), "MAN-021", "MSG-003"),
		m("allowed tools are checked in sorted order: Z.tool sorts before a.tool", `{"allowed_tools":["a.tool","x.tool","Z.tool"],"grants":{}}`, fail("InvalidToken"), flags("CheckOrder", "Token"), "MAN-021"),
		m("allowed tools are checked in sorted order: the unknown one first", `{"allowed_tools":["z.tool","a.tool","zz tool"],"grants":{}}`, fail("UnknownTool"), flags("CheckOrder"), "MAN-021"),
		m("restriction for a tool not in the manifest", `{"grants":{"x.tool":{}}}`, fail("UnknownTool"), flags(), "MAN-020"),
		m("restriction keys are not token-checked, only looked up", `{"grants":{"Bad Tool":{}}}`, fail("UnknownTool"), flags("CheckOrder"), "MAN-020"),
		m("restriction keys are checked before allowed_tools", `{"allowed_tools":["Bad Tool"],"grants":{"x.tool":{}}}`, fail("UnknownTool"), flags("CheckOrder"), "MAN-020", "MAN-021"),
		m("widening restriction of a kept tool", `{"grants":{"a.tool":{"max_calls":99}}}`, fail("AttenuationWidensLimits"), flags("Widening"), "MAN-023", "MAN-016"),
		m("widening restriction of a dropped tool is ignored", `{"allowed_tools":["a.tool"],"grants":{"b.tool":{"max_calls":99,"resources":[{"kind":"secret","id":"new"}]}}}`,
			out(manifestJSON(sessionOne, attA)), flags("DroppedTool", "Widening"), "MAN-024", "MAN-027"),
		m("restriction of a dropped tool must still name an existing tool", `{"allowed_tools":["a.tool"],"grants":{"zz.tool":{}}}`, fail("UnknownTool"), flags("DroppedTool"), "MAN-020", "MAN-024"),
		m("the first failing grant in manifest order decides (zero limit first)", `{"grants":{"c.tool":{"max_calls":99},"a.tool":{"max_calls":0}}}`, fail("InvalidGrant"), flags("CheckOrder"), "MAN-023"),
		m("the first failing grant in manifest order decides (widening first)", `{"grants":{"c.tool":{"max_calls":0},"a.tool":{"max_calls":99}}}`, fail("AttenuationWidensLimits"), flags("CheckOrder"), "MAN-023"),
		m("a repeated restriction key keeps the last value", `{"grants":{"a.tool":{"max_calls":99},"a.tool":{"max_calls":2}}}`, out(manifestJSON(sessionOne, grantJSON("a.tool", "text", 2, 100, 200, 0, ""), attBNorm, attC)), flags("DuplicateKey"), "ENC-048"),
		mp("an invalid parent manifest is rejected first", rep(attManifest, `:5,`, `:4,`), `{"grants":{"x.tool":{}}}`, fail("UnsupportedVersion"), flags("CheckOrder", "Version"), "MAN-019"),
		mp("a parent with a duplicate grant", manifestJSON(sessionOne, attA, attA), `{}`, fail("DuplicateGrant"), flags("CheckOrder"), "MAN-019", "MAN-007"),
		mp("attenuating a zero-grant manifest", manifestJSON(sessionOne), `{"allowed_tools":[],"grants":{}}`, out(manifestJSON(sessionOne)), flags("EmptySet"), "MAN-022", "MAN-025"),
		// Appended rows (tcIds are permanent: add new rows only here, at the end).
		gp("attenuating an attenuated grant again narrows further", grantJSON("release.publish", "json", 1, 16384, 65536, 2, res), `{"max_calls":1,"max_compensations":1,"resources":[{"kind":"file_root","id":"aa"}]}`,
			out(grantJSON("release.publish", "json", 1, 16384, 65536, 1, `{"kind":"file_root","id":"aa"}`)), flags(), "MAN-029", "MAN-026"),
		gp("a second attenuation cannot restore what the first removed", grantJSON("release.publish", "json", 1, 16384, 65536, 2, res), `{"max_calls":4}`,
			fail("AttenuationWidensLimits"), flags("Widening"), "MAN-029", "MAN-016"),
		mp("attenuating an attenuated manifest again", manifestJSON(sessionOne, attBNorm), `{"allowed_tools":["a.tool"],"grants":{}}`, fail("UnknownTool"), flags(), "MAN-029", "MAN-021"),
	}
}

// ---- fingerprints.json ----

// fpCase is a canonical-input row (payload; expected canonical JSON or text per mode) or a
// grant row (grant; expected canonical grant encoding).
type fpCase struct {
	meta
	grant          bool
	input          string
	format         string // "text" or "json" for payload rows
	preserve       expect // out: canonical JSON text (json) or the text (text)
	lossy          expect
	recordedFP     string
	recordedPrefix string
}

const recordedDispatchPayload = "{\"format\":\"json\",\"value\":{\"\":true,\"B\":null,\"a\":[1e+16,100,-0.0,1.5e-7,18446744073709551615,-42],\"z\":0.1,\"é\":\"\\u0001\x7f/<>\"}}"

func fingerprintCases() []fpCase {
	pl := func(comment, format, payload string, pres, lossy expect, f []string, r ...string) fpCase {
		return fpCase{meta: meta{comment, f, r}, input: payload, format: format, preserve: pres, lossy: lossy}
	}
	gr := func(comment, grant string, exp expect, f []string, r ...string) fpCase {
		return fpCase{meta: meta{comment, f, r}, grant: true, input: grant, preserve: exp}
	}
	recordedValue := "{\"\":true,\"B\":null,\"a\":[1e+16,100,-0.0,1.5e-7,18446744073709551615,-42],\"z\":0.1,\"é\":\"\\u0001\x7f/<>\"}"
	cs := []fpCase{
		{meta: meta{"reference anchor A6: text héllo", flags("ReferenceAnchor", "TextPayload"), reqs("FP-002")}, input: `{"format":"text","value":"héllo"}`, format: "text", preserve: out("héllo"), recordedPrefix: "74657874000000000000000668c3a96c6c6f"},
		{meta: meta{"reference anchor A7: nested object", flags("ReferenceAnchor", "JSONPayload", "KeyOrder"), reqs("FP-003", "FP-004", "FP-007", "FP-008")}, input: `{"format":"json","value":{"b":[1,{"z":1,"a":"x"}],"a":null,"B":true}}`, format: "json",
			preserve: out(`{"B":true,"a":null,"b":[1,{"a":"x","z":1}]}`), recordedFP: "47a67a884b85e9385cedfd6cb717c9ff4f361ac2fee1f2085096df0902e4936d", recordedPrefix: "6a736f6e000000000000002b"},
		{meta: meta{"reference anchor A7: compensation input", flags("ReferenceAnchor", "JSONPayload"), reqs("FP-007", "FP-008")}, input: `{"format":"json","value":{"undo":"release"}}`, format: "json",
			preserve: out(`{"undo":"release"}`), recordedFP: "5cc121e4a0ce2f79ae6b83397eb4f81a66bf12a9b1fe5836835a8118de24d578"},
		{meta: meta{"reference anchor A4: dispatch payload of 97 canonical bytes, identical in both modes", flags("ReferenceAnchor", "JSONPayload", "FloatLayout", "StringEscape"), reqs("FP-003", "FP-012", "ENC-006", "ENC-007")}, input: recordedDispatchPayload, format: "json",
			preserve: out(recordedValue), recordedFP: "0863df8e1f3ba253e930752934309d977cdd44d9641dbfdfbed5f1267ea0995b", recordedPrefix: "6a736f6e0000000000000061"},
		pl("the same value spelled with whitespace, another key order and a duplicate", "json", "{ \"value\" : {\"B\":false,\"a\":null,\"b\":[1,{\"a\":\"x\",\"z\":1}],\"B\":true}, \"format\" : \"json\" }",
			out(`{"B":true,"a":null,"b":[1,{"a":"x","z":1}]}`), same, flags("JSONPayload", "DuplicateKey", "Whitespace"), "FP-005"),
		pl("empty text", "text", `{"format":"text","value":""}`, out(""), same, flags("TextPayload", "Boundary"), "FP-002"),
		pl("text with escapes is hashed as decoded bytes", "text", `{"format":"text","value":"a\"b\n\u00e9"}`, out("a\"b\né"), same, flags("TextPayload", "StringEscape"), "FP-002", "FP-006"),
		pl("text é😀 is 6 bytes", "text", `{"format":"text","value":"é😀"}`, out("é😀"), same, flags("TextPayload", "Unicode"), "FP-002", "MSG-013"),
		pl("text is not normalized", "text", "{\"format\":\"text\",\"value\":\" e\u0301 \\r\\n\"}", out(" e\u0301 \r\n"), same, flags("TextPayload", "Unicode"), "FP-006"),
		pl("text 1 and json [1] differ", "text", `{"format":"text","value":"[1]"}`, out("[1]"), same, flags("TextPayload"), "FP-010"),
		pl("json [1]", "json", `{"format":"json","value":[1]}`, out("[1]"), same, flags("JSONPayload"), "FP-010"),
		pl("json [1.0] differs from [1] in both modes", "json", `{"format":"json","value":[1.0]}`, out("[1.0]"), same, flags("JSONPayload", "Float"), "FP-010"),
		pl("empty array", "json", `{"format":"json","value":[]}`, out("[]"), same, flags("JSONPayload"), "FP-003"),
		pl("empty object", "json", `{"format":"json","value":{}}`, out("{}"), same, flags("JSONPayload"), "FP-003"),
		pl("payload in positional form", "json", `["json",{"k":"v"}]`, out(`{"k":"v"}`), same, flags("JSONPayload", "PositionalArray"), "FP-005", "ENC-049"),
		pl("scalar json payload", "json", `{"format":"json","value":5}`, fail("InvalidJsonEnvelope"), same, flags("PayloadEnvelope"), "FP-001", "FP-009"),
		pl("null json payload", "json", `{"format":"json","value":null}`, fail("InvalidJsonEnvelope"), same, flags("PayloadEnvelope", "NullField"), "FP-001"),
		pl("string json payload", "json", `{"format":"json","value":"text"}`, fail("InvalidJsonEnvelope"), same, flags("PayloadEnvelope"), "FP-001"),
		pl("31 nested arrays around a number", "json", `{"format":"json","value":`+nest(31, "[", "]", "0")+`}`, out(nest(31, "[", "]", "0")), same, flags("PayloadDepth", "Boundary"), "FP-001", "MSG-036"),
		pl("32 nested arrays around a number", "json", `{"format":"json","value":`+nest(32, "[", "]", "0")+`}`, fail("JsonPayloadTooDeep"), same, flags("PayloadDepth", "Boundary"), "FP-001", "FP-009"),
		pl("text payload whose value is not a string", "text", `{"format":"text","value":1}`, fail("Serialization"), same, flags("Validation"), "MSG-010"),
		pl("1.50 and 1.5: distinct in preserve mode, equal in lossy mode", "json", `{"format":"json","value":{"n":1.50}}`, out(`{"n":1.50}`), out(`{"n":1.5}`), flags("JSONPayload", "ModeDependent", "TrailingZeros"), "FP-011", "FP-013"),
		pl("1.5", "json", `{"format":"json","value":{"n":1.5}}`, out(`{"n":1.5}`), same, flags("JSONPayload", "Float"), "FP-011", "FP-012"),
		pl("1e2 and 100.0", "json", `{"format":"json","value":{"n":1e2}}`, out(`{"n":1e+2}`), out(`{"n":100.0}`), flags("JSONPayload", "ModeDependent", "Exponent"), "FP-011", "FP-013"),
		pl("100.0", "json", `{"format":"json","value":{"n":100.0}}`, out(`{"n":100.0}`), same, flags("JSONPayload", "Float"), "FP-011"),
		pl("-0 is 0 in preserve mode and -0.0 in lossy mode", "json", `{"format":"json","value":{"n":-0}}`, out(`{"n":0}`), out(`{"n":-0.0}`), flags("JSONPayload", "ModeDependent", "NegativeZero"), "FP-011", "FP-013"),
		pl("a big integer", "json", `{"format":"json","value":[18446744073709551616]}`, out(`[18446744073709551616]`), out(`[1.8446744073709552e+19]`), flags("JSONPayload", "ModeDependent", "BigInteger"), "FP-013"),
		pl("1e400 cannot be fingerprinted in lossy mode", "json", `{"format":"json","value":[1e400]}`, out(`[1e+400]`), fail("Serialization"), flags("JSONPayload", "ModeDependent", "OutOfRange"), "FP-013", "ENC-031"),

		{meta: meta{"reference anchor A5: release.publish grant", flags("ReferenceAnchor"), reqs("FP-016", "FP-017", "FP-019")}, grant: true, input: gRelease, preserve: out(gRelease),
			recordedFP: "b4586b43cee35f3490e1be033cf424c5d927417c4e5af7cd685123764a8c8be9"},
		gr("resources given unsorted and repeated give the same fingerprint", gReleaseShuffled, out(gRelease), flags("Dedup"), "FP-016", "ENC-004"),
		gr("unknown members do not enter the fingerprint", rep(gRelease, `"max_calls"`, `"label":"x","max_calls"`), out(gRelease), flags("UnknownField"), "FP-016"),
		gr("another tool", rep(gRelease, "release.publish", "release.publish2"), out(rep(gRelease, "release.publish", "release.publish2")), flags("GrantFields"), "FP-018"),
		gr("another format", rep(gRelease, `"json"`, `"text"`), out(rep(gRelease, `"json"`, `"text"`)), flags("GrantFields"), "FP-018"),
		gr("another max_calls", rep(gRelease, `"max_calls":1`, `"max_calls":2`), out(rep(gRelease, `"max_calls":1`, `"max_calls":2`)), flags("GrantFields"), "FP-018"),
		gr("another max_input_bytes", rep(gRelease, `16384`, `16383`), out(rep(gRelease, `16384`, `16383`)), flags("GrantFields"), "FP-018"),
		gr("another max_output_bytes", rep(gRelease, `65536`, `65535`), out(rep(gRelease, `65536`, `65535`)), flags("GrantFields"), "FP-018"),
		gr("another max_compensations", rep(gRelease, `"max_compensations":1`, `"max_compensations":2`), out(rep(gRelease, `"max_compensations":1`, `"max_compensations":2`)), flags("GrantFields"), "FP-018"),
		gr("one resource fewer", rep(gRelease, `{"kind":"file_root","id":"zz"},`, ``), out(rep(gRelease, `{"kind":"file_root","id":"zz"},`, ``)), flags("GrantFields"), "FP-018"),
		gr("max_compensations 0 is written and hashed", gEcho, out(gEcho), flags("GrantFields"), "FP-016", "MAN-004"),
		gr("missing defaulted members hash like their defaults", `{"tool":"text.echo","format":"text","max_calls":1,"max_input_bytes":16384,"max_output_bytes":65536}`, out(gEcho), flags("DefaultField"), "FP-016", "ENC-046"),
		gr("an invalid grant has no fingerprint", rep(gRelease, `"max_calls":1`, `"max_calls":0`), fail("InvalidGrant"), flags("Validation"), "FP-015", "MAN-005"),
		gr("a grant with an invalid tool has no fingerprint", rep(gRelease, "release.publish", "Release"), fail("InvalidToken"), flags("Token"), "FP-015"),
		gr("a grant with 65 resources has no fingerprint", grantJSON("files.read", "text", 1, 1, 1, 1, selectors("file_root", "r", 65)), fail("TooManyResources"), flags("Limit"), "FP-015", "MAN-003"),
	}
	return cs
}
