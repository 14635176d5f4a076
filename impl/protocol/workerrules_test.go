package protocol

import (
	"errors"
	"testing"
)

// TestWorkerAdmit pins which host message a worker accepts in which kind of session and state
// (WRK-022, CAN-007 to CAN-011, CAN-022, CAN-023): every message type, every state.
func TestWorkerAdmit(t *testing.T) {
	all := []MessageType{TypeOpenSession, TypeInvoke, TypeResult, TypeDispatchOperation, TypeOperationResult,
		TypeCompensateOperation, TypeCompensationResult, TypeReconcileOperation, TypeReconciledOperation,
		TypeCancel, TypeCancellationResult, TypeCloseSession}
	baseline := map[MessageType]bool{TypeInvoke: true, TypeDispatchOperation: true, TypeCompensateOperation: true, TypeReconcileOperation: true}
	for _, typ := range all {
		for _, s := range []WorkerState{{Kind: BaselineSession}, {Kind: BaselineSession, Active: true}} {
			want := RefusedUnexpected
			if baseline[typ] {
				want = Accepted
			}
			if got := s.Admit(typ); got != want {
				t.Errorf("baseline %s: %v, want %v", typ, got, want)
			}
		}
	}
	idle, idleTarget, active := WorkerState{Kind: CancellableSession}, WorkerState{Kind: CancellableSession, Target: true},
		WorkerState{Kind: CancellableSession, Active: true}
	for _, tc := range []struct {
		typ                      MessageType
		idle, idleTarget, active Refusal
	}{
		{TypeInvoke, Accepted, Accepted, RefusedUnexpected},
		{TypeCancel, RefusedNoCancelTarget, Accepted, Accepted},
		{TypeCloseSession, Accepted, Accepted, RefusedCloseWhileActive},
	} {
		for _, c := range []struct {
			s    WorkerState
			want Refusal
		}{{idle, tc.idle}, {idleTarget, tc.idleTarget}, {active, tc.active}} {
			if got := c.s.Admit(tc.typ); got != c.want {
				t.Errorf("cancellable %+v %s: %v, want %v", c.s, tc.typ, got, c.want)
			}
		}
	}
	for _, typ := range all {
		if typ == TypeInvoke || typ == TypeCancel || typ == TypeCloseSession {
			continue
		}
		for _, s := range []WorkerState{idle, idleTarget, active} {
			if got := s.Admit(typ); got != RefusedUnexpected {
				t.Errorf("cancellable %+v %s: %v, want UnexpectedMessage", s, typ, got)
			}
		}
	}
	if got := (WorkerState{}).Admit(TypeInvoke); got != RefusedUnexpected {
		t.Errorf("no session kind: %v", got)
	}
}

// TestValidateJournalScope pins the scope check of a compensation binding (JRN-008).
func TestValidateJournalScope(t *testing.T) {
	if err := ValidateJournalScope("tenant-a", "tenant-a"); err != nil {
		t.Fatal(err)
	}
	err := ValidateJournalScope("tenant-b", "tenant-a")
	var pe *Error
	if !errors.Is(err, ErrOperationJournalScopeMismatch) || !errors.As(err, &pe) || pe.ExpectedText != "tenant-b" || pe.ActualText != "tenant-a" {
		t.Fatalf("mismatch: %v", err)
	}
	if err := ValidateJournalScope("not a token", "not a token"); !errors.Is(err, ErrInvalidToken) {
		t.Fatalf("not a token: %v", err)
	}
}
