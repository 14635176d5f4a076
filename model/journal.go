package model

import "strconv"

// MaxJournalRecords is the number of records a journal may ever hold.
const MaxJournalRecords = 64

// MaxJournalBytes is the largest serialized journal, in bytes.
const MaxJournalBytes = 262144

// fingerprintLen is the length of a hex BLAKE3 fingerprint.
const fingerprintLen = 64

// JournalState is an abstract stored state: "pending", "running", "succeeded", "failed" or
// "cancelled". Payload is meaningful for "succeeded", Message for "failed".
type JournalState struct {
	State   string
	Payload Payload
	Message string
}

// same reports whether two stored states are equal values.
func (s JournalState) same(o JournalState) bool {
	if s.State != o.State {
		return false
	}
	switch s.State {
	case "succeeded":
		return s.Payload.Format == o.Payload.Format && s.Payload.Value == o.Payload.Value
	case "failed":
		return s.Message == o.Message
	}
	return true
}

// JournalCompensation is an abstract compensation record.
type JournalCompensation struct {
	Key              string
	Input            string // identity label of the compensation input payload
	GrantFingerprint string
	State            JournalState
}

// JournalRecord is an abstract operation record.
type JournalRecord struct {
	Tool         string
	Key          string
	Input        string // identity label of the dispatch input payload
	State        JournalState
	Compensation *JournalCompensation
}

// Journal models a worker operation journal.
type Journal struct {
	Scope   string
	Records []JournalRecord
}

// NewJournal returns an empty model journal.
func NewJournal(scope string) *Journal { return &Journal{Scope: scope} }

// Admission outcomes.
const (
	AdmitDispatch = "dispatch"
	AdmitExisting = "existing"
)

// stateLen is the length of a state's compact JSON form. Messages are assumed to need no
// escaping.
func stateLen(s JournalState) int {
	switch s.State {
	case "succeeded":
		return len(`{"state":"succeeded","payload":`) + s.Payload.WireLen + len(`}`)
	case "failed":
		return len(`{"state":"failed","message":"`) + len(s.Message) + len(`"}`)
	default:
		return len(`{"state":""}`) + len(s.State)
	}
}

func recordLen(r JournalRecord) int {
	n := len(`{"tool":"","operation_key":"","input_fingerprint":"","state":,"compensation":}`)
	n += len(r.Tool) + len(r.Key) + fingerprintLen + stateLen(r.State)
	if r.Compensation == nil {
		return n + len("null")
	}
	c := r.Compensation
	n += len(`{"compensation_key":"","input_fingerprint":"","grant_fingerprint":"","state":}`)
	return n + len(c.Key) + fingerprintLen + len(c.GrantFingerprint) + stateLen(c.State)
}

// Size returns the length of the journal's compact JSON form.
func (j *Journal) Size() int {
	n := len(`{"format_version":2,"scope":"","records":[]}`) + len(j.Scope)
	for i, r := range j.Records {
		if i > 0 {
			n++
		}
		n += recordLen(r)
	}
	return n
}

// Describe returns a short summary of the journal, used in test failure messages.
func (j *Journal) Describe() string {
	s := j.Scope + ":"
	for _, r := range j.Records {
		s += " " + r.Key + "=" + r.State.State
		if r.Compensation != nil {
			s += "+" + r.Compensation.Key + "=" + r.Compensation.State.State
		}
	}
	return s + " (" + strconv.Itoa(j.Size()) + " bytes)"
}

func (j *Journal) find(key string) int {
	for i, r := range j.Records {
		if r.Key == key {
			return i
		}
	}
	return -1
}

// stateForGrant re-checks a stored state against a grant.
func stateForGrant(s JournalState, g Grant) string {
	if s.State == "pending" {
		return ""
	}
	return StatusForGrant(Status(s), g)
}

// accepts applies the transition table; it returns whether the observation is allowed.
func accepts(current, observed JournalState) bool {
	switch current.State {
	case "pending", "running":
		return true
	}
	return current.same(observed)
}

func (j *Journal) clone() *Journal {
	c := &Journal{Scope: j.Scope, Records: make([]JournalRecord, len(j.Records))}
	copy(c.Records, j.Records)
	for i := range c.Records {
		if cmp := c.Records[i].Compensation; cmp != nil {
			copied := *cmp
			c.Records[i].Compensation = &copied
		}
	}
	return c
}

// commit replaces j with the candidate unless the candidate is over the size bound.
func (j *Journal) commit(candidate *Journal) string {
	if candidate.Size() > MaxJournalBytes {
		return "OperationJournalTooLarge"
	}
	*j = *candidate
	return ""
}

func (j *Journal) checkScope(expected string) string {
	if !IsToken(expected) {
		return "InvalidToken"
	}
	if expected != j.Scope {
		return "OperationJournalScopeMismatch"
	}
	return ""
}

// Admit models admitting an authorized dispatch.
func (j *Journal) Admit(tk Ticket) (string, JournalState, string) {
	d := tk.Dispatch
	if i := j.find(d.OperationKey); i >= 0 {
		r := j.Records[i]
		if r.Tool != d.Tool || r.Input != d.Payload.Value {
			return "", JournalState{}, "OperationIdentityMismatch"
		}
		if e := stateForGrant(r.State, tk.Grant); e != "" {
			return "", JournalState{}, e
		}
		return AdmitExisting, r.State, ""
	}
	if len(j.Records) >= MaxJournalRecords {
		return "", JournalState{}, "TooManyWorkerOperations"
	}
	c := j.clone()
	c.Records = append(c.Records, JournalRecord{Tool: d.Tool, Key: d.OperationKey, Input: d.Payload.Value, State: JournalState{State: "pending"}})
	if e := j.commit(c); e != "" {
		return "", JournalState{}, e
	}
	return AdmitDispatch, JournalState{State: "pending"}, ""
}

func observed(s Status) JournalState { return JournalState(s) }

// setState applies a transition to record i (or its compensation) and commits it.
func (j *Journal) setState(i int, onCompensation bool, obs JournalState, transitionError string) (JournalState, string) {
	current := j.Records[i].State
	if onCompensation {
		current = j.Records[i].Compensation.State
	}
	if !accepts(current, obs) {
		return JournalState{}, transitionError
	}
	if current.same(obs) {
		return obs, ""
	}
	c := j.clone()
	if onCompensation {
		c.Records[i].Compensation.State = obs
	} else {
		c.Records[i].State = obs
	}
	if e := j.commit(c); e != "" {
		return JournalState{}, e
	}
	return obs, ""
}

// Observe models recording a status for an authorized dispatch.
func (j *Journal) Observe(tk Ticket, s Status) (JournalState, string) {
	if e := StatusForGrant(s, tk.Grant); e != "" {
		return JournalState{}, e
	}
	d := tk.Dispatch
	i := j.find(d.OperationKey)
	if i < 0 {
		return JournalState{}, "UnknownOperation"
	}
	if r := j.Records[i]; r.Tool != d.Tool || r.Input != d.Payload.Value {
		return JournalState{}, "OperationIdentityMismatch"
	}
	return j.setState(i, false, observed(s), "InvalidWorkerOperationTransition")
}

// ValidateReconciliation models checking an authorized reconciliation against the journal.
func (j *Journal) ValidateReconciliation(tk Ticket) string {
	q := tk.Reconcile
	i := j.find(q.OperationKey)
	if i < 0 {
		return "UnknownOperation"
	}
	if j.Records[i].Tool != q.Tool {
		return "OperationIdentityMismatch"
	}
	return stateForGrant(j.Records[i].State, tk.Grant)
}

// ObserveReconciliation models recording a status for an authorized reconciliation.
func (j *Journal) ObserveReconciliation(tk Ticket, s Status) (JournalState, string) {
	if e := j.ValidateReconciliation(tk); e != "" {
		return JournalState{}, e
	}
	if e := StatusForGrant(s, tk.Grant); e != "" {
		return JournalState{}, e
	}
	return j.setState(j.find(tk.Reconcile.OperationKey), false, observed(s), "InvalidWorkerOperationTransition")
}

// AdmitCompensation models admitting an authorized compensation.
func (j *Journal) AdmitCompensation(tk Ticket) (string, JournalState, string) {
	c := tk.Compensation
	if e := j.checkScope(c.TenantScope); e != "" {
		return "", JournalState{}, e
	}
	i := j.find(c.OperationKey)
	if i < 0 {
		return "", JournalState{}, "UnknownOperation"
	}
	r := j.Records[i]
	if r.Tool != c.Tool {
		return "", JournalState{}, "CompensationToolMismatch"
	}
	if r.State.State != "succeeded" {
		return "", JournalState{}, "CompensationRequiresSucceededOperation"
	}
	if r.Compensation != nil {
		rc := r.Compensation
		if rc.Key != c.CompensationKey || rc.Input != c.Payload.Value || rc.GrantFingerprint != c.GrantFingerprint {
			return "", JournalState{}, "CompensationIdentityMismatch"
		}
		if e := stateForGrant(rc.State, tk.Grant); e != "" {
			return "", JournalState{}, e
		}
		return AdmitExisting, rc.State, ""
	}
	cand := j.clone()
	cand.Records[i].Compensation = &JournalCompensation{
		Key: c.CompensationKey, Input: c.Payload.Value, GrantFingerprint: c.GrantFingerprint,
		State: JournalState{State: "pending"},
	}
	if e := j.commit(cand); e != "" {
		return "", JournalState{}, e
	}
	return AdmitDispatch, JournalState{State: "pending"}, ""
}

// ObserveCompensation models recording a status for an authorized compensation.
func (j *Journal) ObserveCompensation(tk Ticket, s Status) (JournalState, string) {
	if e := StatusForGrant(s, tk.Grant); e != "" {
		return JournalState{}, e
	}
	c := tk.Compensation
	if e := j.checkScope(c.TenantScope); e != "" {
		return JournalState{}, e
	}
	i := j.find(c.OperationKey)
	if i < 0 {
		return JournalState{}, "UnknownOperation"
	}
	r := j.Records[i]
	if r.Tool != c.Tool {
		return JournalState{}, "CompensationToolMismatch"
	}
	rc := r.Compensation
	if rc == nil {
		return JournalState{}, "UnknownCompensation"
	}
	if rc.Key != c.CompensationKey || rc.Input != c.Payload.Value || rc.GrantFingerprint != c.GrantFingerprint {
		return JournalState{}, "CompensationIdentityMismatch"
	}
	return j.setState(i, true, observed(s), "InvalidWorkerCompensationTransition")
}
