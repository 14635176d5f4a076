package replay

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/host"
	"github.com/splashv5/conform/impl/ledger"
	"github.com/splashv5/conform/impl/opkey"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/workflow"
	"github.com/splashv5/conform/vectors/vectorfmt"
)

// replayLedger replays ledger.json.
func replayLedger(fsys fs.FS, fr *fileRun) error {
	var f vectorfmt.Ledger
	if err := vectorfmt.Load(fsys, vectorfmt.LedgerFile, &f); err != nil {
		return err
	}
	return replayGroups(fr, f.TestGroups, func(g *vectorfmt.LedgerGroup) ([]vectorfmt.LedgerTest, func(*vectorfmt.LedgerTest) (*vectorfmt.Case, []string), error) {
		switch g.Type {
		case vectorfmt.LedgerInputFingerprintType, vectorfmt.LedgerOperationKeyType, vectorfmt.LedgerDecodeType, vectorfmt.LedgerRecordType,
			vectorfmt.LedgerCompensationKeyType, vectorfmt.LedgerCompensationRecordType, vectorfmt.LedgerCompensationObservationType,
			vectorfmt.LedgerPlanFingerprintType, vectorfmt.LedgerRecoveryType:
		default:
			return nil, nil, fmt.Errorf("unknown group type %q", g.Type)
		}
		return g.Tests, func(t *vectorfmt.LedgerTest) (*vectorfmt.Case, []string) {
			return &t.Case, CheckLedgerTest(g.Type, t)
		}, nil
	})
}

// CheckLedgerTest runs one ledger.json test of group type groupType against impl/host and
// returns every difference from the declared outcome (none when it passes).
func CheckLedgerTest(groupType string, t *vectorfmt.LedgerTest) []string {
	switch groupType {
	case vectorfmt.LedgerInputFingerprintType:
		return checkLedgerFingerprint(t)
	case vectorfmt.LedgerOperationKeyType:
		return checkLedgerOperationKey(t)
	case vectorfmt.LedgerDecodeType:
		return checkLedgerDecode(t)
	case vectorfmt.LedgerRecordType:
		return checkLedgerRecord(t)
	case vectorfmt.LedgerCompensationKeyType:
		return checkCompensationKey(t)
	case vectorfmt.LedgerCompensationRecordType:
		return checkCompensationRecord(t)
	case vectorfmt.LedgerCompensationObservationType:
		return checkCompensationObservation(t)
	case vectorfmt.LedgerPlanFingerprintType:
		return checkPlanFingerprint(t)
	case vectorfmt.LedgerRecoveryType:
		return checkLedgerRecovery(t)
	}
	return []string{fmt.Sprintf("unknown group type %q", groupType)}
}

// ledgerInput returns the test's input bytes from input or input_hex (exactly one present).
func ledgerInput(t *vectorfmt.LedgerTest) ([]byte, error) {
	switch {
	case t.Input != nil && t.InputHex == nil:
		return []byte(*t.Input), nil
	case t.Input == nil && t.InputHex != nil:
		return hex.DecodeString(*t.InputHex)
	}
	return nil, errors.New("exactly one of input and input_hex must be present")
}

func checkLedgerFingerprint(t *vectorfmt.LedgerTest) []string {
	input, err := ledgerInput(t)
	if err != nil {
		return []string{err.Error()}
	}
	if t.Result != vectorfmt.Valid || t.Fingerprint == nil {
		return []string{"a fingerprint test must be valid and give a fingerprint"}
	}
	return compare("fingerprint", *t.Fingerprint, ledger.InputFingerprint(input))
}

func checkLedgerOperationKey(t *vectorfmt.LedgerTest) []string {
	input, err := ledgerInput(t)
	if err != nil {
		return []string{err.Error()}
	}
	nonce, err := hex.DecodeString(deref(t.NonceHex))
	if err != nil || t.NonceHex == nil || t.PlanFingerprint == nil || t.StepID == nil || t.Tool == nil {
		return []string{"a key test needs plan_fingerprint, step_id, tool and nonce_hex (hex)"}
	}
	plan := ledger.Plan{Fingerprint: *t.PlanFingerprint, Steps: t.PlanSteps}
	step, tool := *t.StepID, *t.Tool
	var problems []string
	if t.Result == vectorfmt.Valid {
		if t.OperationKey == nil || t.Fingerprint == nil {
			return []string{"a valid key test must give operation_key and fingerprint"}
		}
		problems = append(problems, compare("operation key", *t.OperationKey, opkey.OperationKey(plan.Fingerprint, step, tool, input, nonce))...)
		problems = append(problems, compare("input fingerprint", *t.Fingerprint, ledger.InputFingerprint(input))...)
	}
	key, err := plan.OperationKey(step, tool, input, nonce)
	if t.Result == vectorfmt.Invalid {
		problems = append(problems, ledgerWrongKind("derive: ", t.Error, err)...)
	} else if err != nil {
		problems = append(problems, "derive: "+unexpectedLedger(err))
	} else {
		problems = append(problems, compare("checked operation key", *t.OperationKey, key)...)
	}
	// Preparing a queued runtime operation derives the key the same way and records it.
	if run, ok := preparable(plan, step, tool, input, t.Error); ok {
		key, fp, err := run(nonce)
		if t.Result == vectorfmt.Invalid {
			return append(problems, ledgerWrongKind("prepare: ", t.Error, err)...)
		}
		if err != nil {
			return append(problems, "prepare: "+unexpectedLedger(err))
		}
		problems = append(problems, compare("prepared operation key", *t.OperationKey, key)...)
		return append(problems, compare("recorded input fingerprint", *t.Fingerprint, fp)...)
	}
	return problems
}

// ledgerRuntime is a runtime with a pinned session for preparing operations.
func ledgerRuntime() (*host.Runtime, error) {
	nonce, err := host.NewSessionNonce([]byte("0123456789abcdef"))
	if err != nil {
		return nil, err
	}
	now := time.UnixMilli(1_700_000_000_000)
	return host.New(host.Config{SessionNonce: &nonce, SessionID: 7, Clock: func() time.Time { return now }})
}

// preparable reports whether the key arguments can be reached through
// ledger.PrepareNextExternalOperation: the step is in the plan, the tool is a token, and the
// input is either a canonical text or JSON operation input or (for a refusal of the input
// length or the nonce) any input of at least 12 bytes, whose length a text operation
// reproduces. It returns a function preparing
// such an operation with a nonce, giving the prepared key and the recorded input fingerprint.
func preparable(plan ledger.Plan, step, tool string, input []byte, wantErr string) (func([]byte) (string, string, error), bool) {
	completed := slices.Index(plan.Steps, step)
	if completed < 0 || !protocol.IsToken(tool) {
		return nil, false
	}
	format, body, ok := canonicalInputBody(input)
	if !ok {
		// A refusal of the length or the nonce does not depend on the input bytes: a text
		// operation whose canonical input has the same length reproduces it.
		switch wantErr {
		case "InputTooLarge", "EmptyOperationNonce", "OperationNonceTooLarge":
		default:
			return nil, false
		}
		if len(input) < 12 {
			return nil, false
		}
		format, body = host.FormatText, strings.Repeat("x", len(input)-12)
	}
	return func(nonce []byte) (string, string, error) {
		rt, err := ledgerRuntime()
		if err != nil {
			return "", "", err
		}
		p := host.NewPolicy(tool)
		if format == host.FormatJSON {
			p = host.JSONPolicy(tool)
		}
		p.MaxInputBytes = 2 * ledger.MaxInputBytes
		start := rt.Start
		register := rt.RegisterExternalTool
		if format == host.FormatJSON {
			start, register = rt.StartJSON, rt.RegisterExternalJSONTool
		}
		if err := register(p, host.Metadata{}); err != nil {
			return "", "", fmt.Errorf("register: %w", err)
		}
		if _, err := start(tool, body); err != nil {
			return "", "", fmt.Errorf("start: %w", err)
		}
		l, err := ledger.New(plan.Fingerprint)
		if err != nil {
			return "", "", err
		}
		prep, err := ledger.PrepareNextExternalOperation(rt, plan, completed, l, nonce)
		if err != nil {
			return "", "", err
		}
		if prep == nil {
			return "", "", errors.New("nothing was prepared")
		}
		op, ok := l.Operation(prep.OperationKey())
		if !ok || op.StepID != step || op.Tool != tool || op.State != ledger.Pending || l.Revision() != 1 {
			return "", "", fmt.Errorf("the ledger does not hold one pending record for the key: %+v", op)
		}
		return prep.OperationKey(), op.InputFingerprint, nil
	}, true
}

// canonicalInputBody recognizes the canonical operation input layout (format name, u64be
// length, body) of a text body, or of a JSON body that is already in canonical form.
func canonicalInputBody(input []byte) (host.DataFormat, string, bool) {
	if len(input) < 12 {
		return 0, "", false
	}
	name, n, body := string(input[:4]), binary.BigEndian.Uint64(input[4:12]), input[12:]
	if n != uint64(len(body)) {
		return 0, "", false
	}
	switch name {
	case "text":
		if !utf8.Valid(body) {
			return 0, "", false
		}
		return host.FormatText, string(body), true
	case "json":
		v, err := canonjson.ParseValue(body, canonjson.Preserve)
		if err != nil || !bytes.Equal(v.JSON(), body) {
			return 0, "", false
		}
		return host.FormatJSON, string(body), true
	}
	return 0, "", false
}

func checkLedgerDecode(t *vectorfmt.LedgerTest) []string {
	if t.Input == nil {
		return []string{"a decode test needs input"}
	}
	l, err := ledger.Decode([]byte(*t.Input))
	var out []byte
	if err == nil {
		out, err = l.Encode()
	}
	if t.Result == vectorfmt.Invalid {
		return ledgerWrongKind("", t.Error, err)
	}
	if err != nil {
		return []string{unexpectedLedger(err)}
	}
	if t.Output == nil {
		return []string{"a valid decode test must give output"}
	}
	problems := compare("encoding", string(*t.Output), string(out))
	// The canonical encoding is a fixed point of decoding and encoding.
	again, err := ledger.Decode(out)
	if err == nil {
		var back []byte
		back, err = again.Encode()
		problems = append(problems, compare("re-encoding", string(out), string(back))...)
	}
	if err != nil {
		problems = append(problems, "re-decoding: "+unexpectedLedger(err))
	}
	return problems
}

func checkLedgerRecord(t *vectorfmt.LedgerTest) []string {
	if t.PlanFingerprint == nil || t.Output == nil || len(t.Records) == 0 {
		return []string{"a record test needs plan_fingerprint, records and output"}
	}
	l, err := ledger.New(*t.PlanFingerprint)
	if err != nil {
		return []string{"new ledger: " + unexpectedLedger(err)}
	}
	return replayLedgerCalls(l, t, "record", len(t.Records), func(i int) (string, func() error, error) {
		r := t.Records[i]
		return r.Error, nil, l.Record(r.StepID, r.Tool, r.OperationKey, textBytes(r.Input))
	})
}

func checkCompensationKey(t *vectorfmt.LedgerTest) []string {
	input, err := ledgerInput(t)
	if err != nil {
		return []string{err.Error()}
	}
	nonce, err := hex.DecodeString(deref(t.NonceHex))
	if err != nil || t.NonceHex == nil || t.PlanFingerprint == nil || t.OperationKey == nil || t.Tool == nil ||
		t.TenantScope == nil || t.GrantFingerprint == nil {
		return []string{"a compensation key test needs plan_fingerprint, operation_key, tool, tenant_scope, grant_fingerprint and nonce_hex (hex)"}
	}
	if t.Result != vectorfmt.Valid || t.CompensationKey == nil {
		return []string{"a compensation key test must be valid and give compensation_key"}
	}
	got := opkey.CompensationKey(*t.PlanFingerprint, *t.OperationKey, *t.Tool, *t.TenantScope, *t.GrantFingerprint, input, nonce)
	return compare("compensation key", *t.CompensationKey, got)
}

func checkCompensationRecord(t *vectorfmt.LedgerTest) []string {
	l, problems := storedLedger(t, len(t.Compensations))
	if l == nil {
		return problems
	}
	return replayLedgerCalls(l, t, "compensation", len(t.Compensations), func(i int) (string, func() error, error) {
		r := t.Compensations[i]
		input := textBytes(r.Input)
		err := l.RecordCompensation(r.OperationKey, r.Tool, r.TenantScope, r.GrantFingerprint, r.CompensationKey, input)
		// The recorded intent accepts exactly its own inverse input.
		return r.Error, func() error { return l.VerifyCompensationInput(r.OperationKey, input) }, err
	})
}

func checkCompensationObservation(t *vectorfmt.LedgerTest) []string {
	l, problems := storedLedger(t, len(t.Observations))
	if l == nil {
		return problems
	}
	return replayLedgerCalls(l, t, "observation", len(t.Observations), func(i int) (string, func() error, error) {
		o := t.Observations[i]
		req, res, err := compensationPair(o)
		if err != nil {
			return o.Error, nil, err
		}
		state, err := l.ApplyVerifiedCompensation(req, res)
		return o.Error, func() error {
			if state.String() != o.State {
				return fmt.Errorf("observed state %s, want %s", state, o.State)
			}
			return nil
		}, err
	})
}

// storedLedger decodes the stored ledger of a test that records n calls into it; it returns
// nil and the problems when the test is malformed.
func storedLedger(t *vectorfmt.LedgerTest, n int) (*ledger.Ledger, []string) {
	if t.Ledger == nil || t.Output == nil || n == 0 {
		return nil, []string{"the test needs ledger, at least one call and output"}
	}
	l, err := ledger.Decode([]byte(*t.Ledger))
	if err != nil {
		return nil, []string{"decode ledger: " + unexpectedLedger(err)}
	}
	return l, nil
}

// compensationPair decodes the compensate_operation and compensation_result messages of an
// observation.
func compensationPair(o vectorfmt.LedgerCompensationObservation) (protocol.OperationCompensationRequest, protocol.OperationCompensationResult, error) {
	var req protocol.OperationCompensationRequest
	var res protocol.OperationCompensationResult
	m, err := protocol.DecodeMessage([]byte(o.Request), canonjson.Preserve)
	if err != nil {
		return req, res, fmt.Errorf("request: %w", err)
	}
	rm, ok := m.(protocol.CompensateOperationMessage)
	if !ok {
		return req, res, fmt.Errorf("request is a %T, not compensate_operation", m)
	}
	m, err = protocol.DecodeMessage([]byte(o.Result), canonjson.Preserve)
	if err != nil {
		return req, res, fmt.Errorf("result: %w", err)
	}
	sm, ok := m.(protocol.CompensationResultMessage)
	if !ok {
		return req, res, fmt.Errorf("result is a %T, not compensation_result", m)
	}
	return rm.Request, sm.Result, nil
}

// replayLedgerCalls runs n calls on l in order: call i returns its expected error kind ("" for
// success), an optional check of a successful call, and its error. A refused call must leave the
// encoding unchanged; the test's error must be the first refusal's, and its output the encoding
// after the last call.
func replayLedgerCalls(l *ledger.Ledger, t *vectorfmt.LedgerTest, label string, n int, call func(int) (string, func() error, error)) []string {
	var problems []string
	firstErr := ""
	for i := range n {
		before, err := l.Encode()
		if err != nil {
			return append(problems, "encode: "+unexpectedLedger(err))
		}
		want, after, err := call(i)
		if firstErr == "" {
			firstErr = want
		}
		step := fmt.Sprintf("%s %d", label, i+1)
		switch {
		case want == "" && err != nil:
			problems = append(problems, step+": "+unexpectedLedger(err))
		case want != "":
			problems = append(problems, ledgerWrongKind(step+": ", want, err)...)
			if now, err := l.Encode(); err != nil || !bytes.Equal(before, now) {
				problems = append(problems, step+": the refusal changed the ledger")
			}
		case after != nil:
			if err := after(); err != nil {
				problems = append(problems, step+": "+unexpectedLedger(err))
			}
		}
	}
	if t.Error != firstErr {
		problems = append(problems, fmt.Sprintf("test error %q is not the first refusal's %q", t.Error, firstErr))
	}
	out, err := l.Encode()
	if err != nil {
		return append(problems, "encode: "+unexpectedLedger(err))
	}
	return append(problems, compare("encoding", string(*t.Output), string(out))...)
}

// textBytes is the bytes of an optional text field (nil when absent).
func textBytes(t *vectorfmt.Text) []byte {
	if t == nil {
		return nil
	}
	return []byte(*t)
}

// ledgerWrongKind compares an error with an expected ledger error kind.
func ledgerWrongKind(prefix, want string, err error) []string {
	if err == nil {
		return []string{fmt.Sprintf("%sexpected error %s, got success", prefix, want)}
	}
	if got := ErrorKindName(err); got != want {
		return []string{fmt.Sprintf("%sexpected error %s, got %s (%v)", prefix, want, got, err)}
	}
	return nil
}

func unexpectedLedger(err error) string {
	return fmt.Sprintf("expected success, got %s (%v)", ErrorKindName(err), err)
}

func checkPlanFingerprint(t *vectorfmt.LedgerTest) []string {
	if t.Result != vectorfmt.Valid || t.PlanFingerprint == nil || len(t.PlanSources) != len(t.PlanSteps) {
		return []string{"a plan fingerprint test must be valid and give plan_fingerprint and one source per step"}
	}
	steps := make([]workflow.PlanStep, len(t.PlanSteps))
	for i := range steps {
		steps[i] = workflow.PlanStep{ID: t.PlanSteps[i], Source: t.PlanSources[i]}
	}
	problems := compare("plan fingerprint", *t.PlanFingerprint, opkey.PlanFingerprint(steps))
	if len(steps) > 0 {
		p := workflow.NewPlan(steps)
		problems = append(problems, compare("plan fingerprint of NewPlan", *t.PlanFingerprint, p.Fingerprint)...)
	}
	return problems
}
