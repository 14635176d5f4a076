package main

import (
	"strings"
)

// Recorded verbatim from the Rust reference (reference anchor A10, docs/reference-anchors.md).
const recordedEnvelopeA10 = `{"format_version":1,"key_id":"storage-v1","revision":1,"payload":"aGVsbG8","auth_tag":"364a8f1bc9e6cdeca3b4612a14dc81029d96c050c62886c46140a43b7776eecd"}`

// storageKeyRow is a verification key of an open row's keyring.
type storageKeyRow struct {
	id  string
	key [32]byte
}

// stoCase is a seal row (payload in) or an open row (envelope in). Every row names the
// keyring's active key and the record key.
type stoCase struct {
	meta
	open      bool
	key       [32]byte
	keyID     string
	namespace string
	name      string

	// Seal input; for a valid open row, the expected revision and payload.
	revision uint64
	payload  []byte
	// b64, when set, is the payload text the envelope must carry, written by hand.
	b64 string
	// recordedEnvelope, when set, is the envelope recorded from the reference.
	recordedEnvelope string

	// Open input.
	envelope  []byte
	recordRev uint64
	floor     uint64
	readKeys  []storageKeyRow
	// openedKeyID is the key id a valid open row loads.
	openedKeyID string

	err string
}

const (
	stoNS   = "worker-journal"
	stoName = "tenant-release"
	stoKID  = "storage-v1"
)

// stoEnvelope seals payload independently (STO-010 to STO-012) under key and keyID for the
// default record key.
func stoEnvelope(key [32]byte, keyID string, revision uint64, payload []byte) string {
	return indEnvelope(keyID, revision, payload, indStorageTag(key, stoNS, stoName, keyID, revision, payload))
}

func storageCases() []stoCase {
	var cs []stoCase
	seal := func(comment string, f, r []string, keyID, ns, name string, revision uint64, payload []byte, b64 string) {
		cs = append(cs, stoCase{meta: meta{comment, f, r}, key: key07, keyID: keyID, namespace: ns, name: name, revision: revision, payload: payload, b64: b64})
	}
	sealErr := func(comment string, f, r []string, keyID, ns, name string, payload []byte, kind string) {
		cs = append(cs, stoCase{meta: meta{comment, f, r}, key: key07, keyID: keyID, namespace: ns, name: name, revision: 1, payload: payload, err: kind})
	}
	zero := [32]byte{}
	hello := []byte("hello")

	// ---- sealing (STO-010 to STO-012) ----
	cs = append(cs, stoCase{meta: meta{"reference anchor A10", flags("ReferenceAnchor", "StorageSeal"), reqs("STO-010", "STO-011", "STO-012")},
		key: key07, keyID: stoKID, namespace: stoNS, name: stoName, revision: 1, payload: hello, b64: "aGVsbG8", recordedEnvelope: recordedEnvelopeA10})
	seal("empty payload", flags("StorageSeal", "Base64"), reqs("STO-010", "STO-011"), stoKID, stoNS, stoName, 1, []byte{}, "")
	seal("one-byte payload: two base64 digits, no padding", flags("StorageSeal", "Base64"), reqs("STO-011"), stoKID, stoNS, stoName, 1, []byte("a"), "YQ")
	seal("two-byte payload: three base64 digits, no padding", flags("StorageSeal", "Base64"), reqs("STO-011"), stoKID, stoNS, stoName, 1, []byte("ab"), "YWI")
	seal("three-byte payload: four base64 digits", flags("StorageSeal", "Base64"), reqs("STO-011"), stoKID, stoNS, stoName, 1, []byte("abc"), "YWJj")
	seal("binary payload using both extra characters of the standard alphabet", flags("StorageSeal", "Base64"), reqs("STO-011", "STO-012"),
		stoKID, stoNS, stoName, 7, []byte{0xfb, 0xff, 0xbf}, "+/+/")
	seal("the largest revision", flags("StorageSeal", "Boundary"), reqs("STO-010", "STO-012"), stoKID, stoNS, stoName, 18446744073709551615, hello, "aGVsbG8")
	cs = append(cs, stoCase{meta: meta{"the all-zero storage key is accepted", flags("StorageSeal", "ZeroKey"), reqs("STO-003", "STO-012")},
		key: zero, keyID: stoKID, namespace: stoNS, name: stoName, revision: 1, payload: hello, b64: "aGVsbG8"})
	seal("a 64-byte key id", flags("StorageSeal", "KeyId", "Boundary"), reqs("STO-002", "STO-012"), strings.Repeat("k", 64), stoNS, stoName, 1, hello, "aGVsbG8")
	seal("a 64-byte namespace and a 128-byte name", flags("StorageSeal", "RecordKey", "Boundary"), reqs("STO-001", "STO-012"),
		stoKID, strings.Repeat("n", 64), strings.Repeat("m", 128), 1, hello, "aGVsbG8")
	seal("punctuation-only record key and key id", flags("StorageSeal", "RecordKey", "KeyId"), reqs("STO-001", "STO-002"), "-", ".", "_", 1, hello, "aGVsbG8")
	seal("a journal as payload", flags("StorageSeal"), reqs("STO-010", "STO-012"), stoKID, stoNS, stoName, 3, []byte(recordedJournalA8), "")
	seal("a payload of exactly 262,144 bytes", flags("StorageSeal", "Boundary", "LargeInput"), reqs("STO-016"), stoKID, stoNS, stoName, 1, make([]byte, 262144), "")
	sealErr("a payload of 262,145 bytes", flags("StorageSeal", "Boundary", "LargeInput"), reqs("STO-016", "STO-070"), stoKID, stoNS, stoName, make([]byte, 262145), "PayloadTooLarge")
	sealErr("a 65-byte key id", flags("StorageSeal", "KeyId", "Boundary"), reqs("STO-002", "STO-070"), strings.Repeat("k", 65), stoNS, stoName, hello, "Invalid")
	sealErr("a key id with a capital letter", flags("StorageSeal", "KeyId"), reqs("STO-002"), "Storage-v1", stoNS, stoName, hello, "Invalid")
	sealErr("a 65-byte namespace", flags("StorageSeal", "RecordKey", "Boundary"), reqs("STO-001", "STO-070"), stoKID, strings.Repeat("n", 65), stoName, hello, "InvalidNamespace")
	sealErr("an empty namespace", flags("StorageSeal", "RecordKey"), reqs("STO-001"), stoKID, "", stoName, hello, "InvalidNamespace")
	sealErr("a 129-byte name", flags("StorageSeal", "RecordKey", "Boundary"), reqs("STO-001"), stoKID, stoNS, strings.Repeat("m", 129), hello, "InvalidName")
	sealErr("a name with a slash", flags("StorageSeal", "RecordKey"), reqs("STO-001"), stoKID, stoNS, "tenant/release", hello, "InvalidName")
	sealErr("an invalid namespace and an invalid name: the namespace comes first", flags("StorageSeal", "RecordKey", "CheckOrder"), reqs("STO-001"),
		stoKID, "Worker", "Tenant", hello, "InvalidNamespace")

	// ---- opening (STO-040 to STO-048) ----
	a10 := recordedEnvelopeA10
	a10Tag := "364a8f1bc9e6cdeca3b4612a14dc81029d96c050c62886c46140a43b7776eecd"
	openOK := func(comment string, f, r []string, envelope string, rev uint64, payload []byte) {
		cs = append(cs, stoCase{meta: meta{comment, f, r}, open: true, key: key07, keyID: stoKID, namespace: stoNS, name: stoName,
			envelope: []byte(envelope), recordRev: rev, floor: rev, revision: rev, payload: payload, openedKeyID: stoKID})
	}
	openErr := func(comment string, f, r []string, envelope string, kind string) {
		cs = append(cs, stoCase{meta: meta{comment, f, r}, open: true, key: key07, keyID: stoKID, namespace: stoNS, name: stoName,
			envelope: []byte(envelope), recordRev: 1, floor: 1, err: kind})
	}
	openOK("reference anchor A10 opens", flags("ReferenceAnchor", "StorageOpen"), reqs("STO-048", "STO-010"), a10, 1, hello)
	openOK("whitespace of all four kinds around and between tokens", flags("StorageOpen", "EnvelopeShape", "Whitespace"), reqs("STO-014"),
		" {\"format_version\" :\t1,\n\"key_id\":\"storage-v1\" ,\r\"revision\":1,\"payload\":\"aGVsbG8\",\"auth_tag\":\""+a10Tag+"\"} \n", 1, hello)
	openOK("members in another order", flags("StorageOpen", "EnvelopeShape", "KeyOrder"), reqs("STO-014"),
		`{"auth_tag":"`+a10Tag+`","payload":"aGVsbG8","revision":1,"key_id":"storage-v1","format_version":1}`, 1, hello)
	openOK("the envelope in positional-array form", flags("StorageOpen", "EnvelopeShape", "PositionalArray"), reqs("STO-014"),
		`[1,"storage-v1",1,"aGVsbG8","`+a10Tag+`"]`, 1, hello)
	openOK("an escaped member name and an escaped key id", flags("StorageOpen", "EnvelopeShape", "EscapedKey"), reqs("STO-014"),
		strings.Replace(strings.Replace(a10, `"payload"`, `"\u0070ayload"`, 1), `"storage-v1"`, `"storage\u002dv1"`, 1), 1, hello)
	openOK("revision 2 at floor 2", flags("StorageOpen"), reqs("STO-048", "STO-044"), stoEnvelope(key07, stoKID, 2, []byte("world")), 2, []byte("world"))
	openOK("the largest revision", flags("StorageOpen", "Boundary"), reqs("STO-015", "STO-048"),
		stoEnvelope(key07, stoKID, 18446744073709551615, hello), 18446744073709551615, hello)
	openOK("an empty payload", flags("StorageOpen", "Base64"), reqs("STO-046", "STO-048"), stoEnvelope(key07, stoKID, 1, nil), 1, []byte{})
	openOK("a binary payload", flags("StorageOpen", "Base64"), reqs("STO-046", "STO-048"), stoEnvelope(key07, stoKID, 1, []byte{0xfb, 0xff, 0xbf}), 1, []byte{0xfb, 0xff, 0xbf})
	cs = append(cs, stoCase{meta: meta{"a record sealed under a verification-only key of the keyring", flags("StorageOpen", "KeyRotation"), reqs("STO-005", "STO-055", "STO-047")},
		open: true, key: key07, keyID: stoKID, namespace: stoNS, name: stoName, readKeys: []storageKeyRow{{"storage-v0", key08}},
		envelope: []byte(stoEnvelope(key08, "storage-v0", 1, hello)), recordRev: 1, floor: 1, revision: 1, payload: hello, openedKeyID: "storage-v0"})
	cs = append(cs, stoCase{meta: meta{"a record sealed with the all-zero key", flags("StorageOpen", "ZeroKey"), reqs("STO-003", "STO-048")},
		open: true, key: zero, keyID: stoKID, namespace: stoNS, name: stoName,
		envelope: []byte(stoEnvelope(zero, stoKID, 1, hello)), recordRev: 1, floor: 1, revision: 1, payload: hello, openedKeyID: stoKID})

	// The backend's revision against its floor (STO-040).
	snap := func(comment string, f, r []string, envelope string, rec, floor uint64, kind string) {
		cs = append(cs, stoCase{meta: meta{comment, f, r}, open: true, key: key07, keyID: stoKID, namespace: stoNS, name: stoName,
			envelope: []byte(envelope), recordRev: rec, floor: floor, err: kind})
	}
	snap("a stored record at revision 0", flags("StorageOpen", "Rollback"), reqs("STO-040"), a10, 0, 0, "InvalidRevision")
	snap("a stored record below its revision floor", flags("StorageOpen", "Rollback"), reqs("STO-040"), a10, 1, 2, "RollbackDetected")
	snap("a stored record above its revision floor", flags("StorageOpen", "Rollback"), reqs("STO-040"), stoEnvelope(key07, stoKID, 2, hello), 2, 1, "RevisionFloorMismatch")
	snap("a rolled-back record that is not even JSON: the floor is checked first", flags("StorageOpen", "Rollback", "CheckOrder"), reqs("STO-040"), "garbage", 1, 2, "RollbackDetected")

	// Size and decoding (STO-042, STO-043).
	openErr("393,217 stored bytes: the size is checked before parsing", flags("StorageOpen", "Boundary", "LargeInput", "CheckOrder"), reqs("STO-042", "STO-016", "STO-070"),
		strings.Repeat("x", 393217), "RecordTooLarge")
	openErr("393,216 stored bytes that are not JSON", flags("StorageOpen", "Boundary", "LargeInput"), reqs("STO-042", "STO-043"), strings.Repeat("x", 393216), "InvalidEnvelope")
	inv := func(comment string, f []string, envelope string, r ...string) {
		openErr(comment, append([]string{"StorageOpen", "EnvelopeShape"}, f...), append(reqs("STO-043"), r...), envelope, "InvalidEnvelope")
	}
	inv("not JSON", flags("Syntax"), `{"format_version":1,`, "STO-014")
	inv("characters after the envelope", flags("TrailingCharacters"), a10+"x", "STO-014")
	inv("a leading byte order mark", flags("ByteOrderMark"), "\ufeff"+a10, "STO-014")
	inv("a form feed as whitespace", flags("Whitespace"), "\f"+a10, "STO-014")
	inv("an unknown member", flags("DenyUnknownFields"), strings.Replace(a10, `"auth_tag"`, `"note":1,"auth_tag"`, 1), "STO-014")
	inv("a repeated member", flags("DuplicateField"), strings.Replace(a10, `"revision":1,`, `"revision":1,"revision":1,`, 1), "STO-014")
	inv("a missing member", flags("MissingField"), strings.Replace(a10, `,"auth_tag":"`+a10Tag+`"`, "", 1), "STO-014")
	inv("a member name differing in case", flags("MissingField"), strings.Replace(a10, `"payload"`, `"Payload"`, 1), "STO-014")
	inv("an array of four elements", flags("PositionalArray"), `[1,"storage-v1",1,"aGVsbG8"]`, "STO-014")
	inv("an array of six elements", flags("PositionalArray"), `[1,"storage-v1",1,"aGVsbG8","`+a10Tag+`",0]`, "STO-014")
	inv("a string instead of an object", flags("Syntax"), `"envelope"`, "STO-014")
	inv("format_version as a string", flags("IntegerField"), strings.Replace(a10, `"format_version":1`, `"format_version":"1"`, 1), "STO-015")
	inv("format_version 1.0", flags("IntegerField"), strings.Replace(a10, `"format_version":1`, `"format_version":1.0`, 1), "STO-015")
	inv("format_version 256", flags("IntegerField", "Boundary"), strings.Replace(a10, `"format_version":1`, `"format_version":256`, 1), "STO-015")
	inv("revision -1", flags("IntegerField"), strings.Replace(a10, `"revision":1`, `"revision":-1`, 1), "STO-015")
	inv("revision with a leading zero", flags("IntegerField", "NumberGrammar"), strings.Replace(a10, `"revision":1`, `"revision":01`, 1), "STO-015")
	inv("revision 1e0", flags("IntegerField"), strings.Replace(a10, `"revision":1`, `"revision":1e0`, 1), "STO-015")
	inv("revision 2^64", flags("IntegerField", "Boundary"), strings.Replace(a10, `"revision":1`, `"revision":18446744073709551616`, 1), "STO-015")
	inv("a numeric key id", flags("IntegerField"), strings.Replace(a10, `"storage-v1"`, `7`, 1), "STO-015")
	inv("a null payload", flags("NullField"), strings.Replace(a10, `"aGVsbG8"`, `null`, 1), "STO-015")
	inv("a raw control character in the payload text", flags("ControlCharacter"), strings.Replace(a10, `"aGVsbG8"`, "\"aGVs\x01bG8\"", 1), "STO-014")
	inv("a lone surrogate escape in the payload text", flags("Surrogate"), strings.Replace(a10, `"aGVsbG8"`, `"aGVs\ud800bG8"`, 1), "STO-014")
	cs = append(cs, stoCase{meta: meta{"a key id that is not UTF-8", flags("StorageOpen", "EnvelopeShape", "InvalidUtf8"), reqs("STO-043", "STO-014")},
		open: true, key: key07, keyID: stoKID, namespace: stoNS, name: stoName,
		envelope: []byte(strings.Replace(a10, `"storage-v1"`, "\"storage-\xff1\"", 1)), recordRev: 1, floor: 1, err: "InvalidEnvelope"})

	// Version, revision and key id (STO-043 to STO-045).
	openErr("format_version 2", flags("StorageOpen", "Version"), reqs("STO-043", "STO-070"), strings.Replace(a10, `"format_version":1`, `"format_version":2`, 1), "UnsupportedFormat")
	openErr("format_version 0", flags("StorageOpen", "Version"), reqs("STO-043"), strings.Replace(a10, `"format_version":1`, `"format_version":0`, 1), "UnsupportedFormat")
	openErr("format_version 2, revision 0 and a bad key id: the version comes first", flags("StorageOpen", "Version", "CheckOrder"), reqs("STO-043", "STO-044"),
		`{"format_version":2,"key_id":"Bad","revision":0,"payload":"aGVsbG8","auth_tag":"`+a10Tag+`"}`, "UnsupportedFormat")
	openErr("envelope revision 0", flags("StorageOpen", "Rollback"), reqs("STO-044", "STO-070"), strings.Replace(a10, `"revision":1`, `"revision":0`, 1), "InvalidRevision")
	openErr("envelope revision 0 and a bad key id: the revision comes first", flags("StorageOpen", "Rollback", "CheckOrder"), reqs("STO-044", "STO-045"),
		strings.Replace(strings.Replace(a10, `"revision":1`, `"revision":0`, 1), `"storage-v1"`, `"Bad"`, 1), "InvalidRevision")
	openErr("envelope revision 2 for a record the backend holds at revision 1", flags("StorageOpen", "Rollback"), reqs("STO-044"), stoEnvelope(key07, stoKID, 2, hello), "RevisionMismatch")
	openErr("a key id that is not a token", flags("StorageOpen", "KeyId"), reqs("STO-045", "STO-070"), strings.Replace(a10, `"storage-v1"`, `"Storage-V1"`, 1), "InvalidKeyId")
	openErr("a 65-byte key id", flags("StorageOpen", "KeyId", "Boundary"), reqs("STO-045", "STO-002"), strings.Replace(a10, `"storage-v1"`, `"`+strings.Repeat("k", 65)+`"`, 1), "InvalidKeyId")
	openErr("a bad key id and bad base64: the key id comes first", flags("StorageOpen", "KeyId", "CheckOrder"), reqs("STO-045", "STO-046"),
		strings.Replace(strings.Replace(a10, `"storage-v1"`, `"Bad"`, 1), `"aGVsbG8"`, `"aGVsbG8="`, 1), "InvalidKeyId")

	// Base64 (STO-046).
	b64 := func(comment, text string, f ...string) {
		openErr(comment, append([]string{"StorageOpen", "Base64"}, f...), reqs("STO-046", "STO-011"), strings.Replace(a10, `"aGVsbG8"`, `"`+text+`"`, 1), "InvalidEnvelope")
	}
	b64("payload with padding", "aGVsbG8=")
	b64("payload in the URL-safe alphabet", "-_-_")
	b64("payload with a space", "aGVs bG8")
	b64("payload with an escaped line break", `aGVs\nbG8`)
	b64("payload whose last digit has nonzero trailing bits", "aGVsbG9")
	b64("payload of five base64 digits", "aGVsb")
	b64("bad base64 and a bad tag: the payload comes first", "aGVsbG8=", "CheckOrder")
	openErr("a decoded payload of 262,145 bytes", flags("StorageOpen", "Boundary", "LargeInput"), reqs("STO-046", "STO-016"),
		stoEnvelope(key07, stoKID, 1, make([]byte, 262145)), "PayloadTooLarge")
	openErr("a decoded payload of 262,145 bytes and a bad tag: the size comes first", flags("StorageOpen", "Boundary", "LargeInput", "CheckOrder"), reqs("STO-046", "STO-047"),
		strings.Replace(stoEnvelope(key07, stoKID, 1, make([]byte, 262145)), `"auth_tag":"`, `"auth_tag":"X`, 1), "PayloadTooLarge")

	// The tag (STO-047, STO-012, STO-017).
	tag := func(comment string, f, r []string, envelope string) {
		openErr(comment, append([]string{"StorageOpen", "TagCheck"}, f...), r, envelope, "InvalidAuthenticationTag")
	}
	tag("a tag in uppercase hex", flags(), reqs("STO-047"), strings.Replace(a10, a10Tag, strings.ToUpper(a10Tag), 1))
	tag("a tag of 63 digits", flags("Boundary"), reqs("STO-047"), strings.Replace(a10, a10Tag, a10Tag[:63], 1))
	tag("a tag of 66 digits", flags("Boundary"), reqs("STO-047"), strings.Replace(a10, a10Tag, a10Tag+"00", 1))
	tag("a malformed tag under an unknown key id: the tag form comes first", flags("CheckOrder"), reqs("STO-047"),
		strings.Replace(strings.Replace(a10, a10Tag, a10Tag[:63], 1), `"storage-v1"`, `"storage-v9"`, 1))
	openErr("a key id the keyring does not hold", flags("StorageOpen", "KeyId"), reqs("STO-047", "STO-070"), stoEnvelope(key07, "storage-v9", 1, hello), "UnknownKeyId")
	tag("a tag with its last digit changed", flags(), reqs("STO-047", "STO-013"), strings.Replace(a10, a10Tag, a10Tag[:63]+"c", 1))
	tag("a record sealed with another key under the same key id", flags(), reqs("STO-047", "STO-012"), stoEnvelope(key08, stoKID, 1, hello))
	tag("another payload under the tag of hello", flags(), reqs("STO-047", "STO-012"), strings.Replace(a10, `"aGVsbG8"`, `"amVsbG8"`, 1))
	cs = append(cs, stoCase{meta: meta{"the record of revision 1 relabelled as revision 2", flags("StorageOpen", "TagCheck", "Rollback"), reqs("STO-047", "STO-012")},
		open: true, key: key07, keyID: stoKID, namespace: stoNS, name: stoName,
		envelope: []byte(strings.Replace(a10, `"revision":1`, `"revision":2`, 1)), recordRev: 2, floor: 2, err: "InvalidAuthenticationTag"})
	cs = append(cs, stoCase{meta: meta{"a record relabelled with another key id holding the same key bytes", flags("StorageOpen", "TagCheck", "KeyRotation"), reqs("STO-047", "STO-012")},
		open: true, key: key07, keyID: stoKID, namespace: stoNS, name: stoName, readKeys: []storageKeyRow{{"storage-v0", key07}},
		envelope: []byte(strings.Replace(a10, `"storage-v1"`, `"storage-v0"`, 1)), recordRev: 1, floor: 1, err: "InvalidAuthenticationTag"})
	for _, moved := range []struct{ what, ns, name string }{
		{"name", stoNS, "tenant-other"},
		{"namespace", "worker-journal-2", stoName},
	} {
		cs = append(cs, stoCase{meta: meta{"reference anchor A10 copied to another record " + moved.what, flags("StorageOpen", "TagCheck", "RecordKey"), reqs("STO-017", "STO-012")},
			open: true, key: key07, keyID: stoKID, namespace: moved.ns, name: moved.name,
			envelope: []byte(a10), recordRev: 1, floor: 1, err: "InvalidAuthenticationTag"})
	}
	return cs
}
