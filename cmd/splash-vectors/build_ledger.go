package main

import (
	"encoding/hex"

	"github.com/splashv5/conform/vectors/vectorfmt"
)

// ledgerFlagNotes explains the flags of ledger.json.
var ledgerFlagNotes = map[string]string{
	"LedgerFingerprint":      "A ledger input fingerprint (RUN-181).",
	"OperationKey":           "A derived plan-bound operation key (RUN-181).",
	"ArgumentCheck":          "An argument check of preparing, run before the key is derived, in the reference's order: unknown step, tool token, input size, empty nonce, nonce size.",
	"Binary":                 "Input or nonce bytes that are not valid UTF-8 (the input is given as input_hex).",
	"LedgerEncoding":         "Decoding a stored ledger and its canonical encoding (RUN-180).",
	"OperationLimit":         "The limit of 64 operations per ledger.",
	"FingerprintHex":         "A fingerprint member must be exactly 64 lowercase hex digits.",
	"LedgerCompensation":     "A compensation record inside a ledger operation.",
	"SizeEstimate":           "The encoder refuses a ledger whose conservative size estimate exceeds 65,536 bytes before encoding: 224 bytes, plus 256 and the lengths of step ID, tool, operation key and input fingerprint per operation, plus 320 and the lengths of compensation key, input fingerprint, tenant scope and grant fingerprint per compensation (the reference's estimate).",
	"Record":                 "Recording operations into a new ledger; a refused record changes nothing (RUN-182).",
	"DerivedCompensationKey": "A derived compensation key (WFL-010).",
	"LengthPrefix":           "Two derivations whose concatenated fields are equal but split differently; the length prefixes keep their keys apart.",
	"CompensationRecord":     "Recording compensation intents into a stored ledger; a refused intent changes nothing (WFL-011).",
}

func init() {
	for k, v := range ledgerFlagNotes {
		flagNotes[k] = v
	}
}

func buildLedger(c *checker) (string, any, *fileBuilder) {
	b := newFileBuilder(vectorfmt.LedgerFile, c)
	order := []string{vectorfmt.LedgerInputFingerprintType, vectorfmt.LedgerOperationKeyType, vectorfmt.LedgerDecodeType, vectorfmt.LedgerRecordType,
		vectorfmt.LedgerCompensationKeyType, vectorfmt.LedgerCompensationRecordType}
	groups := map[string]*vectorfmt.LedgerGroup{}
	for _, typ := range order {
		groups[typ] = &vectorfmt.LedgerGroup{Type: typ, Tests: []vectorfmt.LedgerTest{}}
	}
	for _, row := range ledgerCases() {
		g, ok := groups[row.kind]
		if !ok {
			b.failf("%q: unknown group type %q", row.comment, row.kind)
			continue
		}
		t, ok := buildLedgerTest(b, row)
		if !ok {
			continue
		}
		g.Tests = append(g.Tests, t)
	}
	doc := vectorfmt.Ledger{}
	for _, typ := range order {
		doc.TestGroups = append(doc.TestGroups, *groups[typ])
	}
	doc.Header = b.header()
	return b.name, doc, b
}

// buildLedgerTest lays out one row with its independently computed expectations.
func buildLedgerTest(b *fileBuilder, row ledgerRow) (vectorfmt.LedgerTest, bool) {
	var t vectorfmt.LedgerTest
	switch row.kind {
	case vectorfmt.LedgerInputFingerprintType:
		t.Case = b.newCase(row.meta, "")
		t.Input, t.InputHex = b.inputField(row.input)
		t.Fingerprint = strPtr(indLedgerInputFingerprint([]byte(row.input)))
	case vectorfmt.LedgerOperationKeyType:
		t.Case = b.newCase(row.meta, row.err)
		t.Input, t.InputHex = b.inputField(row.input)
		t.PlanFingerprint, t.PlanSteps = strPtr(row.plan), append([]string{}, row.steps...)
		t.StepID, t.Tool, t.NonceHex = strPtr(row.step), strPtr(row.tool), strPtr(hex.EncodeToString([]byte(row.nonce)))
		if row.err == "" {
			t.OperationKey = strPtr(indLedgerOperationKey(row.plan, row.step, row.tool, []byte(row.input), []byte(row.nonce)))
			t.Fingerprint = strPtr(indLedgerInputFingerprint([]byte(row.input)))
		}
		if (row.err == "") != ledgerKeyArgumentsValid(row) {
			b.failf("%q: expected error %q disagrees with the argument limits", row.comment, row.err)
		}
	case vectorfmt.LedgerDecodeType:
		t.Case = b.newCase(row.meta, row.err)
		t.Input = b.text(row.input)
		if row.err == "" {
			t.Output = b.text(row.output)
			if len(row.input) > ledgerMaxBytes {
				b.failf("%q: a valid document is over %d bytes", row.comment, ledgerMaxBytes)
			}
		} else if row.output != "" {
			b.failf("%q: an invalid decode test has an output", row.comment)
		}
		if hasFlag(row.flags, "SizeEstimate") {
			doc, estimate := ledgerEstimateDoc()
			if len(doc) > ledgerMaxBytes || estimate <= ledgerMaxBytes {
				b.failf("%q: the document is %d bytes with an estimate of %d; it must decode and exceed the estimate", row.comment, len(doc), estimate)
			}
		}
	case vectorfmt.LedgerRecordType:
		firstErr := ""
		for _, r := range row.records {
			if firstErr == "" {
				firstErr = r.err
			}
		}
		t.Case = b.newCase(row.meta, firstErr)
		t.PlanFingerprint = strPtr(row.recordsPlan)
		for _, r := range row.records {
			t.Records = append(t.Records, vectorfmt.LedgerRecord{StepID: r.step, Tool: r.tool, OperationKey: r.key, Input: b.text(r.input), Error: r.err})
		}
		t.Output = b.text(row.output)
	case vectorfmt.LedgerCompensationKeyType:
		t.Case = b.newCase(row.meta, "")
		t.Input, t.InputHex = b.inputField(row.input)
		t.PlanFingerprint, t.OperationKey, t.Tool = strPtr(row.plan), strPtr(row.opKey), strPtr(row.tool)
		t.TenantScope, t.GrantFingerprint = strPtr(row.tenant), strPtr(row.grant)
		t.NonceHex = strPtr(hex.EncodeToString([]byte(row.nonce)))
		t.CompensationKey = strPtr(indCompensationKey(row.plan, row.opKey, row.tool, row.tenant, row.grant, []byte(row.input), []byte(row.nonce)))
		if len(row.nonce) < 1 || len(row.nonce) > ledgerMaxNonce || len(row.input) > ledgerMaxInput {
			b.failf("%q: a compensation key row outside the nonce and input limits of WFL-010", row.comment)
		}
	case vectorfmt.LedgerCompensationRecordType:
		firstErr := ""
		for _, r := range row.comps {
			if firstErr == "" {
				firstErr = r.err
			}
		}
		t.Case = b.newCase(row.meta, firstErr)
		t.Ledger = b.text(row.ledger)
		for _, r := range row.comps {
			t.Compensations = append(t.Compensations, vectorfmt.LedgerCompensationRecord{OperationKey: r.opKey, Tool: r.tool,
				TenantScope: r.tenant, GrantFingerprint: r.grant, CompensationKey: r.ckey, Input: b.text(r.input), Error: r.err})
		}
		t.Output = b.text(row.output)
		if firstErr != "" && len(row.comps) == 1 && row.output != row.ledger {
			b.failf("%q: a refused intent changed the ledger", row.comment)
		}
	default:
		return t, false
	}
	return t, true
}

// ledgerKeyArgumentsValid applies the argument rules of RUN-181 and RUN-183 (step in the plan,
// tool token, input and nonce sizes) to a key row, as a cross-check of the table.
func ledgerKeyArgumentsValid(row ledgerRow) bool {
	inPlan := false
	for _, s := range row.steps {
		inPlan = inPlan || s == row.step
	}
	tokenOK := len(row.tool) >= 1 && len(row.tool) <= 128
	for i := 0; i < len(row.tool); i++ {
		c := row.tool[i]
		tokenOK = tokenOK && ('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-')
	}
	return inPlan && tokenOK && len(row.input) <= ledgerMaxInput && len(row.nonce) >= 1 && len(row.nonce) <= ledgerMaxNonce
}
