// Package journal implements the worker operation journal of Splash worker protocol v5 (format
// version 2): the worker's record of durable operation intents, their observed states and
// their compensations, for one host-selected scope.
//
// A Journal is a pure value. Loading (FromJSON), serializing (ToJSON) and every mutation take
// inputs and return outputs; persisting the JSON is the caller's job. Every operation checks the
// journal structurally first, runs its checks in the reference's order (spec chapter 12), and
// either commits its whole change or leaves the journal exactly as it was. The 262,144-byte bound
// on the serialized journal is enforced after every mutation.
//
// Journal states use protocol.OperationStatus, whose State may be StatePending here. Journal
// operations take the authorization tokens of package authorizer but, as in the reference, do
// not check their provenance: cross-session recovery is bound by scope, operation identity,
// canonical input and the current grant instead.
//
// A Journal is not safe for concurrent use.
package journal

import (
	"github.com/splashv5/conform/impl/authorizer"
	"github.com/splashv5/conform/impl/protocol"
)

// CompensationRecord is the compensation attached to a succeeded operation.
type CompensationRecord struct {
	CompensationKey  string
	InputFingerprint string
	GrantFingerprint string
	State            protocol.OperationStatus
}

// Record is one durable operation.
type Record struct {
	Tool             string
	OperationKey     string
	InputFingerprint string
	State            protocol.OperationStatus
	Compensation     *CompensationRecord // nil when the operation has no compensation
}

// clone returns a copy of r that shares nothing mutable with it.
func (r Record) clone() Record {
	if r.Compensation != nil {
		c := *r.Compensation
		r.Compensation = &c
	}
	return r
}

// Equal reports whether two records are the same value (payloads compared as values).
func (r Record) Equal(o Record) bool {
	if r.Tool != o.Tool || r.OperationKey != o.OperationKey || r.InputFingerprint != o.InputFingerprint ||
		!r.State.Equal(o.State) || (r.Compensation == nil) != (o.Compensation == nil) {
		return false
	}
	if r.Compensation == nil {
		return true
	}
	c, d := r.Compensation, o.Compensation
	return c.CompensationKey == d.CompensationKey && c.InputFingerprint == d.InputFingerprint &&
		c.GrantFingerprint == d.GrantFingerprint && c.State.Equal(d.State)
}

// AdmissionKind says whether an admission asks the caller to run the effect.
type AdmissionKind uint8

const (
	// Dispatch: a new intent was recorded; persist the journal, then run the effect once.
	Dispatch AdmissionKind = iota + 1
	// Existing: the exact request is already recorded; do not run the effect again.
	Existing
)

// String returns "dispatch" or "existing".
func (k AdmissionKind) String() string {
	switch k {
	case Dispatch:
		return "dispatch"
	case Existing:
		return "existing"
	}
	return "invalid"
}

// Admission is the outcome of Admit or AdmitCompensation. State is the stored state for
// Existing (any state, pending included) and the zero status for Dispatch.
type Admission struct {
	Kind  AdmissionKind
	State protocol.OperationStatus
}

// Journal is a worker operation journal. The zero value is not a valid journal: every
// operation on it fails with UnsupportedOperationJournalVersion. Use New or FromJSON.
type Journal struct {
	formatVersion uint8
	scope         string
	records       []Record

	// valid is true once the journal passed structural validation; size is then the length
	// of its serialized form. Both are maintained by every committed mutation.
	valid bool
	size  int

	scratch []byte // reused to measure serialized lengths; never shared between journals
}

// New returns an empty journal for scope, which must be a token.
func New(scope string) (*Journal, error) {
	if err := protocol.ValidateToken(protocol.FieldJournalScope, scope); err != nil {
		return nil, err
	}
	j := &Journal{formatVersion: protocol.WorkerOperationJournalFormatVersion, scope: scope}
	if err := j.ensureValid(); err != nil {
		return nil, err
	}
	return j, nil
}

// Scope returns the journal's scope.
func (j *Journal) Scope() string { return j.scope }

// FormatVersion returns the journal's format version (2 for every valid journal).
func (j *Journal) FormatVersion() uint8 { return j.formatVersion }

// Len returns the number of records.
func (j *Journal) Len() int { return len(j.records) }

// Records returns a copy of the records in insertion order.
func (j *Journal) Records() []Record {
	out := make([]Record, len(j.records))
	for i, r := range j.records {
		out[i] = r.clone()
	}
	return out
}

// Operation returns a copy of the record with the operation key.
func (j *Journal) Operation(key string) (Record, bool) {
	if i := j.find(key); i >= 0 {
		return j.records[i].clone(), true
	}
	return Record{}, false
}

// Clone returns an independent copy of the journal.
func (j *Journal) Clone() *Journal {
	c := *j
	c.records = j.Records()
	c.scratch = nil
	return &c
}

// Equal reports whether two journals are the same value.
func (j *Journal) Equal(o *Journal) bool {
	if j.formatVersion != o.formatVersion || j.scope != o.scope || len(j.records) != len(o.records) {
		return false
	}
	for i := range j.records {
		if !j.records[i].Equal(o.records[i]) {
			return false
		}
	}
	return true
}

// Size returns the length in bytes of the journal's serialized form.
func (j *Journal) Size() int {
	if j.valid {
		return j.size
	}
	return len(j.appendJSON(nil))
}

// ToJSON validates the journal structurally and returns its compact JSON form.
func (j *Journal) ToJSON() ([]byte, error) {
	if err := j.ensureValid(); err != nil {
		return nil, err
	}
	return j.appendJSON(make([]byte, 0, j.size)), nil
}

// AppendJSON validates the journal structurally and appends its compact JSON form to dst.
func (j *Journal) AppendJSON(dst []byte) ([]byte, error) {
	if err := j.ensureValid(); err != nil {
		return dst, err
	}
	return j.appendJSON(dst), nil
}

func (j *Journal) find(key string) int {
	for i := range j.records {
		if j.records[i].OperationKey == key {
			return i
		}
	}
	return -1
}

// ValidateScope checks that expected is a token and equals the journal's scope.
func (j *Journal) ValidateScope(expected string) error {
	return protocol.ValidateJournalScope(expected, j.scope)
}

// ensureValid runs the structural validation unless the journal is known to be valid. A
// journal's fields change only through committed mutations, each of which re-establishes
// validity, so the cached result stands for a full re-validation.
func (j *Journal) ensureValid() error {
	if j == nil {
		return &protocol.Error{Kind: protocol.ErrUnsupportedOperationJournalVersion}
	}
	if j.valid {
		return nil
	}
	size, err := j.validateAndBound()
	if err != nil {
		return err
	}
	j.valid, j.size = true, size
	return nil
}

// validateAndBound is the structural validation of spec JRN-006; it returns the serialized
// length.
func (j *Journal) validateAndBound() (int, error) {
	if j.formatVersion != protocol.WorkerOperationJournalFormatVersion {
		return 0, &protocol.Error{Kind: protocol.ErrUnsupportedOperationJournalVersion, Actual: uint64(j.formatVersion)}
	}
	if err := protocol.ValidateToken(protocol.FieldJournalScope, j.scope); err != nil {
		return 0, err
	}
	if len(j.records) > protocol.MaxWorkerOperationRecords {
		return 0, tooManyOperations()
	}
	seen := make(map[string]struct{}, len(j.records))
	for i := range j.records {
		r := &j.records[i]
		if err := validateRecord(r); err != nil {
			return 0, err
		}
		if _, dup := seen[r.OperationKey]; dup {
			return 0, &protocol.Error{Kind: protocol.ErrDuplicateOperationKey, Value: r.OperationKey}
		}
		seen[r.OperationKey] = struct{}{}
	}
	size := len(j.appendJSON(make([]byte, 0, 1024)))
	if err := checkSize(size); err != nil {
		return 0, err
	}
	return size, nil
}

func tooManyOperations() error {
	return &protocol.Error{Kind: protocol.ErrTooManyWorkerOperations, Maximum: protocol.MaxWorkerOperationRecords}
}

func checkSize(size int) error {
	if size > protocol.MaxWorkerOperationJournalBytes {
		return &protocol.Error{Kind: protocol.ErrOperationJournalTooLarge, Actual: uint64(size), Maximum: protocol.MaxWorkerOperationJournalBytes}
	}
	return nil
}

func invalidFingerprint() error {
	return &protocol.Error{Kind: protocol.ErrInvalidOperationFingerprint}
}

// validateRecord checks one record in the reference's order.
func validateRecord(r *Record) error {
	if err := protocol.ValidateToken(protocol.FieldTool, r.Tool); err != nil {
		return err
	}
	if err := protocol.ValidateToken(protocol.FieldOperationKey, r.OperationKey); err != nil {
		return err
	}
	if !protocol.IsFingerprint(r.InputFingerprint) {
		return invalidFingerprint()
	}
	if err := r.State.ValidateState(); err != nil {
		return err
	}
	c := r.Compensation
	if c == nil {
		return nil
	}
	if r.State.State != protocol.StateSucceeded {
		return &protocol.Error{Kind: protocol.ErrCompensationRequiresSucceededOperation, Value: r.OperationKey, State: r.State.State}
	}
	if err := protocol.ValidateCompensationKey(c.CompensationKey); err != nil {
		return err
	}
	if !protocol.IsFingerprint(c.InputFingerprint) {
		return invalidFingerprint()
	}
	if !protocol.IsFingerprint(c.GrantFingerprint) {
		return &protocol.Error{Kind: protocol.ErrInvalidCompensationGrantFingerprint}
	}
	return c.State.ValidateState()
}

// stateForGrant re-checks a stored state against the current grant (JRN-016).
func stateForGrant(s protocol.OperationStatus, g protocol.CapabilityGrant) error {
	if err := s.ValidateState(); err != nil {
		return err
	}
	if s.State == protocol.StatePending {
		return nil
	}
	return authorizer.ValidateStatusForGrant(s, g)
}

// accepts applies the transition table (JRN-018).
func accepts(current, observed protocol.OperationStatus) bool {
	switch current.State {
	case protocol.StatePending, protocol.StateRunning:
		return observed.State != protocol.StatePending
	}
	return current.Equal(observed)
}

// Admit records the intent of an authorized durable dispatch (JRN-013). A new operation key is
// appended as pending and reported as Dispatch; an exact duplicate reports Existing with the
// stored state and changes nothing.
func (j *Journal) Admit(auth authorizer.AuthorizedOperationInvocation) (Admission, error) {
	if err := j.ensureValid(); err != nil {
		return Admission{}, err
	}
	req := auth.Request()
	input, err := protocol.OperationInputFingerprint(req.Payload)
	if err != nil {
		return Admission{}, err
	}
	if i := j.find(req.OperationKey); i >= 0 {
		r := &j.records[i]
		if r.Tool != req.Tool || r.InputFingerprint != input {
			return Admission{}, identityMismatch(req.OperationKey)
		}
		if err := stateForGrant(r.State, auth.Grant()); err != nil {
			return Admission{}, err
		}
		return Admission{Kind: Existing, State: r.State}, nil
	}
	if len(j.records) >= protocol.MaxWorkerOperationRecords {
		return Admission{}, tooManyOperations()
	}
	rec := Record{
		Tool: req.Tool, OperationKey: req.OperationKey, InputFingerprint: input,
		State: protocol.OperationStatus{State: protocol.StatePending},
	}
	if err := validateRecord(&rec); err != nil {
		return Admission{}, err
	}
	size := j.size + j.recordLen(&rec)
	if len(j.records) > 0 {
		size++ // the separating comma
	}
	if err := checkSize(size); err != nil {
		return Admission{}, err
	}
	j.records = append(j.records, rec)
	j.size = size
	return Admission{Kind: Dispatch}, nil
}

func identityMismatch(key string) error {
	return &protocol.Error{Kind: protocol.ErrOperationIdentityMismatch, Value: key}
}

// setOperationState applies an observed status to record i: the transition check, then a
// no-op for an identical state, else the bounded write.
func (j *Journal) setOperationState(i int, observed protocol.OperationStatus) (protocol.OperationStatus, error) {
	r := &j.records[i]
	if !accepts(r.State, observed) {
		return protocol.OperationStatus{}, &protocol.Error{
			Kind: protocol.ErrInvalidWorkerOperationTransition, Value: r.OperationKey,
			State: r.State.State, Observed: observed.State,
		}
	}
	if r.State.Equal(observed) {
		return observed, nil
	}
	size := j.size - j.stateLen(r.State) + j.stateLen(observed)
	if err := checkSize(size); err != nil {
		return protocol.OperationStatus{}, err
	}
	r.State = observed
	j.size = size
	return observed, nil
}

// Observe records a status an adapter reported for an admitted operation (JRN-015).
func (j *Journal) Observe(auth authorizer.AuthorizedOperationInvocation, status protocol.OperationStatus) (protocol.OperationStatus, error) {
	if err := j.ensureValid(); err != nil {
		return protocol.OperationStatus{}, err
	}
	if err := authorizer.ValidateStatusForGrant(status, auth.Grant()); err != nil {
		return protocol.OperationStatus{}, err
	}
	req := auth.Request()
	input, err := protocol.OperationInputFingerprint(req.Payload)
	if err != nil {
		return protocol.OperationStatus{}, err
	}
	i := j.find(req.OperationKey)
	if i < 0 {
		return protocol.OperationStatus{}, unknownOperation(req.OperationKey)
	}
	if r := &j.records[i]; r.Tool != req.Tool || r.InputFingerprint != input {
		return protocol.OperationStatus{}, identityMismatch(req.OperationKey)
	}
	return j.setOperationState(i, status)
}

func unknownOperation(key string) error {
	return &protocol.Error{Kind: protocol.ErrUnknownOperation, Value: key}
}

// ValidateReconciliation checks that an authorized reconciliation names an operation this
// journal holds, for the same tool, and that its stored state is valid under the current grant
// (JRN-017).
func (j *Journal) ValidateReconciliation(auth authorizer.AuthorizedOperationReconciliation) error {
	_, err := j.reconciliationIndex(auth)
	return err
}

func (j *Journal) reconciliationIndex(auth authorizer.AuthorizedOperationReconciliation) (int, error) {
	if err := j.ensureValid(); err != nil {
		return -1, err
	}
	req := auth.Request()
	i := j.find(req.OperationKey)
	if i < 0 {
		return -1, unknownOperation(req.OperationKey)
	}
	r := &j.records[i]
	if r.Tool != req.Tool {
		return -1, identityMismatch(req.OperationKey)
	}
	if err := stateForGrant(r.State, auth.Grant()); err != nil {
		return -1, err
	}
	return i, nil
}

// ObserveReconciliation records a status an adapter reported for a reconciliation (JRN-017).
func (j *Journal) ObserveReconciliation(auth authorizer.AuthorizedOperationReconciliation, status protocol.OperationStatus) (protocol.OperationStatus, error) {
	i, err := j.reconciliationIndex(auth)
	if err != nil {
		return protocol.OperationStatus{}, err
	}
	if err := authorizer.ValidateStatusForGrant(status, auth.Grant()); err != nil {
		return protocol.OperationStatus{}, err
	}
	return j.setOperationState(i, status)
}

// compensationTarget runs the checks AdmitCompensation and ObserveCompensation share after
// their first steps: scope, input fingerprint, original operation, tool.
func (j *Journal) compensationTarget(req protocol.OperationCompensationRequest) (int, string, error) {
	if err := j.ValidateScope(req.TenantScope); err != nil {
		return -1, "", err
	}
	input, err := protocol.OperationInputFingerprint(req.Payload)
	if err != nil {
		return -1, "", err
	}
	i := j.find(req.OperationKey)
	if i < 0 {
		return -1, "", unknownOperation(req.OperationKey)
	}
	if j.records[i].Tool != req.Tool {
		return -1, "", &protocol.Error{Kind: protocol.ErrCompensationToolMismatch, Value: req.OperationKey}
	}
	return i, input, nil
}

func sameCompensation(c *CompensationRecord, req protocol.OperationCompensationRequest, input string) error {
	if c.CompensationKey != req.CompensationKey || c.InputFingerprint != input || c.GrantFingerprint != req.GrantFingerprint {
		return &protocol.Error{Kind: protocol.ErrCompensationIdentityMismatch, Value: req.OperationKey}
	}
	return nil
}

// AdmitCompensation records the intent of an authorized compensation of a succeeded operation
// (JRN-020). An operation carries at most one compensation; an exact duplicate reports Existing
// with the stored state.
func (j *Journal) AdmitCompensation(auth authorizer.AuthorizedOperationCompensation) (Admission, error) {
	if err := j.ensureValid(); err != nil {
		return Admission{}, err
	}
	req := auth.Request()
	i, input, err := j.compensationTarget(req)
	if err != nil {
		return Admission{}, err
	}
	r := &j.records[i]
	if r.State.State != protocol.StateSucceeded {
		return Admission{}, &protocol.Error{Kind: protocol.ErrCompensationRequiresSucceededOperation, Value: req.OperationKey, State: r.State.State}
	}
	if c := r.Compensation; c != nil {
		if err := sameCompensation(c, req, input); err != nil {
			return Admission{}, err
		}
		if err := stateForGrant(c.State, auth.Grant()); err != nil {
			return Admission{}, err
		}
		return Admission{Kind: Existing, State: c.State}, nil
	}
	candidate := r.clone()
	candidate.Compensation = &CompensationRecord{
		CompensationKey: req.CompensationKey, InputFingerprint: input, GrantFingerprint: req.GrantFingerprint,
		State: protocol.OperationStatus{State: protocol.StatePending},
	}
	if err := validateRecord(&candidate); err != nil {
		return Admission{}, err
	}
	size := j.size - j.recordLen(r) + j.recordLen(&candidate)
	if err := checkSize(size); err != nil {
		return Admission{}, err
	}
	*r = candidate
	j.size = size
	return Admission{Kind: Dispatch}, nil
}

// ObserveCompensation records a status an adapter reported for an admitted compensation
// (JRN-022).
func (j *Journal) ObserveCompensation(auth authorizer.AuthorizedOperationCompensation, status protocol.OperationStatus) (protocol.OperationStatus, error) {
	if err := j.ensureValid(); err != nil {
		return protocol.OperationStatus{}, err
	}
	if err := authorizer.ValidateStatusForGrant(status, auth.Grant()); err != nil {
		return protocol.OperationStatus{}, err
	}
	req := auth.Request()
	i, input, err := j.compensationTarget(req)
	if err != nil {
		return protocol.OperationStatus{}, err
	}
	c := j.records[i].Compensation
	if c == nil {
		return protocol.OperationStatus{}, &protocol.Error{Kind: protocol.ErrUnknownCompensation, Value: req.OperationKey}
	}
	if err := sameCompensation(c, req, input); err != nil {
		return protocol.OperationStatus{}, err
	}
	if !accepts(c.State, status) {
		return protocol.OperationStatus{}, &protocol.Error{
			Kind: protocol.ErrInvalidWorkerCompensationTransition, Value: req.OperationKey,
			State: c.State.State, Observed: status.State,
		}
	}
	if c.State.Equal(status) {
		return status, nil
	}
	size := j.size - j.stateLen(c.State) + j.stateLen(status)
	if err := checkSize(size); err != nil {
		return protocol.OperationStatus{}, err
	}
	// Replace the compensation record rather than writing through the shared pointer, so that
	// copies handed out earlier never observe the change.
	updated := *c
	updated.State = status
	j.records[i].Compensation = &updated
	j.size = size
	return status, nil
}
