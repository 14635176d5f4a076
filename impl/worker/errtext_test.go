package worker

import (
	"errors"
	"testing"
)

// The failure texts: the kind's name, the stage, the named fields, the kind's numbers, the cause.
func TestErrorTexts(t *testing.T) {
	cause := errors.New("store down")
	for _, c := range []struct {
		err  error
		want string
	}{
		{&Error{Kind: ErrSessionPoisoned}, "worker: SessionPoisoned"},
		{&Error{Kind: ErrProtocol, Stage: StageSeal, Err: cause}, "worker: Protocol (seal): store down"},
		{&Error{Kind: ErrIndeterminateCompensation, Tool: "t", OperationKey: "op", CompensationKey: "cmp-1"}, "worker: IndeterminateCompensation tool=t operation_key=op compensation_key=cmp-1"},
		{&Error{Kind: ErrUnexpectedMessage, MessageType: "cancel"}, "worker: UnexpectedMessage message=cancel"},
		{&Error{Kind: ErrInvalidJournalRevision, Expected: 3, Actual: 2}, "worker: InvalidJournalRevision expected=3 actual=2"},
		{&Error{Kind: ErrReconciliationSessionBudgetExhausted, Maximum: 8}, "worker: ReconciliationSessionBudgetExhausted maximum=8"},
		{&Error{Kind: ErrEndOfInput, Active: true}, "worker: EndOfInput while an invocation was active"},
		{&Error{Kind: ErrJournal, Maximum: 8, Active: true, Err: cause}, "worker: Journal: store down"},
		{Unsupported("compensate"), "worker adapter: Unsupported (compensate)"},
		{&AdapterError{Kind: AdapterFailed, Reason: "quota"}, "worker adapter: Failed: quota"},
	} {
		if got := c.err.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
}
