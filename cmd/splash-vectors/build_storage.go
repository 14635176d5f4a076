package main

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"strings"

	"github.com/splashv5/conform/vectors/vectorfmt"
)

func buildStorage(c *checker) (string, any, *fileBuilder) {
	b := newFileBuilder(vectorfmt.StorageFile, c)
	sealG := vectorfmt.StorageGroup{Type: vectorfmt.StorageSealType, Tests: []vectorfmt.StorageTest{}}
	openG := vectorfmt.StorageGroup{Type: vectorfmt.StorageOpenType, Tests: []vectorfmt.StorageTest{}}
	for _, row := range storageCases() {
		t := vectorfmt.StorageTest{KeyHex: hex.EncodeToString(row.key[:]), KeyID: row.keyID, Namespace: row.namespace, Name: row.name}
		if !row.open {
			buildStorageSeal(b, row, &t)
			sealG.Tests = append(sealG.Tests, t)
			continue
		}
		buildStorageOpen(b, row, &t)
		openG.Tests = append(openG.Tests, t)
	}
	seqG := vectorfmt.StorageGroup{Type: vectorfmt.StoreSequenceType, Tests: []vectorfmt.StorageTest{}}
	for _, row := range storeSequenceCases() {
		seqG.Tests = append(seqG.Tests, vectorfmt.StorageTest{Case: b.newCase(row.meta, ""), KeyHex: hex.EncodeToString(key07[:]), KeyID: stoKID,
			Namespace: stoNS, Name: stoName, Steps: row.steps})
	}
	comG := vectorfmt.StorageGroup{Type: vectorfmt.StorageCommitmentType, Tests: []vectorfmt.StorageTest{}}
	for _, row := range storageCommitmentCases() {
		rev := row.revision
		comG.Tests = append(comG.Tests, vectorfmt.StorageTest{Case: b.newCase(row.meta, ""), KeyHex: hex.EncodeToString(key07[:]), KeyID: stoKID,
			Namespace: row.namespace, Name: row.name, Revision: &rev, Envelope: b.text(row.envelope),
			Commitment: indRecordCommitment(row.namespace, row.name, row.revision, []byte(row.envelope))})
	}
	doc := vectorfmt.Storage{TestGroups: []vectorfmt.StorageGroup{sealG, openG, seqG, comG}}
	doc.Header = b.header()
	return b.name, doc, b
}

// payloadFields returns the text or hex form of a payload.
func (b *fileBuilder) payloadFields(p []byte) (*vectorfmt.Text, *string) {
	return b.inputField(string(p))
}

func buildStorageSeal(b *fileBuilder, row stoCase, t *vectorfmt.StorageTest) {
	rev := row.revision
	t.Revision = &rev
	t.Payload, t.PayloadHex = b.payloadFields(row.payload)
	t.Case = b.newCase(row.meta, row.err)
	if row.err != "" {
		return
	}
	wantTag := indStorageTag(row.key, row.namespace, row.name, row.keyID, row.revision, row.payload)
	wantEnv := indEnvelope(row.keyID, row.revision, row.payload, wantTag)
	if row.recordedEnvelope != "" && wantEnv != row.recordedEnvelope {
		b.failf("%q: independent envelope %s differs from the recorded reference envelope %s", row.comment, wantEnv, row.recordedEnvelope)
	}
	if row.b64 != "" && !strings.Contains(wantEnv, `"payload":"`+row.b64+`"`) {
		b.failf("%q: the envelope does not carry the declared payload text %q", row.comment, row.b64)
	}
	t.Envelope = b.text(wantEnv)
	t.Tag = wantTag
}

func buildStorageOpen(b *fileBuilder, row stoCase, t *vectorfmt.StorageTest) {
	t.Envelope, t.EnvelopeHex = b.inputField(string(row.envelope))
	rr, fl := row.recordRev, row.floor
	t.RecordRevision, t.RevisionFloor = &rr, &fl
	for _, k := range row.readKeys {
		t.ReadKeys = append(t.ReadKeys, vectorfmt.StorageKeyEntry{KeyID: k.id, KeyHex: hex.EncodeToString(k.key[:])})
	}
	t.Case = b.newCase(row.meta, row.err)
	if row.err != "" {
		return
	}
	if row.payload == nil {
		b.failf("%q: a valid open row declares its payload", row.comment)
	}
	r := row.revision
	t.Revision = &r
	t.OpenedKeyID = row.openedKeyID
	t.Payload, t.PayloadHex = b.payloadFields(row.payload)
	// The payload text of a valid envelope re-encodes the payload exactly (STO-046).
	if !bytes.Contains(row.envelope, []byte(base64.RawStdEncoding.EncodeToString(row.payload))) {
		b.failf("%q: the envelope does not hold the payload's base64 text", row.comment)
	}
}
