package host

import "testing"

// The refusal texts rendered from the kind tables' templates.
func TestTemplateErrorTexts(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{&RegistrationError{Kind: ErrDuplicateTool, Name: "fs.read"}, "tool already registered: fs.read"},
		{&RegistrationError{Kind: ErrInvalidName, Name: "a b"}, `invalid tool name: "a b"`},
		{&RegistrationError{Kind: ErrInvalidPolicy, Message: "call limit is zero"}, "call limit is zero"},
		{&RegistrationError{Kind: ErrCatalogToolLimitExceeded, Maximum: 64}, "tool catalog exceeds its maximum of 64 tools"},
		{&RegistrationError{Kind: ErrCatalogByteLimitExceeded, Actual: 9000, Maximum: 8192}, "tool catalog is 9000 bytes but its maximum is 8192 bytes"},
		{&RegistrationError{Kind: ErrActiveCapabilityLease, Name: "x"}, "cannot change the tool catalog while a capability lease is active"},
		{&RegistrationError{Kind: 99}, "tool registration: RegistrationErrorKind(99)"},
		{&StreamConfigError{Kind: ErrStreamDisabled, Name: "fs.read"}, "tool does not permit streaming: fs.read"},
		{&StreamConfigError{Kind: 99, Name: "x"}, "stream configuration: StreamConfigErrorKind(99)"},
		{&LeaseError{Kind: ErrLeaseCallLimitExceedsPolicy, Tool: "fs.read", Requested: 5, Maximum: 3}, "capability lease for fs.read requests 5 calls but policy allows 3"},
		{&LeaseError{Kind: ErrLeaseZeroCallLimit, Tool: "fs.read"}, "capability lease call limit must be greater than zero: fs.read"},
		{&LeaseError{Kind: ErrLeaseAlreadyActive, Tool: "x"}, "a capability lease is already active"},
		{&LeaseError{Kind: 99}, "capability lease: LeaseErrorKind(99)"},
	} {
		if got := c.err.Error(); got != c.want {
			t.Errorf("Error() = %q, want %q", got, c.want)
		}
	}
}
