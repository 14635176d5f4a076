package main

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"strings"

	"lukechampine.com/blake3"
)

// This file lays out the expected bytes of the worker-side files directly from the
// specification: journal JSON (JRN-001, JRN-002), storage record tags (STO-012) and envelopes
// (STO-010, STO-011). Like independent.go it uses a general-purpose BLAKE3 package and never
// the implementation's own code.

// ---- journal JSON (JRN-001) ----

// jComp is a compensation record written by hand in a case table.
type jComp struct {
	key, inputFP, grantFP, state string
}

// jRec is a journal record written by hand in a case table; state is the state object's
// JSON text and comp is nil when the record has no compensation.
type jRec struct {
	tool, key, inputFP, state string
	comp                      *jComp
}

// indRecordJSON writes one record with the fields in the order of JRN-001.
func indRecordJSON(r jRec) string {
	var b strings.Builder
	b.WriteString(`{"tool":"` + r.tool + `","operation_key":"` + r.key + `","input_fingerprint":"` + r.inputFP + `","state":` + r.state + `,"compensation":`)
	if r.comp == nil {
		b.WriteString("null")
	} else {
		c := r.comp
		b.WriteString(`{"compensation_key":"` + c.key + `","input_fingerprint":"` + c.inputFP + `","grant_fingerprint":"` + c.grantFP + `","state":` + c.state + `}`)
	}
	b.WriteString("}")
	return b.String()
}

// indJournalJSON writes a journal (format version 2) for scope with the records in order.
// Tools, keys, scopes and fingerprints in the case tables are tokens or hex and need no
// escaping.
func indJournalJSON(scope string, recs ...jRec) string {
	parts := make([]string, len(recs))
	for i, r := range recs {
		parts[i] = indRecordJSON(r)
	}
	return `{"format_version":2,"scope":"` + scope + `","records":[` + strings.Join(parts, ",") + `]}`
}

// ---- storage records (STO-010 to STO-012) ----

// storageDomain is the tag domain of STO-012 (no length prefix).
const storageDomain = "splash-storage-record-v1"

func lp(b []byte) []byte {
	out := binary.BigEndian.AppendUint64(nil, uint64(len(b)))
	return append(out, b...)
}

// indStorageTag is STO-012: keyed BLAKE3 over the domain, the format version byte,
// lp(namespace), lp(name), lp(key id), u64be(revision) and lp(payload).
func indStorageTag(key [32]byte, namespace, name, keyID string, revision uint64, payload []byte) string {
	data := []byte(storageDomain)
	data = append(data, 1)
	data = append(data, lp([]byte(namespace))...)
	data = append(data, lp([]byte(name))...)
	data = append(data, lp([]byte(keyID))...)
	data = binary.BigEndian.AppendUint64(data, revision)
	data = append(data, lp(payload)...)
	h := blake3.New(32, key[:])
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// indEnvelope is STO-010 and STO-011: the five fields in order, the payload in unpadded
// standard base64.
func indEnvelope(keyID string, revision uint64, payload []byte, tagHex string) string {
	return `{"format_version":1,"key_id":"` + keyID + `","revision":` + strconv.FormatUint(revision, 10) +
		`,"payload":"` + base64.RawStdEncoding.EncodeToString(payload) + `","auth_tag":"` + tagHex + `"}`
}
