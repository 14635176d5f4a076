package workflow

import (
	"errors"
	"testing"
)

// The refusal texts callers and logs see: the kind, the quoted value, the cause.
func TestErrorTexts(t *testing.T) {
	cause := errors.New("disk full")
	for _, c := range []struct {
		err  error
		want string
	}{
		{newError(ErrStepMismatch, "step-2"), `workflow: StepMismatch: "step-2"`},
		{newError(ErrPlanComplete, ""), "workflow: PlanComplete"},
		{&Error{Kind: ErrLedgerWrite, Err: cause}, "workflow: LedgerWrite: disk full"},
		{&Error{Kind: ErrWorker, Detail: `"op-1"`, Err: cause}, `workflow: Worker: "op-1": disk full`},
	} {
		if got := c.err.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
	err := &Error{Kind: ErrLedgerWrite, Err: cause}
	var we *Error
	if !errors.Is(err, ErrLedgerWrite) || !errors.Is(err, cause) || !errors.As(error(err), &we) {
		t.Fatal("a refusal does not match its kind, its cause and *Error")
	}
}
