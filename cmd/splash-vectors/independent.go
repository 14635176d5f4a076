package main

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"

	"lukechampine.com/blake3"
)

// This file computes expected bytes directly from the byte layouts of the specification,
// with the general-purpose BLAKE3 package rather than the implementation's own hasher, so
// that frame tags, frame lines, bootstrap bytes and fingerprints in the vectors do not come
// from the code under test.

// Fixed test keys. They are public test constants, never used for real sessions.
var (
	key07 = fill32(0x07)
	key08 = fill32(0x08)
	keyAB = fill32(0xab)
)

func fill32(b byte) [32]byte {
	var k [32]byte
	for i := range k {
		k[i] = b
	}
	return k
}

// indTagInput assembles the tag input of FRM-007 around an already canonical message.
// sessionID must be an identifier token (it is written without escaping).
func indTagInput(sender string, seq uint64, sessionID, canonicalMessage string) string {
	return `{"domain":"splash-worker-auth-v5","protocol_version":5,"sender":"` + sender +
		`","sequence":` + strconv.FormatUint(seq, 10) + `,"session_id":"` + sessionID +
		`","message":` + canonicalMessage + `}`
}

// indTag is the lowercase hex BLAKE3 keyed hash of data under key.
func indTag(key [32]byte, data string) string {
	h := blake3.New(32, key[:])
	h.Write([]byte(data))
	return hex.EncodeToString(h.Sum(nil))
}

// indLine assembles a canonical frame line (FRM-001).
func indLine(seq uint64, canonicalMessage, tagHex string) string {
	return `{"sequence":` + strconv.FormatUint(seq, 10) + `,"message":` + canonicalMessage + `,"auth_tag":"` + tagHex + `"}`
}

// sealed is an independently computed frame.
type sealed struct {
	seq      uint64
	tagInput string
	tag      string
	line     string
}

func indSeal(key [32]byte, sender string, seq uint64, sessionID, canonicalMessage string) sealed {
	in := indTagInput(sender, seq, sessionID, canonicalMessage)
	t := indTag(key, in)
	return sealed{seq: seq, tagInput: in, tag: t, line: indLine(seq, canonicalMessage, t)}
}

// indCanonicalInput is FP-002/FP-003: format name, u64be length, bytes.
func indCanonicalInput(format, canonical string) []byte {
	out := []byte(format)
	out = binary.BigEndian.AppendUint64(out, uint64(len(canonical)))
	return append(out, canonical...)
}

// indInputFingerprint is FP-007.
func indInputFingerprint(canonicalInput []byte) string {
	sum := blake3.Sum256(append([]byte("splash-worker-operation-input-v1"), canonicalInput...))
	return hex.EncodeToString(sum[:])
}

// indGrantFingerprint is FP-016 over an already canonical grant encoding.
func indGrantFingerprint(canonicalGrant string) string {
	data := []byte("splash-compensation-grant-v1")
	data = binary.BigEndian.AppendUint64(data, uint64(len(canonicalGrant)))
	data = append(data, canonicalGrant...)
	sum := blake3.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// indBootstrap is BOOT-001.
func indBootstrap(sessionID string, key [32]byte) []byte {
	out := append([]byte("SPLPBOOT"), 1, byte(len(sessionID)))
	out = append(out, sessionID...)
	return append(out, key[:]...)
}

// indMessageInfo reads the type and session id of a canonical message with the standard
// library (MSG-028), independently of the implementation's decoder.
func indMessageInfo(canonical string) (typ, session string, ok bool) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(canonical), &m); err != nil {
		return "", "", false
	}
	if err := json.Unmarshal(m["type"], &typ); err != nil {
		return "", "", false
	}
	var body map[string]json.RawMessage
	switch typ {
	case "close_session":
		body = m
	case "open_session":
		if json.Unmarshal(m["manifest"], &body) != nil {
			return "", "", false
		}
	default:
		for _, k := range []string{"invocation", "request", "result"} {
			if raw, found := m[k]; found {
				if json.Unmarshal(raw, &body) != nil {
					return "", "", false
				}
			}
		}
	}
	if err := json.Unmarshal(body["session_id"], &session); err != nil {
		return "", "", false
	}
	return typ, session, true
}

// roleName returns the role that normally sends a message kind (host when host is set).
func roleName(host bool) string {
	if host {
		return "host"
	}
	return "worker"
}

func otherRole(r string) string {
	if r == "host" {
		return "worker"
	}
	return "host"
}

// hexNext returns the lowercase hex digit after c (cyclically).
func hexNext(c byte) byte {
	const digits = "0123456789abcdef"
	i := strings.IndexByte(digits, c)
	return digits[(i+1)%16]
}
