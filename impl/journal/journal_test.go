package journal_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/splashv5/conform/impl/authorizer"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/journal"
	"github.com/splashv5/conform/impl/protocol"
)

// The journal of reference anchor A8 (docs/reference-anchors.md), which holds the fingerprints
// of anchors A5 and A7.
const vector8 = `{"format_version":2,"scope":"tenant-release","records":[{"tool":"release.publish","operation_key":"release-42-add","input_fingerprint":"47a67a884b85e9385cedfd6cb717c9ff4f361ac2fee1f2085096df0902e4936d","state":{"state":"succeeded","payload":{"format":"json","value":{"total":42}}},"compensation":{"compensation_key":"cmp-undo-1","input_fingerprint":"5cc121e4a0ce2f79ae6b83397eb4f81a66bf12a9b1fe5836835a8118de24d578","grant_fingerprint":"b4586b43cee35f3490e1be033cf424c5d927417c4e5af7cd685123764a8c8be9","state":{"state":"pending"}}}]}`

// Spec: JRN-001, JRN-002, JRN-011, JRN-013, JRN-015, JRN-020, JRN-023
func TestVector8(t *testing.T) {
	for _, mode := range []canonjson.Mode{canonjson.Preserve, canonjson.Lossy} {
		t.Run(mode.String(), func(t *testing.T) {
			s := newIssuer(t, []protocol.CapabilityGrant{releaseGrant()})
			j := newJournal(t, scope)
			if got := string(toJSON(t, j)); got != `{"format_version":2,"scope":"tenant-release","records":[]}` {
				t.Fatalf("empty journal %s", got)
			}
			auth := s.op("release.publish", "release-42-add", protocol.JSONPayload(value(t, vectorInput, mode)))
			mustAdmit(t, j, auth)
			want := `{"format_version":2,"scope":"tenant-release","records":[{"tool":"release.publish","operation_key":"release-42-add","input_fingerprint":"` + inputFingerprint + `","state":{"state":"pending"},"compensation":null}]}`
			if got := string(toJSON(t, j)); got != want {
				t.Fatalf("after admit:\n got %s\nwant %s", got, want)
			}
			st, err := j.Observe(auth, protocol.Succeeded(protocol.JSONPayload(value(t, `{"total":42}`, mode))))
			if err != nil || st.State != protocol.StateSucceeded {
				t.Fatalf("observe: %v %v", st.State, err)
			}
			comp, err := s.a.AuthorizeCompensation(protocol.OperationCompensationRequest{
				ProtocolVersion: 5, SessionID: session, RequestID: "comp-1", Tool: "release.publish", OperationKey: "release-42-add",
				CompensationKey: "cmp-undo-1", TenantScope: scope, GrantFingerprint: releaseFingerprint,
				Payload: protocol.JSONPayload(value(t, vectorUndo, mode)),
			})
			if err != nil {
				t.Fatal(err)
			}
			adm, err := j.AdmitCompensation(comp)
			if err != nil || adm.Kind != journal.Dispatch {
				t.Fatalf("admit compensation: %v %v", adm.Kind, err)
			}
			got := toJSON(t, j)
			if string(got) != vector8 {
				t.Fatalf("anchor A8:\n got %s\nwant %s", got, vector8)
			}
			if j.Size() != len(vector8) {
				t.Fatalf("Size %d, want %d", j.Size(), len(vector8))
			}
			back, err := journal.FromJSON(got, mode)
			if err != nil {
				t.Fatal(err)
			}
			if !back.Equal(j) || !bytes.Equal(toJSON(t, back), got) {
				t.Fatal("anchor A8 does not round-trip")
			}
		})
	}
}

// outcome is what an observation does to a stored state.
type outcome uint8

const (
	write  outcome = iota + 1 // the observed state is stored
	noop                      // accepted, nothing changes
	reject                    // transition error, nothing changes
)

// Spec: JRN-010, JRN-018, JRN-019
func TestTransitionTable(t *testing.T) {
	payloadA := `{"a":1,"b":2}`
	payloadASame := `{"b":2,"a":1}` // the same value, members in another order
	payloadB := `{"a":1,"b":3}`
	observed := []struct {
		name   string
		status func(t *testing.T) protocol.OperationStatus
	}{
		{"R", func(*testing.T) protocol.OperationStatus { return protocol.Running() }},
		{"S(a)", func(t *testing.T) protocol.OperationStatus { return protocol.Succeeded(jp(t, payloadA)) }},
		{"S(a')", func(t *testing.T) protocol.OperationStatus { return protocol.Succeeded(jp(t, payloadASame)) }},
		{"S(b)", func(t *testing.T) protocol.OperationStatus { return protocol.Succeeded(jp(t, payloadB)) }},
		{"F(m0)", func(*testing.T) protocol.OperationStatus { return protocol.Failed("boom") }},
		{"F(m1)", func(*testing.T) protocol.OperationStatus { return protocol.Failed("bang") }},
		{"C", func(*testing.T) protocol.OperationStatus { return protocol.Cancelled() }},
	}
	// current state -> the status that reaches it (none for pending) and the expected outcome
	// of each observation, in the order of observed.
	table := []struct {
		current string
		reach   func(t *testing.T) *protocol.OperationStatus
		kind    protocol.WorkerOperationStateKind
		want    [7]outcome
	}{
		{"pending", func(*testing.T) *protocol.OperationStatus { return nil }, protocol.StatePending,
			[7]outcome{write, write, write, write, write, write, write}},
		{"running", func(*testing.T) *protocol.OperationStatus { s := protocol.Running(); return &s }, protocol.StateRunning,
			[7]outcome{noop, write, write, write, write, write, write}},
		{"S(a)", func(t *testing.T) *protocol.OperationStatus { s := protocol.Succeeded(jp(t, payloadA)); return &s }, protocol.StateSucceeded,
			[7]outcome{reject, noop, noop, reject, reject, reject, reject}},
		{"F(m0)", func(*testing.T) *protocol.OperationStatus { s := protocol.Failed("boom"); return &s }, protocol.StateFailed,
			[7]outcome{reject, reject, reject, reject, noop, reject, reject}},
		{"C", func(*testing.T) *protocol.OperationStatus { s := protocol.Cancelled(); return &s }, protocol.StateCancelled,
			[7]outcome{reject, reject, reject, reject, reject, reject, noop}},
	}
	for _, row := range table {
		for i, obs := range observed {
			want := row.want[i]
			t.Run("operation/"+row.current+"/"+obs.name, func(t *testing.T) {
				s := wide(t)
				j := newJournal(t, scope)
				auth := s.op("calc", "op-1", jp(t, `{"x":1}`))
				mustAdmit(t, j, auth)
				if st := row.reach(t); st != nil {
					mustObserve(t, j, auth, *st)
				}
				checkObservation(t, j, want, row.kind, obs.status(t), protocol.ErrInvalidWorkerOperationTransition,
					func(st protocol.OperationStatus) (protocol.OperationStatus, error) { return j.Observe(auth, st) },
					func() protocol.OperationStatus { r, _ := j.Operation("op-1"); return r.State })
			})
			t.Run("reconciliation/"+row.current+"/"+obs.name, func(t *testing.T) {
				s := wide(t)
				j := newJournal(t, scope)
				auth := s.op("calc", "op-1", jp(t, `{"x":1}`))
				mustAdmit(t, j, auth)
				if st := row.reach(t); st != nil {
					mustObserve(t, j, auth, *st)
				}
				rec := s.rec("calc", "op-1")
				checkObservation(t, j, want, row.kind, obs.status(t), protocol.ErrInvalidWorkerOperationTransition,
					func(st protocol.OperationStatus) (protocol.OperationStatus, error) {
						return j.ObserveReconciliation(rec, st)
					},
					func() protocol.OperationStatus { r, _ := j.Operation("op-1"); return r.State })
			})
			t.Run("compensation/"+row.current+"/"+obs.name, func(t *testing.T) {
				s := wide(t)
				j := newJournal(t, scope)
				auth := s.op("calc", "op-1", jp(t, `{"x":1}`))
				mustAdmit(t, j, auth)
				mustObserve(t, j, auth, protocol.Succeeded(jp(t, `{"done":true}`)))
				comp := s.cmp("calc", "op-1", "cmp-1", scope, jp(t, `{"undo":1}`))
				if a, err := j.AdmitCompensation(comp); err != nil || a.Kind != journal.Dispatch {
					t.Fatalf("admit compensation: %v %v", a, err)
				}
				if st := row.reach(t); st != nil {
					if _, err := j.ObserveCompensation(comp, *st); err != nil {
						t.Fatal(err)
					}
				}
				checkObservation(t, j, want, row.kind, obs.status(t), protocol.ErrInvalidWorkerCompensationTransition,
					func(st protocol.OperationStatus) (protocol.OperationStatus, error) {
						return j.ObserveCompensation(comp, st)
					},
					func() protocol.OperationStatus { r, _ := j.Operation("op-1"); return r.Compensation.State })
			})
		}
	}
}

func checkObservation(t *testing.T, j *journal.Journal, want outcome, current protocol.WorkerOperationStateKind, obs protocol.OperationStatus,
	transitionErr protocol.ErrorKind, observe func(protocol.OperationStatus) (protocol.OperationStatus, error), stored func() protocol.OperationStatus) {
	t.Helper()
	before := toJSON(t, j)
	prior := stored()
	got, err := observe(obs)
	switch want {
	case reject:
		var pe *protocol.Error
		if !errors.As(err, &pe) || pe.Kind != transitionErr || pe.Value != "op-1" || pe.State != current || pe.Observed != obs.State {
			t.Fatalf("got %v, want %v{op-1,%v,%v}", err, transitionErr, current, obs.State)
		}
		unchanged(t, j, before)
	case noop:
		if err != nil || !got.Equal(obs) {
			t.Fatalf("no-op observation: %v %v", got, err)
		}
		unchanged(t, j, before)
		if !stored().Equal(prior) {
			t.Fatal("stored state changed on a no-op")
		}
	case write:
		if err != nil || !got.Equal(obs) || !stored().Equal(obs) {
			t.Fatalf("write: %v %v", got, err)
		}
		if j.Size() != len(toJSON(t, j)) {
			t.Fatal("size out of step with the serialized journal")
		}
	}
}

// Spec: JRN-019
func TestTerminalPayloadEqualityByMode(t *testing.T) {
	cases := []struct {
		stored, observed string
		preserve, lossy  bool // whether the observation is an accepted no-op
	}{
		{`{"n":1.0}`, `{"n":1.00}`, false, true},
		{`{"n":1.5}`, `{"n":15e-1}`, false, true},
		{`{"n":1}`, `{"n":1.0}`, false, false},
		{`{"n":100}`, `{"n":1e2}`, false, false},
		{`{"a":[1,2],"b":null}`, `{"b":null,"a":[1,2]}`, true, true},
		{`{"a":[1,2]}`, `{"a":[2,1]}`, false, false},
	}
	for _, c := range cases {
		for _, mode := range []canonjson.Mode{canonjson.Preserve, canonjson.Lossy} {
			t.Run(mode.String()+" "+c.stored+" "+c.observed, func(t *testing.T) {
				s := wide(t)
				j := newJournal(t, scope)
				auth := s.op("calc", "op", jp(t, `{}`))
				mustAdmit(t, j, auth)
				mustObserve(t, j, auth, protocol.Succeeded(protocol.JSONPayload(value(t, c.stored, mode))))
				_, err := j.Observe(auth, protocol.Succeeded(protocol.JSONPayload(value(t, c.observed, mode))))
				ok := c.preserve
				if mode == canonjson.Lossy {
					ok = c.lossy
				}
				if ok {
					wantKind(t, err, 0)
				} else {
					wantKind(t, err, protocol.ErrInvalidWorkerOperationTransition)
				}
			})
		}
	}
}

// Spec: JRN-010, JRN-011, JRN-013, JRN-014
func TestAdmitDuplicatesAndDrift(t *testing.T) {
	s := wide(t)
	j := newJournal(t, "some-other-scope") // admission does not look at the scope
	first := s.op("calc", "op-1", jp(t, `{"a":1,"b":[true,null]}`))
	mustAdmit(t, j, first)
	before := toJSON(t, j)

	// An exact duplicate, even with members reordered, returns the stored pending state.
	dup := s.op("calc", "op-1", jp(t, `{"b":[true,null],"a":1}`))
	a, err := j.Admit(dup)
	if err != nil || a.Kind != journal.Existing || a.State.State != protocol.StatePending {
		t.Fatalf("duplicate admit: %+v %v", a, err)
	}
	unchanged(t, j, before)

	// The same key with another input or another tool is rejected.
	for name, auth := range map[string]authorizer.AuthorizedOperationInvocation{
		"input": s.op("calc", "op-1", jp(t, `{"a":2,"b":[true,null]}`)),
		"tool":  s.op("echo", "op-1", protocol.TextPayload(`{"a":1,"b":[true,null]}`)),
	} {
		_, err := j.Admit(auth)
		var pe *protocol.Error
		if !errors.As(err, &pe) || pe.Kind != protocol.ErrOperationIdentityMismatch || pe.Value != "op-1" {
			t.Fatalf("%s drift: got %v, want OperationIdentityMismatch(op-1)", name, err)
		}
		_, err = j.Observe(auth, protocol.Running())
		wantKind(t, err, protocol.ErrOperationIdentityMismatch)
		unchanged(t, j, before)
	}

	// After a terminal observation a duplicate returns the terminal state.
	mustObserve(t, j, first, protocol.Failed("gave up"))
	a, err = j.Admit(s.op("calc", "op-1", jp(t, `{"a":1,"b":[true,null]}`)))
	if err != nil || a.Kind != journal.Existing || !a.State.Equal(protocol.Failed("gave up")) {
		t.Fatalf("duplicate after failure: %+v %v", a, err)
	}
	// Text inputs are identified by their exact bytes.
	mustAdmit(t, j, s.op("echo", "op-2", protocol.TextPayload("héllo")))
	a, err = j.Admit(s.op("echo", "op-2", protocol.TextPayload("héllo")))
	if err != nil || a.Kind != journal.Existing {
		t.Fatalf("text duplicate: %+v %v", a, err)
	}
	_, err = j.Admit(s.op("echo", "op-2", protocol.TextPayload("hello")))
	wantKind(t, err, protocol.ErrOperationIdentityMismatch)
	if j.Len() != 2 {
		t.Fatalf("%d records", j.Len())
	}
	// Records keep insertion order.
	if rs := j.Records(); rs[0].OperationKey != "op-1" || rs[1].OperationKey != "op-2" {
		t.Fatal("record order")
	}
}

// Spec: JRN-013, JRN-016, JRN-017
func TestStoredStateRecheckedAgainstCurrentGrant(t *testing.T) {
	s := wide(t)
	j := newJournal(t, scope)
	auth := s.op("calc", "op-1", jp(t, `{}`))
	mustAdmit(t, j, auth)
	mustObserve(t, j, auth, protocol.Succeeded(jp(t, `{"total":42}`))) // 12 bytes: within 64, over 8
	before := toJSON(t, j)

	// The same request under a grant whose output limit shrank to 8 bytes.
	_, err := j.Admit(narrow(t).op("calc", "op-1", jp(t, `{}`)))
	var pe *protocol.Error
	if !errors.As(err, &pe) || pe.Kind != protocol.ErrOutputTooLarge || pe.Actual != 12 || pe.Maximum != 8 {
		t.Fatalf("got %v, want OutputTooLarge{12,8}", err)
	}
	wantKind(t, j.ValidateReconciliation(narrow(t).rec("calc", "op-1")), protocol.ErrOutputTooLarge)
	// Under a grant whose format changed, reconciliation (which has no input) reports the
	// format mismatch.
	wantKind(t, j.ValidateReconciliation(flipped(t).rec("calc", "op-1")), protocol.ErrPayloadFormatMismatch)
	unchanged(t, j, before)
	// Pending, running, failed and cancelled states pass any grant.
	auth2 := s.op("calc", "op-2", jp(t, `{}`))
	mustAdmit(t, j, auth2)
	wantKind(t, j.ValidateReconciliation(narrow(t).rec("calc", "op-2")), 0)
	mustObserve(t, j, auth2, protocol.Failed("a failure message far longer than eight bytes"))
	if a, err := j.Admit(narrow(t).op("calc", "op-2", jp(t, `{}`))); err != nil || a.Kind != journal.Existing {
		t.Fatalf("failed state under a narrow grant: %v %v", a, err)
	}
}

// Spec: JRN-015, JRN-016
func TestObserveCheckOrder(t *testing.T) {
	setup := func(t *testing.T) (*issuer, *journal.Journal, authorizer.AuthorizedOperationInvocation) {
		s := wide(t)
		j := newJournal(t, scope)
		auth := s.op("calc", "op-1", jp(t, `{}`))
		mustAdmit(t, j, auth)
		mustObserve(t, j, auth, protocol.Cancelled())
		return s, j, auth
	}
	big := protocol.Succeeded(jp(t, `{"x":"`+string(bytes.Repeat([]byte("y"), 60))+`"}`)) // 68 bytes > 64
	cases := []struct {
		name   string
		auth   func(s *issuer, first authorizer.AuthorizedOperationInvocation) authorizer.AuthorizedOperationInvocation
		status protocol.OperationStatus
		want   protocol.ErrorKind
	}{
		{"status against grant before lookup", func(s *issuer, _ authorizer.AuthorizedOperationInvocation) authorizer.AuthorizedOperationInvocation {
			return s.op("calc", "unknown", jp(t, `{}`))
		}, big, protocol.ErrOutputTooLarge},
		{"status format before lookup", func(s *issuer, _ authorizer.AuthorizedOperationInvocation) authorizer.AuthorizedOperationInvocation {
			return s.op("calc", "unknown", jp(t, `{}`))
		}, protocol.Succeeded(protocol.TextPayload("x")), protocol.ErrPayloadFormatMismatch},
		{"status validity before lookup", func(s *issuer, _ authorizer.AuthorizedOperationInvocation) authorizer.AuthorizedOperationInvocation {
			return s.op("calc", "unknown", jp(t, `{}`))
		}, protocol.Failed(""), protocol.ErrInvalidOperationFailure},
		{"pending is never observed", func(s *issuer, first authorizer.AuthorizedOperationInvocation) authorizer.AuthorizedOperationInvocation {
			return first
		}, protocol.OperationStatus{State: protocol.StatePending}, protocol.ErrSerialization},
		{"lookup before identity", func(s *issuer, _ authorizer.AuthorizedOperationInvocation) authorizer.AuthorizedOperationInvocation {
			return s.op("echo", "unknown", protocol.TextPayload("x"))
		}, protocol.Running(), protocol.ErrUnknownOperation},
		{"identity before transition", func(s *issuer, _ authorizer.AuthorizedOperationInvocation) authorizer.AuthorizedOperationInvocation {
			return s.op("calc", "op-1", jp(t, `{"other":1}`))
		}, protocol.Running(), protocol.ErrOperationIdentityMismatch},
		{"transition", func(s *issuer, first authorizer.AuthorizedOperationInvocation) authorizer.AuthorizedOperationInvocation {
			return first
		}, protocol.Running(), protocol.ErrInvalidWorkerOperationTransition},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, j, first := setup(t)
			before := toJSON(t, j)
			_, err := j.Observe(c.auth(s, first), c.status)
			wantKind(t, err, c.want)
			unchanged(t, j, before)
		})
	}
}

// Spec: JRN-017
func TestReconciliationCheckOrder(t *testing.T) {
	s := wide(t)
	j := newJournal(t, "another-scope") // reconciliation does not look at the scope
	auth := s.op("calc", "op-1", jp(t, `{"input":"kept only as a fingerprint"}`))
	mustAdmit(t, j, auth)
	before := toJSON(t, j)
	wantKind(t, j.ValidateReconciliation(s.rec("calc", "op-2")), protocol.ErrUnknownOperation)
	wantKind(t, j.ValidateReconciliation(s.rec("echo", "op-1")), protocol.ErrOperationIdentityMismatch)
	wantKind(t, j.ValidateReconciliation(s.rec("calc", "op-1")), 0)
	// observe_reconciliation validates the reconciliation before the status.
	_, err := j.ObserveReconciliation(s.rec("calc", "op-2"), protocol.Failed(""))
	wantKind(t, err, protocol.ErrUnknownOperation)
	_, err = j.ObserveReconciliation(s.rec("echo", "op-1"), protocol.Failed(""))
	wantKind(t, err, protocol.ErrOperationIdentityMismatch)
	_, err = j.ObserveReconciliation(s.rec("calc", "op-1"), protocol.Failed(""))
	wantKind(t, err, protocol.ErrInvalidOperationFailure)
	_, err = j.ObserveReconciliation(s.rec("calc", "op-1"), protocol.Succeeded(protocol.TextPayload("x")))
	wantKind(t, err, protocol.ErrPayloadFormatMismatch)
	unchanged(t, j, before)
	st, err := j.ObserveReconciliation(s.rec("calc", "op-1"), protocol.Succeeded(jp(t, `[1]`)))
	if err != nil || st.State != protocol.StateSucceeded {
		t.Fatal(err)
	}
	// The stored state, under a narrower grant, is re-checked before the observation.
	_, err = j.ObserveReconciliation(narrow(t).rec("calc", "op-1"), protocol.Succeeded(jp(t, `[1]`)))
	wantKind(t, err, 0) // [1] is 3 bytes: fits 8
}

// Spec: JRN-008, JRN-020, JRN-021
func TestAdmitCompensationCheckOrder(t *testing.T) {
	type fixture struct {
		s *issuer
		j *journal.Journal
	}
	setup := func(t *testing.T, state *protocol.OperationStatus) fixture {
		s := wide(t)
		j := newJournal(t, scope)
		auth := s.op("calc", "op-1", jp(t, `{}`))
		mustAdmit(t, j, auth)
		if state != nil {
			mustObserve(t, j, auth, *state)
		}
		return fixture{s, j}
	}
	succeeded := protocol.Succeeded(jp(t, `{"ok":true}`))
	running := protocol.Running()
	withComp := func(t *testing.T) fixture {
		f := setup(t, &succeeded)
		if a, err := f.j.AdmitCompensation(f.s.cmp("calc", "op-1", "cmp-1", scope, jp(t, `{"undo":1}`))); err != nil || a.Kind != journal.Dispatch {
			t.Fatalf("%v %v", a, err)
		}
		return f
	}
	cases := []struct {
		name    string
		fixture func(t *testing.T) fixture
		auth    func(f fixture) authorizer.AuthorizedOperationCompensation
		want    protocol.ErrorKind
		detail  func(t *testing.T, pe *protocol.Error)
	}{
		{"scope before lookup", func(t *testing.T) fixture { return setup(t, &succeeded) }, func(f fixture) authorizer.AuthorizedOperationCompensation {
			return f.s.cmp("calc", "unknown", "cmp-1", "tenant-b", jp(t, `{}`))
		}, protocol.ErrOperationJournalScopeMismatch, func(t *testing.T, pe *protocol.Error) {
			if pe.ExpectedText != "tenant-b" || pe.ActualText != scope {
				t.Fatalf("scope mismatch details %q %q", pe.ExpectedText, pe.ActualText)
			}
		}},
		{"lookup before tool", func(t *testing.T) fixture { return setup(t, &succeeded) }, func(f fixture) authorizer.AuthorizedOperationCompensation {
			return f.s.cmp("echo", "unknown", "cmp-1", scope, protocol.TextPayload("x"))
		}, protocol.ErrUnknownOperation, nil},
		{"tool before state", func(t *testing.T) fixture { return setup(t, nil) }, func(f fixture) authorizer.AuthorizedOperationCompensation {
			return f.s.cmp("echo", "op-1", "cmp-1", scope, protocol.TextPayload("x"))
		}, protocol.ErrCompensationToolMismatch, nil},
		{"pending original", func(t *testing.T) fixture { return setup(t, nil) }, func(f fixture) authorizer.AuthorizedOperationCompensation {
			return f.s.cmp("calc", "op-1", "cmp-1", scope, jp(t, `{}`))
		}, protocol.ErrCompensationRequiresSucceededOperation, func(t *testing.T, pe *protocol.Error) {
			if pe.Value != "op-1" || pe.State != protocol.StatePending {
				t.Fatalf("details %q %v", pe.Value, pe.State)
			}
		}},
		{"running original", func(t *testing.T) fixture { return setup(t, &running) }, func(f fixture) authorizer.AuthorizedOperationCompensation {
			return f.s.cmp("calc", "op-1", "cmp-1", scope, jp(t, `{}`))
		}, protocol.ErrCompensationRequiresSucceededOperation, nil},
		{"second compensation key", withComp, func(f fixture) authorizer.AuthorizedOperationCompensation {
			return f.s.cmp("calc", "op-1", "cmp-2", scope, jp(t, `{"undo":1}`))
		}, protocol.ErrCompensationIdentityMismatch, nil},
		{"compensation input drift", withComp, func(f fixture) authorizer.AuthorizedOperationCompensation {
			return f.s.cmp("calc", "op-1", "cmp-1", scope, jp(t, `{"undo":2}`))
		}, protocol.ErrCompensationIdentityMismatch, nil},
		{"grant drift", withComp, func(f fixture) authorizer.AuthorizedOperationCompensation {
			return narrow(t).cmp("calc", "op-1", "cmp-1", scope, jp(t, `{"undo":1}`))
		}, protocol.ErrCompensationIdentityMismatch, nil},
		{"exact duplicate", withComp, func(f fixture) authorizer.AuthorizedOperationCompensation {
			return f.s.cmp("calc", "op-1", "cmp-1", scope, jp(t, `{"undo":1}`))
		}, 0, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := c.fixture(t)
			before := toJSON(t, f.j)
			a, err := f.j.AdmitCompensation(c.auth(f))
			wantKind(t, err, c.want)
			if c.detail != nil {
				var pe *protocol.Error
				errors.As(err, &pe)
				c.detail(t, pe)
			}
			if err == nil && (a.Kind != journal.Existing || a.State.State != protocol.StatePending) {
				t.Fatalf("duplicate: %+v", a)
			}
			unchanged(t, f.j, before)
		})
	}
	// An invalid tenant scope token is reported as a journal-scope token error; it cannot come
	// from the authorizer, so use ValidateScope directly.
	j := newJournal(t, scope)
	var pe *protocol.Error
	if err := j.ValidateScope("Tenant"); !errors.As(err, &pe) || pe.Kind != protocol.ErrInvalidToken || pe.Field != protocol.FieldJournalScope {
		t.Fatalf("got %v", err)
	}
	wantKind(t, j.ValidateScope(scope), 0)
}

// Spec: JRN-022
func TestObserveCompensationCheckOrder(t *testing.T) {
	setup := func(t *testing.T, admitComp bool) (*issuer, *journal.Journal) {
		s := wide(t)
		j := newJournal(t, scope)
		auth := s.op("calc", "op-1", jp(t, `{}`))
		mustAdmit(t, j, auth)
		mustObserve(t, j, auth, protocol.Succeeded(jp(t, `{"ok":true}`)))
		if admitComp {
			if _, err := j.AdmitCompensation(s.cmp("calc", "op-1", "cmp-1", scope, jp(t, `{"undo":1}`))); err != nil {
				t.Fatal(err)
			}
			if _, err := j.ObserveCompensation(s.cmp("calc", "op-1", "cmp-1", scope, jp(t, `{"undo":1}`)), protocol.Cancelled()); err != nil {
				t.Fatal(err)
			}
		}
		return s, j
	}
	cases := []struct {
		name      string
		admitComp bool
		auth      func(s *issuer) authorizer.AuthorizedOperationCompensation
		status    protocol.OperationStatus
		want      protocol.ErrorKind
	}{
		{"status before scope", true, func(s *issuer) authorizer.AuthorizedOperationCompensation {
			return s.cmp("calc", "op-1", "cmp-1", "tenant-b", jp(t, `{"undo":1}`))
		}, protocol.Succeeded(protocol.TextPayload("x")), protocol.ErrPayloadFormatMismatch},
		{"scope before lookup", true, func(s *issuer) authorizer.AuthorizedOperationCompensation {
			return s.cmp("calc", "unknown", "cmp-1", "tenant-b", jp(t, `{"undo":1}`))
		}, protocol.Running(), protocol.ErrOperationJournalScopeMismatch},
		{"lookup before tool", true, func(s *issuer) authorizer.AuthorizedOperationCompensation {
			return s.cmp("echo", "unknown", "cmp-1", scope, protocol.TextPayload("x"))
		}, protocol.Running(), protocol.ErrUnknownOperation},
		{"tool before compensation lookup", false, func(s *issuer) authorizer.AuthorizedOperationCompensation {
			return s.cmp("echo", "op-1", "cmp-1", scope, protocol.TextPayload("x"))
		}, protocol.Running(), protocol.ErrCompensationToolMismatch},
		{"compensation lookup", false, func(s *issuer) authorizer.AuthorizedOperationCompensation {
			return s.cmp("calc", "op-1", "cmp-1", scope, jp(t, `{"undo":1}`))
		}, protocol.Running(), protocol.ErrUnknownCompensation},
		{"identity before transition", true, func(s *issuer) authorizer.AuthorizedOperationCompensation {
			return s.cmp("calc", "op-1", "cmp-2", scope, jp(t, `{"undo":1}`))
		}, protocol.Running(), protocol.ErrCompensationIdentityMismatch},
		{"transition", true, func(s *issuer) authorizer.AuthorizedOperationCompensation {
			return s.cmp("calc", "op-1", "cmp-1", scope, jp(t, `{"undo":1}`))
		}, protocol.Running(), protocol.ErrInvalidWorkerCompensationTransition},
		{"identical terminal", true, func(s *issuer) authorizer.AuthorizedOperationCompensation {
			return s.cmp("calc", "op-1", "cmp-1", scope, jp(t, `{"undo":1}`))
		}, protocol.Cancelled(), 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, j := setup(t, c.admitComp)
			before := toJSON(t, j)
			_, err := j.ObserveCompensation(c.auth(s), c.status)
			wantKind(t, err, c.want)
			unchanged(t, j, before)
		})
	}
}

// Spec: JRN-009, JRN-010
func TestRecordLimit(t *testing.T) {
	s := wide(t)
	j := newJournal(t, scope)
	keys := make([]string, 0, 65)
	for i := 0; i < 65; i++ {
		keys = append(keys, "op-"+string(rune('a'+i/26))+string(rune('a'+i%26)))
	}
	for _, k := range keys[:64] {
		mustAdmit(t, j, s.op("echo", k, protocol.TextPayload(k)))
	}
	before := toJSON(t, j)
	_, err := j.Admit(s.op("echo", keys[64], protocol.TextPayload("x")))
	var pe *protocol.Error
	if !errors.As(err, &pe) || pe.Kind != protocol.ErrTooManyWorkerOperations || pe.Maximum != 64 {
		t.Fatalf("got %v, want TooManyWorkerOperations{64}", err)
	}
	unchanged(t, j, before)
	// Duplicates of existing keys still answer, and a full journal still records observations.
	a, err := j.Admit(s.op("echo", keys[0], protocol.TextPayload(keys[0])))
	if err != nil || a.Kind != journal.Existing {
		t.Fatalf("%v %v", a, err)
	}
	mustObserve(t, j, s.op("echo", keys[0], protocol.TextPayload(keys[0])), protocol.Running())
	// The identity of a duplicate is checked before the record limit.
	_, err = j.Admit(s.op("calc", keys[0], jp(t, `{}`)))
	wantKind(t, err, protocol.ErrOperationIdentityMismatch)
}

// bigTextState is the JSON of a succeeded text state whose payload is n bytes of 'y',
// written out by hand: {"state":"succeeded","payload":{"format":"text","value":"yy…"}}.
func bigTextStateLen(n int) int {
	return len(`{"state":"succeeded","payload":{"format":"text","value":"`) + n + len(`"}}`)
}

// Spec: JRN-008, JRN-010
func TestSizeBoundAfterEveryMutation(t *testing.T) {
	s := wide(t)
	j := newJournal(t, scope)
	auths := make([]authorizer.AuthorizedOperationInvocation, 5)
	for i := range auths {
		auths[i] = s.op("big", "op-"+string(rune('1'+i)), protocol.TextPayload("in"))
		mustAdmit(t, j, auths[i])
	}
	fill := func(n int) protocol.OperationStatus {
		return protocol.Succeeded(protocol.TextPayload(string(bytes.Repeat([]byte("y"), n))))
	}
	for _, auth := range auths[:4] {
		mustObserve(t, j, auth, fill(65000))
	}
	pending := len(`{"state":"pending"}`)
	current := len(toJSON(t, j))
	// The payload length that brings the journal to exactly 262,144 bytes.
	exact := protocol.MaxWorkerOperationJournalBytes - current + pending - bigTextStateLen(0)
	if exact <= 0 || exact > 65536 {
		t.Fatalf("test arithmetic: %d", exact)
	}
	before := toJSON(t, j)
	_, err := j.Observe(auths[4], fill(exact+1))
	var pe *protocol.Error
	if !errors.As(err, &pe) || pe.Kind != protocol.ErrOperationJournalTooLarge || pe.Actual != 262145 || pe.Maximum != 262144 {
		t.Fatalf("got %v, want OperationJournalTooLarge{262145,262144}", err)
	}
	unchanged(t, j, before)
	mustObserve(t, j, auths[4], fill(exact))
	full := toJSON(t, j)
	if len(full) != protocol.MaxWorkerOperationJournalBytes || j.Size() != len(full) {
		t.Fatalf("journal is %d bytes (Size %d)", len(full), j.Size())
	}
	// At the bound, a new record does not fit either, and a journal of exactly the bound loads.
	_, err = j.Admit(s.op("big", "op-6", protocol.TextPayload("in")))
	wantKind(t, err, protocol.ErrOperationJournalTooLarge)
	unchanged(t, j, full)
	back, err := journal.FromJSON(full, canonjson.Preserve)
	if err != nil || !back.Equal(j) {
		t.Fatalf("full journal does not load: %v", err)
	}
	// Shrinking is impossible (terminal states are final), but a no-op observation at the
	// bound is still accepted.
	mustObserve(t, j, auths[4], fill(exact))
}

// Spec: JRN-010
func TestRecordsAreCopies(t *testing.T) {
	s := wide(t)
	j := newJournal(t, scope)
	auth := s.op("calc", "op-1", jp(t, `{}`))
	mustAdmit(t, j, auth)
	mustObserve(t, j, auth, protocol.Succeeded(jp(t, `{}`)))
	if _, err := j.AdmitCompensation(s.cmp("calc", "op-1", "cmp-1", scope, jp(t, `{}`))); err != nil {
		t.Fatal(err)
	}
	before := toJSON(t, j)
	rs := j.Records()
	rs[0].Tool = "changed"
	rs[0].Compensation.CompensationKey = "cmp-changed"
	r, _ := j.Operation("op-1")
	r.Compensation.State = protocol.Cancelled()
	c := j.Clone()
	if _, err := c.ObserveCompensation(s.cmp("calc", "op-1", "cmp-1", scope, jp(t, `{}`)), protocol.Running()); err != nil {
		t.Fatal(err)
	}
	unchanged(t, j, before)
	if c.Equal(j) {
		t.Fatal("clone shares state with the original")
	}
}

// Spec: JRN-006, JRN-007
func TestZeroJournalIsInvalid(t *testing.T) {
	var j journal.Journal
	s := wide(t)
	_, err := j.ToJSON()
	var pe *protocol.Error
	if !errors.As(err, &pe) || pe.Kind != protocol.ErrUnsupportedOperationJournalVersion || pe.Actual != 0 {
		t.Fatalf("got %v", err)
	}
	_, err = j.Admit(s.op("calc", "op", jp(t, `{}`)))
	wantKind(t, err, protocol.ErrUnsupportedOperationJournalVersion)
	if _, err := journal.New("Bad Scope"); !errors.As(err, &pe) || pe.Kind != protocol.ErrInvalidToken || pe.Field != protocol.FieldJournalScope {
		t.Fatalf("got %v", err)
	}
}
