package main

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/splashv5/conform/impl/authorizer"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/derive"
	"github.com/splashv5/conform/impl/journal"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/storage"
	"github.com/splashv5/conform/vectors/vectorfmt"
)

// This file, like impl.go, only runs the implementation so that its results can be compared
// with the case tables: the session authorizer, the operation journal and the storage
// envelope.

// bodyWrappers names, for each authorizer or journal operation, the message kind and member
// whose body the operation's input is.
var bodyWrappers = map[string][2]string{
	vectorfmt.OpAuthorize:                    {"invoke", "invocation"},
	vectorfmt.OpAuthorizeOperation:           {"dispatch_operation", "request"},
	vectorfmt.OpAuthorizeReconciliation:      {"reconcile_operation", "request"},
	vectorfmt.OpAuthorizeCompensation:        {"compensate_operation", "request"},
	vectorfmt.OpAuthorizeCancellation:        {"cancel", "request"},
	vectorfmt.OpValidateResult:               {"result", "result"},
	vectorfmt.OpValidateCancellationResult:   {"cancellation_result", "result"},
	vectorfmt.OpValidateOperationResult:      {"operation_result", "result"},
	vectorfmt.OpValidateReconciliationResult: {"reconciled_operation", "result"},
	vectorfmt.OpValidateCompensationResult:   {"compensation_result", "result"},
}

// implDecodeBody decodes a message body with the serde rules of its structure and without
// validation, by decoding it as the body member of its message kind.
func implDecodeBody(op, body string, m canonjson.Mode) (protocol.Message, error) {
	w, ok := bodyWrappers[op]
	if !ok {
		return nil, fmt.Errorf("no body structure for operation %q", op)
	}
	n, err := canonjson.Parse([]byte(`{"type":"` + w[0] + `","` + w[1] + `":` + body + `}`))
	if err != nil {
		return nil, protocol.SerializationError(err)
	}
	msg, err := protocol.DecodeMessageNode(n, derive.Context{Mode: m})
	if err != nil {
		return nil, protocol.SerializationError(err)
	}
	return msg, nil
}

func implDecodeManifest(manifest string) (protocol.CapabilityManifest, error) {
	return protocol.DecodeManifest([]byte(manifest))
}

// workerKindName extends kindName with the storage error kinds.
func workerKindName(err error) string {
	var se *storage.Error
	if errors.As(err, &se) {
		return se.Kind.String()
	}
	var sk storage.ErrorKind
	if errors.As(err, &sk) {
		return sk.String()
	}
	return kindName(err)
}

// token is any authorization token an authorizer step produced.
type token any

// implAuthorizer runs an authorizer test: it returns the construction error kind, or one
// outcome per step ("" for success).
func implAuthorizer(manifest string, steps []azStep, m canonjson.Mode) (string, []string) {
	man, err := implDecodeManifest(manifest)
	if err != nil {
		return kindName(err), nil
	}
	var inst [2]*authorizer.SessionAuthorizer
	for i := range inst {
		a, err := authorizer.New(man)
		if err != nil {
			return kindName(err), nil
		}
		inst[i] = a
	}
	tokens := make([]token, len(steps))
	outs := make([]string, len(steps))
	for i, s := range steps {
		if s.instance < 0 || s.instance > 1 {
			outs[i] = "BadInstance"
			continue
		}
		a := inst[s.instance]
		var target token
		if s.target >= 0 {
			if s.target >= i {
				outs[i] = "BadTarget"
				continue
			}
			target = tokens[s.target]
		}
		n := max(s.repeat, 1)
		for r := 1; r <= n; r++ {
			input := s.input
			if s.repeat > 0 {
				input = strings.ReplaceAll(input, vectorfmt.RepeatPlaceholder, strconv.Itoa(r))
			}
			tok, err := implAuthorizerStep(a, s.op, input, target, m)
			kind := ""
			if err != nil {
				kind = kindName(err)
			}
			if r == 1 {
				outs[i], tokens[i] = kind, tok
			} else if kind != outs[i] {
				outs[i] = fmt.Sprintf("repetition %d gave %q, the first gave %q", r, kind, outs[i])
				break
			}
		}
	}
	return "", outs
}

var errWrongTarget = errors.New("the target step did not issue the token this operation needs")

func implAuthorizerStep(a *authorizer.SessionAuthorizer, op, input string, target token, m canonjson.Mode) (token, error) {
	msg, err := implDecodeBody(op, input, m)
	if err != nil {
		return nil, err
	}
	switch op {
	case vectorfmt.OpAuthorize:
		return a.Authorize(msg.(protocol.InvokeMessage).Invocation)
	case vectorfmt.OpAuthorizeOperation:
		return a.AuthorizeOperation(msg.(protocol.DispatchOperationMessage).Request)
	case vectorfmt.OpAuthorizeReconciliation:
		return a.AuthorizeReconciliation(msg.(protocol.ReconcileOperationMessage).Request)
	case vectorfmt.OpAuthorizeCompensation:
		return a.AuthorizeCompensation(msg.(protocol.CompensateOperationMessage).Request)
	case vectorfmt.OpAuthorizeCancellation:
		t, ok := target.(authorizer.AuthorizedInvocation)
		if !ok {
			return nil, errWrongTarget
		}
		return a.AuthorizeCancellation(msg.(protocol.CancelMessage).Request, t)
	case vectorfmt.OpValidateResult:
		t, ok := target.(authorizer.AuthorizedInvocation)
		if !ok {
			return nil, errWrongTarget
		}
		return nil, a.ValidateResult(t, msg.(protocol.ResultMessage).Result)
	case vectorfmt.OpValidateCancellationResult:
		t, ok := target.(authorizer.AuthorizedWorkerCancellation)
		if !ok {
			return nil, errWrongTarget
		}
		return nil, a.ValidateCancellationResult(t, msg.(protocol.CancellationResultMessage).Result)
	case vectorfmt.OpValidateOperationResult:
		t, ok := target.(authorizer.AuthorizedOperationInvocation)
		if !ok {
			return nil, errWrongTarget
		}
		return nil, a.ValidateOperationResult(t, msg.(protocol.OperationResultMessage).Result)
	case vectorfmt.OpValidateReconciliationResult:
		t, ok := target.(authorizer.AuthorizedOperationReconciliation)
		if !ok {
			return nil, errWrongTarget
		}
		return nil, a.ValidateReconciliationResult(t, msg.(protocol.ReconciledOperationMessage).Result)
	case vectorfmt.OpValidateCompensationResult:
		t, ok := target.(authorizer.AuthorizedOperationCompensation)
		if !ok {
			return nil, errWrongTarget
		}
		return nil, a.ValidateCompensationResult(t, msg.(protocol.CompensationResultMessage).Result)
	}
	return nil, fmt.Errorf("unknown operation %q", op)
}

// jOutcome is the implementation's result of one journal step.
type jOutcome struct {
	err       string
	admission string
	state     string
	journal   string
}

// implJournalStart loads the initial journal or creates an empty one.
func implJournalStart(initial, newScope string, m canonjson.Mode) (*journal.Journal, error) {
	if newScope != "" {
		return journal.New(newScope)
	}
	return journal.FromJSON([]byte(initial), m)
}

func implJournalText(j *journal.Journal) string {
	b, err := j.ToJSON()
	if err != nil {
		return "ToJSON failed: " + kindName(err)
	}
	return string(b)
}

// implJournalStep authorizes the step's request with a fresh authorizer and runs the step.
func implJournalStep(j *journal.Journal, session string, s jStep, m canonjson.Mode) jOutcome {
	fail := func(err error) jOutcome {
		return jOutcome{err: kindName(err), journal: implJournalText(j)}
	}
	man, err := implDecodeManifest(s.manifest)
	if err != nil {
		return jOutcome{err: "manifest: " + kindName(err)}
	}
	if man.SessionID != session {
		return jOutcome{err: "manifest names another session"}
	}
	a, err := authorizer.New(man)
	if err != nil {
		return jOutcome{err: "manifest: " + kindName(err)}
	}
	var status protocol.OperationStatus
	if s.status != "" {
		n, err := canonjson.Parse([]byte(s.status))
		if err != nil {
			return fail(protocol.SerializationError(err))
		}
		status, err = protocol.DecodeOperationStatusNode(n, derive.Context{Mode: m})
		if err != nil {
			return fail(protocol.SerializationError(err))
		}
	}
	var authOp string
	switch s.op {
	case vectorfmt.OpAdmit, vectorfmt.OpObserve:
		authOp = vectorfmt.OpAuthorizeOperation
	case vectorfmt.OpValidateReconciliation, vectorfmt.OpObserveReconciliation:
		authOp = vectorfmt.OpAuthorizeReconciliation
	case vectorfmt.OpAdmitCompensation, vectorfmt.OpObserveCompensation:
		authOp = vectorfmt.OpAuthorizeCompensation
	default:
		return jOutcome{err: "unknown journal operation " + s.op}
	}
	tok, err := implAuthorizerStep(a, authOp, s.request, nil, m)
	if err != nil {
		return jOutcome{err: "authorization failed: " + kindName(err)}
	}
	admission := func(ad journal.Admission, err error) jOutcome {
		if err != nil {
			return fail(err)
		}
		o := jOutcome{admission: ad.Kind.String(), journal: implJournalText(j)}
		if ad.Kind == journal.Existing {
			o.state = string(ad.State.AppendJSON(nil))
		}
		return o
	}
	observed := func(st protocol.OperationStatus, err error) jOutcome {
		if err != nil {
			return fail(err)
		}
		return jOutcome{state: string(st.AppendJSON(nil)), journal: implJournalText(j)}
	}
	switch s.op {
	case vectorfmt.OpAdmit:
		return admission(j.Admit(tok.(authorizer.AuthorizedOperationInvocation)))
	case vectorfmt.OpObserve:
		return observed(j.Observe(tok.(authorizer.AuthorizedOperationInvocation), status))
	case vectorfmt.OpValidateReconciliation:
		if err := j.ValidateReconciliation(tok.(authorizer.AuthorizedOperationReconciliation)); err != nil {
			return fail(err)
		}
		return jOutcome{journal: implJournalText(j)}
	case vectorfmt.OpObserveReconciliation:
		return observed(j.ObserveReconciliation(tok.(authorizer.AuthorizedOperationReconciliation), status))
	case vectorfmt.OpAdmitCompensation:
		return admission(j.AdmitCompensation(tok.(authorizer.AuthorizedOperationCompensation)))
	default:
		return observed(j.ObserveCompensation(tok.(authorizer.AuthorizedOperationCompensation), status))
	}
}

// implJournalLoad loads a journal (for a scope when scope is not nil) and serializes it.
func implJournalLoad(input string, scope *string, m canonjson.Mode) outcome {
	var j *journal.Journal
	var err error
	if scope != nil {
		j, err = journal.FromJSONForScope([]byte(input), *scope, m)
	} else {
		j, err = journal.FromJSON([]byte(input), m)
	}
	if err != nil {
		return outcome{err: kindName(err)}
	}
	b, err := j.ToJSON()
	if err != nil {
		return outcome{err: kindName(err)}
	}
	return outcome{out: string(b)}
}

// implStorageSeal seals payload and reports the envelope and the record tag.
func implStorageSeal(key [32]byte, keyID, namespace, name string, revision uint64, payload []byte) (envelope, tag, kind string) {
	rk := storage.RecordKey{Namespace: namespace, Name: name}
	env, err := storage.SealEnvelope(storage.NewKey(key), storage.KeyID(keyID), rk, revision, payload)
	if err != nil {
		return "", "", workerKindName(err)
	}
	t := storage.RecordTag(storage.NewKey(key), rk, storage.FormatVersion, storage.KeyID(keyID), revision, payload)
	return string(env), hex.EncodeToString(t[:]), ""
}

// snapshotBackend is a backend holding one record at a fixed revision and floor; only Load
// is used.
type snapshotBackend struct {
	snap storage.Snapshot
}

var errReadOnly = errors.New("read-only snapshot backend")

func (b *snapshotBackend) Load(context.Context, storage.RecordKey) (storage.Snapshot, error) {
	return b.snap, nil
}
func (b *snapshotBackend) CompareAndSwap(context.Context, storage.RecordKey, *uint64, storage.StoredRecord) (storage.CASOutcome, error) {
	return storage.CASOutcome{}, errReadOnly
}
func (b *snapshotBackend) CurrentFence(context.Context, storage.RecordKey) (uint64, error) {
	return 0, nil
}
func (b *snapshotBackend) ReserveFence(context.Context, storage.RecordKey) (uint64, error) {
	return 0, errReadOnly
}
func (b *snapshotBackend) EstablishFence(context.Context, storage.RecordKey, uint64) error {
	return errReadOnly
}
func (b *snapshotBackend) CompareAndSwapFenced(context.Context, storage.RecordKey, *uint64, storage.StoredRecord, uint64) (storage.CASOutcome, error) {
	return storage.CASOutcome{}, errReadOnly
}

// implStorageOpen loads envelope through an authenticated store whose backend holds it at
// recordRevision with revisionFloor.
func implStorageOpen(key [32]byte, keyID string, readKeys []storageKeyRow, namespace, name string, envelope []byte, recordRevision, revisionFloor uint64) (rev uint64, usedKeyID string, payload []byte, kind string) {
	ring, err := storage.NewKeyring(storage.KeyID(keyID), storage.NewKey(key))
	if err != nil {
		return 0, "", nil, workerKindName(err)
	}
	for _, rk := range readKeys {
		if err := ring.AddReadKey(storage.KeyID(rk.id), storage.NewKey(rk.key)); err != nil {
			return 0, "", nil, workerKindName(err)
		}
	}
	b := &snapshotBackend{snap: storage.Snapshot{Record: &storage.StoredRecord{Revision: recordRevision, Bytes: envelope}, RevisionFloor: revisionFloor}}
	rec, err := storage.NewAuthenticatedStore(b, ring).Load(context.Background(), storage.RecordKey{Namespace: namespace, Name: name})
	if err != nil {
		return 0, "", nil, workerKindName(err)
	}
	if rec == nil {
		return 0, "", nil, "NoRecord"
	}
	return rec.Revision, string(rec.KeyID), rec.Payload, ""
}
