package replay

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
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

// messageOf names, for each authorizer operation, the message kind and member that carry the
// operation's input body.
var messageOf = map[string][2]string{
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

// decodeBody decodes a message body with its structure's serde rules and no validation, as
// the body member of the message kind that carries it.
func decodeBody(op, body string, mode canonjson.Mode) (protocol.Message, error) {
	kind, ok := messageOf[op]
	if !ok {
		return nil, fmt.Errorf("unknown operation %q", op)
	}
	n, err := canonjson.Parse([]byte(`{"type":"` + kind[0] + `","` + kind[1] + `":` + body + `}`))
	if err != nil {
		return nil, protocol.SerializationError(err)
	}
	m, err := protocol.DecodeMessageNode(n, derive.Context{Mode: mode})
	if err != nil {
		return nil, protocol.SerializationError(err)
	}
	return m, nil
}

var errNoToken = errors.New("the target step holds no token of the kind this operation needs")

// authorizerStep runs one authorizer operation; it returns the token an authorize operation
// issued (nil otherwise).
func authorizerStep(a *authorizer.SessionAuthorizer, op, body string, target any, mode canonjson.Mode) (any, error) {
	m, err := decodeBody(op, body, mode)
	if err != nil {
		return nil, err
	}
	switch msg := m.(type) {
	case protocol.InvokeMessage:
		return a.Authorize(msg.Invocation)
	case protocol.DispatchOperationMessage:
		return a.AuthorizeOperation(msg.Request)
	case protocol.ReconcileOperationMessage:
		return a.AuthorizeReconciliation(msg.Request)
	case protocol.CompensateOperationMessage:
		return a.AuthorizeCompensation(msg.Request)
	case protocol.CancelMessage:
		t, ok := target.(authorizer.AuthorizedInvocation)
		if !ok {
			return nil, errNoToken
		}
		return a.AuthorizeCancellation(msg.Request, t)
	case protocol.ResultMessage:
		return nil, validateFor(target, msg.Result, a.ValidateResult)
	case protocol.CancellationResultMessage:
		return nil, validateFor(target, msg.Result, a.ValidateCancellationResult)
	case protocol.OperationResultMessage:
		return nil, validateFor(target, msg.Result, a.ValidateOperationResult)
	case protocol.ReconciledOperationMessage:
		return nil, validateFor(target, msg.Result, a.ValidateReconciliationResult)
	case protocol.CompensationResultMessage:
		return nil, validateFor(target, msg.Result, a.ValidateCompensationResult)
	}
	return nil, fmt.Errorf("operation %q has no body structure", op)
}

// validateFor validates a result against the token issued by the target step, which must be
// of the kind the validation needs.
func validateFor[Token, Result any](target any, result Result, validate func(Token, Result) error) error {
	t, ok := target.(Token)
	if !ok {
		return errNoToken
	}
	return validate(t, result)
}

func replayAuthorizer(fsys fs.FS, fr *fileRun) error {
	var doc vectorfmt.Authorizer
	if err := vectorfmt.Load(fsys, vectorfmt.AuthorizerFile, &doc); err != nil {
		return err
	}
	return replayGroups(fr, doc.TestGroups, func(g *vectorfmt.AuthorizerGroup) ([]vectorfmt.AuthorizerTest, func(*vectorfmt.AuthorizerTest) (*vectorfmt.Case, []string), error) {
		if g.Type != vectorfmt.AuthorizerSequenceType {
			return nil, nil, fmt.Errorf("unknown group type %q", g.Type)
		}
		mode, err := canonjson.ParseMode(g.Mode)
		if err != nil {
			return nil, nil, err
		}
		return g.Tests, func(t *vectorfmt.AuthorizerTest) (*vectorfmt.Case, []string) {
			return &t.Case, checkAuthorizer(mode, t)
		}, nil
	})
}

func checkAuthorizer(mode canonjson.Mode, t *vectorfmt.AuthorizerTest) []string {
	man, err := protocol.DecodeManifest([]byte(textOf(t.Manifest)))
	var instances [2]*authorizer.SessionAuthorizer
	for i := 0; err == nil && i < len(instances); i++ {
		instances[i], err = authorizer.New(man)
	}
	if len(t.Steps) == 0 {
		if t.Result != vectorfmt.Invalid {
			return []string{"a test without steps must expect the authorizer creation to fail"}
		}
		return expectError(&t.Case, err)
	}
	if err != nil {
		return []string{"creating the authorizer: " + ErrorKindName(err)}
	}
	var problems, errs []string
	tokens := make([]any, len(t.Steps))
	for i, s := range t.Steps {
		errs = append(errs, s.Error)
		step := fmt.Sprintf("step %d (%s)", i, s.Op)
		if s.Instance < 0 || s.Instance >= len(instances) {
			problems = append(problems, step+": no such authorizer instance")
			continue
		}
		var target any
		if s.Target != nil {
			if *s.Target < 0 || *s.Target >= i || t.Steps[*s.Target].Repeat > 0 {
				problems = append(problems, step+": bad target")
				continue
			}
			target = tokens[*s.Target]
		}
		for r := 1; r <= max(s.Repeat, 1); r++ {
			body := textOf(s.Input)
			if s.Repeat > 0 {
				body = strings.ReplaceAll(body, vectorfmt.RepeatPlaceholder, strconv.Itoa(r))
			}
			tok, err := authorizerStep(instances[s.Instance], s.Op, body, target, mode)
			if r == 1 {
				tokens[i] = tok
			}
			if p := stepOutcome(step, s.Error, "got success", err); p != nil {
				if s.Repeat > 0 {
					p[0] += fmt.Sprintf(" (repetition %d)", r)
				}
				problems = append(problems, p...)
				break
			}
		}
	}
	return append(problems, stepErrors(&t.Case, errs)...)
}

func replayJournal(fsys fs.FS, fr *fileRun) error {
	var doc vectorfmt.Journal
	if err := vectorfmt.Load(fsys, vectorfmt.JournalFile, &doc); err != nil {
		return err
	}
	return replayGroups(fr, doc.TestGroups, func(g *vectorfmt.JournalGroup) ([]vectorfmt.JournalTest, func(*vectorfmt.JournalTest) (*vectorfmt.Case, []string), error) {
		mode, err := canonjson.ParseMode(g.Mode)
		if err != nil {
			return nil, nil, err
		}
		var check func(*vectorfmt.JournalTest) []string
		switch g.Type {
		case vectorfmt.JournalTransitionType:
			check = func(t *vectorfmt.JournalTest) []string { return checkJournalTransition(g.SessionID, mode, t) }
		case vectorfmt.JournalLoadType:
			check = func(t *vectorfmt.JournalTest) []string { return checkJournalLoad(mode, t) }
		default:
			return nil, nil, fmt.Errorf("unknown group type %q", g.Type)
		}
		return g.Tests, func(t *vectorfmt.JournalTest) (*vectorfmt.Case, []string) {
			return &t.Case, check(t)
		}, nil
	})
}

func journalText(j *journal.Journal) string {
	b, err := j.ToJSON()
	if err != nil {
		return "(ToJSON failed: " + ErrorKindName(err) + ")"
	}
	return string(b)
}

func checkJournalTransition(session string, mode canonjson.Mode, t *vectorfmt.JournalTest) []string {
	var j *journal.Journal
	var err error
	switch {
	case t.Journal != nil && t.NewScope == nil:
		j, err = journal.FromJSON([]byte(*t.Journal), mode)
	case t.Journal == nil && t.NewScope != nil:
		j, err = journal.New(*t.NewScope)
	default:
		return []string{"exactly one of journal and new_scope must be present"}
	}
	if err != nil {
		return []string{"the initial journal: " + ErrorKindName(err)}
	}
	var problems, errs []string
	for i, s := range t.Steps {
		errs = append(errs, s.Error)
		step := fmt.Sprintf("step %d (%s)", i, s.Op)
		adm, state, err := journalStep(j, session, t.Manifest, &s, mode)
		if p := stepOutcome(step, s.Error, "got success", err); p != nil {
			problems = append(problems, p...)
		} else if err == nil {
			problems = append(problems, compare(step+" admission", s.Admission, adm)...)
			problems = append(problems, compare(step+" state", textOf(s.State), state)...)
		}
		problems = append(problems, compare(step+" journal", textOf(s.Journal), journalText(j))...)
	}
	return append(problems, stepErrors(&t.Case, errs)...)
}

// journalStep authorizes the step's request with a fresh authorizer and runs the journal
// operation; it returns the admission outcome and the reported state.
func journalStep(j *journal.Journal, session string, testManifest *vectorfmt.Text, s *vectorfmt.JournalStep, mode canonjson.Mode) (string, string, error) {
	manifest := testManifest
	if s.Manifest != nil {
		manifest = s.Manifest
	}
	man, err := protocol.DecodeManifest([]byte(textOf(manifest)))
	if err != nil {
		return "", "", fmt.Errorf("the step's manifest: %w", err)
	}
	if man.SessionID != session {
		return "", "", errors.New("the step's manifest names another session")
	}
	a, err := authorizer.New(man)
	if err != nil {
		return "", "", fmt.Errorf("the step's manifest: %w", err)
	}
	var status protocol.OperationStatus
	if s.Status != nil {
		n, err := canonjson.Parse([]byte(*s.Status))
		if err == nil {
			status, err = protocol.DecodeOperationStatusNode(n, derive.Context{Mode: mode})
		}
		if err != nil {
			return "", "", protocol.SerializationError(err)
		}
	}
	authOp := map[string]string{
		vectorfmt.OpAdmit: vectorfmt.OpAuthorizeOperation, vectorfmt.OpObserve: vectorfmt.OpAuthorizeOperation,
		vectorfmt.OpValidateReconciliation: vectorfmt.OpAuthorizeReconciliation, vectorfmt.OpObserveReconciliation: vectorfmt.OpAuthorizeReconciliation,
		vectorfmt.OpAdmitCompensation: vectorfmt.OpAuthorizeCompensation, vectorfmt.OpObserveCompensation: vectorfmt.OpAuthorizeCompensation,
	}[s.Op]
	if authOp == "" {
		return "", "", fmt.Errorf("unknown journal operation %q", s.Op)
	}
	tok, err := authorizerStep(a, authOp, textOf(s.Request), nil, mode)
	if err != nil {
		// Authorization always succeeds in these vectors; report the failure, not its kind.
		return "", "", fmt.Errorf("authorizing the request failed: %v", err)
	}
	admission := func(ad journal.Admission, err error) (string, string, error) {
		if err != nil {
			return "", "", err
		}
		state := ""
		if ad.Kind == journal.Existing {
			state = string(ad.State.AppendJSON(nil))
		}
		return ad.Kind.String(), state, nil
	}
	observed := func(st protocol.OperationStatus, err error) (string, string, error) {
		if err != nil {
			return "", "", err
		}
		return "", string(st.AppendJSON(nil)), nil
	}
	switch s.Op {
	case vectorfmt.OpAdmit:
		return admission(j.Admit(tok.(authorizer.AuthorizedOperationInvocation)))
	case vectorfmt.OpObserve:
		return observed(j.Observe(tok.(authorizer.AuthorizedOperationInvocation), status))
	case vectorfmt.OpValidateReconciliation:
		return "", "", j.ValidateReconciliation(tok.(authorizer.AuthorizedOperationReconciliation))
	case vectorfmt.OpObserveReconciliation:
		return observed(j.ObserveReconciliation(tok.(authorizer.AuthorizedOperationReconciliation), status))
	case vectorfmt.OpAdmitCompensation:
		return admission(j.AdmitCompensation(tok.(authorizer.AuthorizedOperationCompensation)))
	default:
		return observed(j.ObserveCompensation(tok.(authorizer.AuthorizedOperationCompensation), status))
	}
}

func checkJournalLoad(mode canonjson.Mode, t *vectorfmt.JournalTest) []string {
	in := []byte(textOf(t.Input))
	var j *journal.Journal
	var err error
	if t.Scope != nil {
		j, err = journal.FromJSONForScope(in, *t.Scope, mode)
	} else {
		j, err = journal.FromJSON(in, mode)
	}
	var out []byte
	if err == nil {
		out, err = j.ToJSON()
	}
	if p, done := judge(&t.Case, err); done {
		return p
	}
	problems := compare("output", textOf(t.Output), string(out))
	// Round trip (JRN-023): the output loads to an equal journal and is written identically.
	again, err := journal.FromJSON(out, mode)
	if err != nil {
		return append(problems, "the output does not load: "+ErrorKindName(err))
	}
	if !again.Equal(j) || journalText(again) != string(out) {
		problems = append(problems, "the output does not round-trip")
	}
	return problems
}

func replayStorage(fsys fs.FS, fr *fileRun) error {
	var doc vectorfmt.Storage
	if err := vectorfmt.Load(fsys, vectorfmt.StorageFile, &doc); err != nil {
		return err
	}
	return replayGroups(fr, doc.TestGroups, func(g *vectorfmt.StorageGroup) ([]vectorfmt.StorageTest, func(*vectorfmt.StorageTest) (*vectorfmt.Case, []string), error) {
		var check func(*vectorfmt.StorageTest) []string
		switch g.Type {
		case vectorfmt.StorageSealType:
			check = checkStorageSeal
		case vectorfmt.StorageOpenType:
			check = checkStorageOpen
		case vectorfmt.StoreSequenceType:
			check = checkStoreSequence
		case vectorfmt.StorageCommitmentType:
			check = checkStorageCommitment
		default:
			return nil, nil, fmt.Errorf("unknown group type %q", g.Type)
		}
		return g.Tests, func(t *vectorfmt.StorageTest) (*vectorfmt.Case, []string) {
			return &t.Case, check(t)
		}, nil
	})
}

func storageKey(keyHex string) (storage.Key, error) {
	raw, err := hex.DecodeString(keyHex)
	if err != nil || len(raw) != storage.KeyBytes {
		return storage.Key{}, fmt.Errorf("bad test key %q", keyHex)
	}
	return storage.NewKey([storage.KeyBytes]byte(raw)), nil
}

func checkStorageSeal(t *vectorfmt.StorageTest) []string {
	key, err := storageKey(t.KeyHex)
	if err != nil {
		return []string{err.Error()}
	}
	payload, err := input(t.Payload, t.PayloadHex)
	if err != nil {
		return []string{err.Error()}
	}
	if t.Revision == nil {
		return []string{"a seal test names its revision"}
	}
	rk := storage.RecordKey{Namespace: t.Namespace, Name: t.Name}
	env, err := storage.SealEnvelope(key, storage.KeyID(t.KeyID), rk, *t.Revision, payload)
	if p, done := judge(&t.Case, err); done {
		return p
	}
	tag := storage.RecordTag(key, rk, storage.FormatVersion, storage.KeyID(t.KeyID), *t.Revision, payload)
	return append(compare("envelope", textOf(t.Envelope), string(env)), compare("tag", t.Tag, hex.EncodeToString(tag[:]))...)
}

// fixedBackend is a backend that holds one stored record at a given revision and floor. It
// serves loads only.
type fixedBackend struct {
	snapshot storage.Snapshot
}

var errLoadOnly = errors.New("replay backend serves loads only")

func (b fixedBackend) Load(context.Context, storage.RecordKey) (storage.Snapshot, error) {
	return b.snapshot, nil
}
func (fixedBackend) CompareAndSwap(context.Context, storage.RecordKey, *uint64, storage.StoredRecord) (storage.CASOutcome, error) {
	return storage.CASOutcome{}, errLoadOnly
}
func (fixedBackend) CurrentFence(context.Context, storage.RecordKey) (uint64, error) {
	return 0, nil
}
func (fixedBackend) ReserveFence(context.Context, storage.RecordKey) (uint64, error) {
	return 0, errLoadOnly
}
func (fixedBackend) EstablishFence(context.Context, storage.RecordKey, uint64) error {
	return errLoadOnly
}
func (fixedBackend) CompareAndSwapFenced(context.Context, storage.RecordKey, *uint64, storage.StoredRecord, uint64) (storage.CASOutcome, error) {
	return storage.CASOutcome{}, errLoadOnly
}

func checkStorageOpen(t *vectorfmt.StorageTest) []string {
	key, err := storageKey(t.KeyHex)
	if err != nil {
		return []string{err.Error()}
	}
	ring, err := storage.NewKeyring(storage.KeyID(t.KeyID), key)
	if err != nil {
		return []string{"building the keyring: " + ErrorKindName(err)}
	}
	for _, k := range t.ReadKeys {
		rk, err := storageKey(k.KeyHex)
		if err == nil {
			err = ring.AddReadKey(storage.KeyID(k.KeyID), rk)
		}
		if err != nil {
			return []string{"building the keyring: " + err.Error()}
		}
	}
	envelope, err := input(t.Envelope, t.EnvelopeHex)
	if err != nil {
		return []string{err.Error()}
	}
	if t.RecordRevision == nil || t.RevisionFloor == nil {
		return []string{"an open test names the record revision and the floor"}
	}
	backend := fixedBackend{storage.Snapshot{Record: &storage.StoredRecord{Revision: *t.RecordRevision, Bytes: envelope}, RevisionFloor: *t.RevisionFloor}}
	rec, err := storage.NewAuthenticatedStore(backend, ring).Load(context.Background(), storage.RecordKey{Namespace: t.Namespace, Name: t.Name})
	if p, done := judge(&t.Case, err); done {
		return p
	}
	if rec == nil {
		return []string{"expected a record, got none"}
	}
	want, err := input(t.Payload, t.PayloadHex)
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	if t.Revision == nil || rec.Revision != *t.Revision {
		problems = append(problems, fmt.Sprintf("revision %d, want %v", rec.Revision, t.Revision))
	}
	problems = append(problems, compare("key id", t.OpenedKeyID, string(rec.KeyID))...)
	if !bytes.Equal(rec.Payload, want) {
		problems = append(problems, fmt.Sprintf("payload %q, want %q", clip(string(rec.Payload)), clip(string(want))))
	}
	return problems
}
