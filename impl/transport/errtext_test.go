package transport

import (
	"errors"
	"testing"
)

// The failure texts: the kind's message, then the kind's data, then the cause.
func TestErrorTexts(t *testing.T) {
	cause := errors.New("broken pipe")
	for _, c := range []struct {
		err  *Error
		want string
	}{
		{&Error{Kind: ErrPoisoned}, "transport: the transport is poisoned"},
		{&Error{Kind: ErrIO, Err: cause}, "transport: worker stream I/O failed: broken pipe"},
		{&Error{Kind: ErrUnexpectedMessage, Detail: "end of stream"}, "transport: the worker sent an unexpected frame: end of stream"},
		{&Error{Kind: ErrNotOperationRequest, Detail: "close_session"}, "transport: the pre-sealed line is not a durable operation request: close_session"},
		{&Error{Kind: ErrSessionMismatch, Expected: "s-1", Actual: "s-2"}, `transport: the sessions do not match: "s-1" and "s-2"`},
		{&Error{Kind: ErrIndeterminate, Cause: CauseDeadlineElapsed, Err: cause}, "transport: the worker call is indeterminate after DeadlineElapsed: broken pipe"},
		{&Error{Kind: ErrBusy, Detail: "ignored"}, "transport: the worker session already has active work"},
	} {
		if got := c.err.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
	if got := CauseContained.Error(); got != "transport: indeterminate after Contained" {
		t.Errorf("cause text = %q", got)
	}
}
