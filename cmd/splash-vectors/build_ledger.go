package main

import (
	"encoding/hex"
	"encoding/json"
	"math"
	"strings"

	"github.com/splashv5/conform/vectors/vectorfmt"
)

// ledgerFlagNotes explains the flags of ledger.json.
var ledgerFlagNotes = map[string]string{
	"LedgerFingerprint":       "A ledger input fingerprint (RUN-181).",
	"OperationKey":            "A derived plan-bound operation key (RUN-181).",
	"ArgumentCheck":           "An argument check of preparing, run before the key is derived, in the reference's order: unknown step, tool token, input size, empty nonce, nonce size.",
	"Binary":                  "Input or nonce bytes that are not valid UTF-8 (the input is given as input_hex).",
	"LedgerEncoding":          "Decoding a stored ledger and its canonical encoding (RUN-180).",
	"OperationLimit":          "The limit of 64 operations per ledger.",
	"FingerprintHex":          "A fingerprint member must be exactly 64 lowercase hex digits.",
	"LedgerCompensation":      "A compensation record inside a ledger operation.",
	"SizeEstimate":            "The encoder refuses a ledger whose conservative size estimate exceeds 65,536 bytes before encoding: 224 bytes, plus 256 and the lengths of step ID, tool, operation key and input fingerprint per operation, plus 320 and the lengths of compensation key, input fingerprint, tenant scope and grant fingerprint per compensation (the reference's estimate).",
	"Record":                  "Recording operations into a new ledger; a refused record changes nothing (RUN-182).",
	"DerivedCompensationKey":  "A derived compensation key (WFL-010).",
	"LengthPrefix":            "Two derivations whose concatenated fields are equal but split differently; the length prefixes keep their keys apart.",
	"CompensationObservation": "Recording authenticated compensation observations into a stored ledger; a refused one changes nothing (WFL-012).",
	"CompensationRecord":      "Recording compensation intents into a stored ledger; a refused intent changes nothing (WFL-011).",
	"PlanFingerprint":         "A plan fingerprint derived from the plan's step IDs and sources (WFL-045).",
}

func init() {
	for k, v := range ledgerFlagNotes {
		flagNotes[k] = v
	}
}

func buildLedger(c *checker) (string, any, *fileBuilder) {
	b := newFileBuilder(vectorfmt.LedgerFile, c)
	order := []string{vectorfmt.LedgerInputFingerprintType, vectorfmt.LedgerOperationKeyType, vectorfmt.LedgerDecodeType, vectorfmt.LedgerRecordType,
		vectorfmt.LedgerCompensationKeyType, vectorfmt.LedgerCompensationRecordType, vectorfmt.LedgerCompensationObservationType,
		vectorfmt.LedgerPlanFingerprintType, vectorfmt.LedgerRecoveryType}
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
	for _, row := range ledgerRecoveryCases() {
		completed := row.completed
		t := vectorfmt.LedgerTest{Case: b.newCase(row.meta, row.err), PlanFingerprint: strPtr(recoveryPlan), PlanSteps: []string{"fetch", "publish"},
			Ledger: b.text(row.ledger), Decisions: row.decisions, CompletedSteps: &completed, Phase: row.phase}
		groups[vectorfmt.LedgerRecoveryType].Tests = append(groups[vectorfmt.LedgerRecoveryType].Tests, t)
	}
	// Every compensation key row differs from the others in some argument, so every key differs.
	seen := map[string]string{}
	for _, t := range groups[vectorfmt.LedgerCompensationKeyType].Tests {
		if prev, ok := seen[*t.CompensationKey]; ok {
			b.failf("%q derives the same compensation key as %q", t.Comment, prev)
		}
		seen[*t.CompensationKey] = t.Comment
	}
	plans := map[string]string{}
	for _, t := range groups[vectorfmt.LedgerPlanFingerprintType].Tests {
		if prev, ok := plans[*t.PlanFingerprint]; ok {
			b.failf("%q derives the same plan fingerprint as %q", t.Comment, prev)
		}
		plans[*t.PlanFingerprint] = t.Comment
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
	case vectorfmt.LedgerPlanFingerprintType:
		t.Case = b.newCase(row.meta, "")
		t.PlanSteps, t.PlanSources = row.steps, row.sources
		t.PlanFingerprint = strPtr(indPlanFingerprint(row.steps, row.sources))
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
		firstErr := firstError(row.records, func(r ledgerRecordRow) string { return r.err })
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
		firstErr := firstError(row.comps, func(r ledgerCompRow) string { return r.err })
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
		if got, err := compensationRecordErrors(row.ledger, row.comps); err != nil {
			b.failf("%q: %v", row.comment, err)
		} else {
			for i, r := range row.comps {
				if got[i] != r.err {
					b.failf("%q: intent %d: the table expects %q, the rules of WFL-011 give %q", row.comment, i+1, r.err, got[i])
				}
			}
		}
	case vectorfmt.LedgerCompensationObservationType:
		t.Case = b.newCase(row.meta, firstError(row.obs, func(o ledgerObsRow) string { return o.err }))
		t.Ledger = b.text(row.ledger)
		for _, o := range row.obs {
			if (o.err == "") == (o.state == "") {
				b.failf("%q: an observation needs exactly one of state and error", row.comment)
			}
			t.Observations = append(t.Observations, vectorfmt.LedgerCompensationObservation{Request: *b.text(o.req), Result: *b.text(o.res), State: o.state, Error: o.err})
		}
		t.Output = b.text(row.output)
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

// firstError is the first non-empty expected error of a sequence of calls.
func firstError[T any](calls []T, errOf func(T) string) string {
	for _, c := range calls {
		if e := errOf(c); e != "" {
			return e
		}
	}
	return ""
}

// compensationRecordErrors applies the rules of WFL-011, in the order docs/vectors.md gives,
// to the intents of a compensation record row, on a model of the stored ledger read with
// encoding/json, and returns the refusal of each intent ("" when it is recorded). It is a
// cross-check of the table's expected errors, written independently of impl/host.
func compensationRecordErrors(ledger string, comps []ledgerCompRow) ([]string, error) {
	var doc struct {
		Revision   uint64 `json:"revision"`
		Operations []struct {
			Tool         string          `json:"tool"`
			OperationKey string          `json:"operation_key"`
			State        string          `json:"state"`
			Compensation json.RawMessage `json:"compensation"`
		} `json:"operations"`
	}
	if err := json.Unmarshal([]byte(ledger), &doc); err != nil {
		return nil, err
	}
	type op struct {
		tool, state string
		compensated bool
	}
	ops := map[string]*op{}
	for _, o := range doc.Operations {
		ops[o.OperationKey] = &op{o.Tool, o.State, string(o.Compensation) != "null"}
	}
	isToken := func(s string) bool {
		ok := len(s) >= 1 && len(s) <= 128
		for i := 0; i < len(s); i++ {
			c := s[i]
			ok = ok && ('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-')
		}
		return ok
	}
	isHex64 := func(s string) bool {
		ok := len(s) == 64
		for i := 0; i < len(s); i++ {
			ok = ok && strings.IndexByte("0123456789abcdef", s[i]) >= 0
		}
		return ok
	}
	out := make([]string, len(comps))
	for i, c := range comps {
		o := ops[c.opKey]
		switch {
		case !isToken(c.tool):
			out[i] = "InvalidTool"
		case !isToken(c.tenant):
			out[i] = "InvalidCompensationTenantScope"
		case !isHex64(c.grant):
			out[i] = "InvalidCompensationGrantFingerprint"
		case len(c.input) > ledgerMaxInput:
			out[i] = "InputTooLarge"
		case o == nil:
			out[i] = "UnknownOperation"
		case o.state != "succeeded":
			out[i] = "CompensationRequiresSucceededOperation"
		case o.tool != c.tool:
			out[i] = "CompensationPolicyMismatch"
		case o.compensated:
			out[i] = "CompensationAlreadyRecorded"
		case !strings.HasPrefix(c.ckey, "cmp-") || !isToken(c.ckey):
			out[i] = "InvalidCompensationKey"
		case doc.Revision == math.MaxUint64:
			out[i] = "RevisionExhausted"
		default:
			o.compensated = true
			doc.Revision++
		}
	}
	return out, nil
}
