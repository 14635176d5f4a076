package worker

import (
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/splashv5/conform/impl/errkind"
	"github.com/splashv5/conform/impl/protocol"
)

// Bounds of the capability secret broker (SEC-002, SEC-005).
const (
	// MaxSecretBindings is the most exact bindings one broker holds: the protocol's limit of
	// grants per manifest.
	MaxSecretBindings = 128
	// MaxSecretBytes is the largest secret value the broker delivers: 64 KiB.
	MaxSecretBytes = 64 << 10
)

// SecretErrorKind identifies one failure rule of the capability secret broker: a variant of the
// reference's binding, value, broker configuration or resolution errors.
type SecretErrorKind = errkind.Kind[secretKinds]

type secretKinds struct{}

// Table describes the secret broker's error kinds.
func (secretKinds) Table() *errkind.Table { return &secretKindTable }

// Binding and value errors (SEC-001, SEC-005). Here and below, a kind's meaning is its message
// in secretKindTable, with its entry's Doc.
const (
	SecretInvalidTool SecretErrorKind = iota + 1
	SecretInvalidIdentifier
	SecretEmptyValue
	SecretValueTooLarge
)

// Broker configuration errors (SEC-002).
const (
	SecretDuplicateBinding SecretErrorKind = iota + 16
	SecretCapacityExceeded
)

// Resolution errors (SEC-003), in the order the broker checks them.
const (
	SecretInvalidGrant SecretErrorKind = iota + 32
	SecretUnconfiguredBinding
	SecretToolNotGranted
	SecretNotGranted
	SecretProviderFailed
)

var secretKindTable = errkind.Table{Type: "SecretErrorKind", Prefix: "worker secret: ", NameInError: true, Kinds: []errkind.Entry{
	SecretInvalidTool:         {Name: "InvalidTool", Message: "secret binding has an invalid tool name"},
	SecretInvalidIdentifier:   {Name: "InvalidSecretIdentifier", Message: "secret binding has an invalid secret identifier"},
	SecretEmptyValue:          {Name: "EmptyValue", Message: "secret value is empty"},
	SecretValueTooLarge:       {Name: "ValueTooLarge", Message: "secret value exceeds the broker's byte limit", Detail: "{} ({actual} bytes, maximum {maximum})", Doc: "MaxSecretBytes"},
	SecretDuplicateBinding:    {Name: "DuplicateBinding", Message: "secret binding configured twice"},
	SecretCapacityExceeded:    {Name: "CapacityExceeded", Message: "secret broker exceeds its binding limit", Detail: "{} (maximum {maximum})", Doc: "MaxSecretBindings"},
	SecretInvalidGrant:        {Name: "InvalidGrant", Message: "capability grant is invalid", Doc: "the grant given to the broker"},
	SecretUnconfiguredBinding: {Name: "UnconfiguredBinding", Message: "secret binding is not configured"},
	SecretToolNotGranted:      {Name: "ToolNotGranted", Message: "secret binding is not for this grant's tool"},
	SecretNotGranted:          {Name: "SecretNotGranted", Message: "grant carries no selector for this secret", Doc: "no secret selector with the binding's identifier"},
	SecretProviderFailed:      {Name: "Provider", Message: "secret provider failed", Doc: "its error is not kept (SEC-007)"},
}}

// SecretError is a failure of the secret broker. It never holds a tool name, a secret
// identifier, secret bytes or a provider's error (SEC-007): only its kind and, for the two
// bound violations, the numbers.
type SecretError struct {
	errkind.Kind[secretKinds]
	// Actual and Maximum: the value length and limit of SecretValueTooLarge, and the limit
	// of SecretCapacityExceeded.
	Actual, Maximum int
}

// Error describes the failure without naming any binding or secret.
func (e *SecretError) Error() string { return e.Kind.Expand("actual", e.Actual, "maximum", e.Maximum) }

// redacted writes text for every formatting verb, so that no verb, flag or width reaches
// the fields of a value that formats itself with it.
func redacted(s fmt.State, text string) { _, _ = s.Write([]byte(text)) }

// SecretBinding is one exact (tool, secret identifier) binding configured by the trusted host
// and handed to the one adapter that needs it (SEC-001). Its fields are host configuration,
// not secret bytes, but every formatted form of it is redacted so that logs never list them.
// The zero value is no binding: no broker holds it.
type SecretBinding struct {
	tool, secretID string
}

// NewSecretBinding returns the binding of tool to secretID. The tool must be a token
// (SecretInvalidTool) and the identifier a valid resource-selector id (SecretInvalidIdentifier).
func NewSecretBinding(tool, secretID string) (SecretBinding, error) {
	if protocol.ValidateToken(protocol.FieldTool, tool) != nil {
		return SecretBinding{}, &SecretError{Kind: SecretInvalidTool}
	}
	if (protocol.ResourceSelector{Kind: protocol.ResourceSecret, ID: secretID}).Validate() != nil {
		return SecretBinding{}, &SecretError{Kind: SecretInvalidIdentifier}
	}
	return SecretBinding{tool: tool, secretID: secretID}, nil
}

// Tool returns the binding's tool, for trusted configuration code.
func (b SecretBinding) Tool() string { return b.tool }

// String returns a redacted form.
func (SecretBinding) String() string { return "SecretBinding(redacted)" }

// GoString returns a redacted form.
func (b SecretBinding) GoString() string { return b.String() }

// Format writes the redacted form for every verb.
func (b SecretBinding) Format(s fmt.State, _ rune) { redacted(s, b.String()) }

// SecretValue is one bounded, non-empty, binary secret produced by a provider (SEC-005). The
// broker shows its bytes only to the callback of one resolution and then overwrites them with
// zeros (SEC-006). Every formatted form of it is redacted.
type SecretValue struct {
	b []byte
}

// NewSecretValue returns a secret holding b and takes ownership of b: the caller must not use
// b afterwards. b must not be empty (SecretEmptyValue) or longer than MaxSecretBytes
// (SecretValueTooLarge); on either error b is zeroed.
func NewSecretValue(b []byte) (*SecretValue, error) {
	switch {
	case len(b) == 0:
		return nil, &SecretError{Kind: SecretEmptyValue}
	case len(b) > MaxSecretBytes:
		n := len(b)
		clear(b)
		return nil, &SecretError{Kind: SecretValueTooLarge, Actual: n, Maximum: MaxSecretBytes}
	}
	return &SecretValue{b: b}, nil
}

// Wipe overwrites the secret's bytes with zeros and forgets them. The broker wipes every value
// it resolves; a provider wipes a value it made and does not return.
func (v *SecretValue) Wipe() {
	if v != nil {
		clear(v.b)
		v.b = nil
	}
}

// String returns a redacted form.
func (*SecretValue) String() string { return "SecretValue(redacted)" }

// GoString returns a redacted form.
func (v *SecretValue) GoString() string { return v.String() }

// Format writes the redacted form for every verb.
func (v *SecretValue) Format(s fmt.State, _ rune) { redacted(s, v.String()) }

// SecretProvider is the trusted host's secret backend. Resolve returns a newly made value for
// one configured secret identifier, which the broker then owns. It must treat the identifier
// as configuration (never as a path, URL or command), and its error, which the broker drops,
// may say anything.
type SecretProvider interface {
	Resolve(secretID string) (*SecretValue, error)
}

// SecretProviderFunc adapts a function to the SecretProvider interface.
type SecretProviderFunc func(secretID string) (*SecretValue, error)

// Resolve calls f.
func (f SecretProviderFunc) Resolve(secretID string) (*SecretValue, error) { return f(secretID) }

// SecretBytesFunc is a provider that hands the broker the raw bytes of a secret, of any
// length, and gives up ownership of them. The broker, not the provider, bounds them: an empty
// slice fails the resolution with SecretEmptyValue and one over MaxSecretBytes with
// SecretValueTooLarge (SEC-005), and the bytes are zeroed either way (SEC-006). As a
// SecretProvider outside a broker it makes the value with NewSecretValue.
type SecretBytesFunc func(secretID string) ([]byte, error)

// Resolve calls f and makes a value of its bytes.
func (f SecretBytesFunc) Resolve(secretID string) (*SecretValue, error) {
	b, err := f(secretID)
	if err != nil {
		clear(b)
		return nil, err
	}
	return NewSecretValue(b)
}

// SecretBroker is the capability secret broker (chapter 16): a provider and a fixed set of
// exact bindings. A secret resolves only for a binding the broker holds, under the active
// grant of the binding's tool, when that grant carries the selector {secret, identifier}. It
// offers no lookup and no enumeration: nothing returns a binding, an identifier, the provider
// or a secret outside a callback (SEC-004). It is safe for concurrent use; resolutions are
// serialized, so a provider need not be.
type SecretBroker struct {
	mu       sync.Mutex
	provider SecretProvider
	bindings []SecretBinding // sorted by tool, then identifier
	hooks    secretHooks     // set only by the faulty build
}

// secretHooks is how the faulty build (faults_secret.go) changes the broker for the
// conformance suite's mutation test; nil in the default build.
type secretHooks interface {
	// granted may decide in place of the exact selector test whether g carries b's secret.
	granted(g protocol.CapabilityGrant, b SecretBinding) (ok, handled bool)
	// refuse may replace a refusal of the checks by its own error.
	refuse(b *SecretBroker, binding SecretBinding, err error) error
	// unboundedValue reports whether raw bytes of any length are taken as a value.
	unboundedValue() bool
	// providerFailure may replace the broker's error for a failed provider, whose error
	// was err.
	providerFailure(err error) error
}

func compareBindings(x, y SecretBinding) int {
	if x.tool != y.tool {
		if x.tool < y.tool {
			return -1
		}
		return 1
	}
	switch {
	case x.secretID < y.secretID:
		return -1
	case x.secretID > y.secretID:
		return 1
	}
	return 0
}

// NewSecretBroker returns a broker over provider holding exactly bindings (SEC-002). Bindings
// are taken in order: a binding already held fails with SecretDuplicateBinding, and one more
// than MaxSecretBindings with SecretCapacityExceeded. The zero binding is not a binding and
// fails with SecretInvalidTool.
func NewSecretBroker(provider SecretProvider, bindings ...SecretBinding) (*SecretBroker, error) {
	held := make([]SecretBinding, 0, min(len(bindings), MaxSecretBindings))
	for _, b := range bindings {
		if b.tool == "" {
			return nil, &SecretError{Kind: SecretInvalidTool}
		}
		i, found := slices.BinarySearchFunc(held, b, compareBindings)
		if found {
			return nil, &SecretError{Kind: SecretDuplicateBinding}
		}
		if len(held) == MaxSecretBindings {
			return nil, &SecretError{Kind: SecretCapacityExceeded, Maximum: MaxSecretBindings}
		}
		held = slices.Insert(held, i, b)
	}
	return &SecretBroker{provider: provider, bindings: held}, nil
}

// Len returns how many bindings the broker holds.
func (b *SecretBroker) Len() int { return len(b.bindings) }

// String returns a redacted form that gives only the number of bindings.
func (b *SecretBroker) String() string {
	return "SecretBroker(bindings=" + strconv.Itoa(len(b.bindings)) + ")"
}

// GoString returns the redacted form.
func (b *SecretBroker) GoString() string { return b.String() }

// Format writes the redacted form for every verb.
func (b *SecretBroker) Format(s fmt.State, _ rune) { redacted(s, b.String()) }

// holds reports whether the broker was configured with binding.
func (b *SecretBroker) holds(binding SecretBinding) bool {
	_, found := slices.BinarySearchFunc(b.bindings, binding, compareBindings)
	return found
}

// grantCarries reports whether g carries the selector {secret, binding's identifier}.
func grantCarries(g protocol.CapabilityGrant, binding SecretBinding) bool {
	return slices.Contains(g.Resources, protocol.ResourceSelector{Kind: protocol.ResourceSecret, ID: binding.secretID})
}

// check runs the resolution checks of SEC-003 in order.
func (b *SecretBroker) check(grant protocol.CapabilityGrant, binding SecretBinding) error {
	if grant.Validate() != nil {
		return &SecretError{Kind: SecretInvalidGrant}
	}
	if !b.holds(binding) {
		return &SecretError{Kind: SecretUnconfiguredBinding}
	}
	if grant.Tool != binding.tool {
		return &SecretError{Kind: SecretToolNotGranted}
	}
	carries := grantCarries(grant, binding)
	if b.hooks != nil {
		if ok, handled := b.hooks.granted(grant, binding); handled {
			carries = ok
		}
	}
	if !carries {
		return &SecretError{Kind: SecretNotGranted}
	}
	return nil
}

// WithSecret resolves binding's secret under grant, the active grant of the invocation the
// caller serves, and shows its bytes to use (SEC-003, SEC-006). The provider runs only after
// every check passed. The bytes are valid only during use, which must not keep, log or return
// them; they are zeroed when use returns. WithSecret returns use's error, or a *SecretError
// whose kind names the failed check.
func (b *SecretBroker) WithSecret(grant protocol.CapabilityGrant, binding SecretBinding, use func(secret []byte) error) error {
	if err := b.check(grant, binding); err != nil {
		if b.hooks != nil {
			return b.hooks.refuse(b, binding, err)
		}
		return err
	}
	value, err := b.resolve(binding)
	if err != nil {
		return err
	}
	defer value.Wipe()
	return use(value.b)
}

// resolve asks the provider for binding's secret, serialized with other resolutions. A
// provider error is dropped (SEC-007). Raw bytes of a SecretBytesFunc are bounded here, and
// refused with SecretEmptyValue or SecretValueTooLarge (SEC-005); a value that breaks the
// bounds otherwise is wiped and refused as the provider's failure.
func (b *SecretBroker) resolve(binding SecretBinding) (*SecretValue, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if raw, ok := b.provider.(SecretBytesFunc); ok {
		bytes, err := raw(binding.secretID)
		if err != nil {
			clear(bytes)
			return nil, b.providerFailed(err)
		}
		if b.hooks != nil && b.hooks.unboundedValue() {
			return &SecretValue{b: bytes}, nil
		}
		return NewSecretValue(bytes)
	}
	value, err := b.provider.Resolve(binding.secretID)
	if err != nil || value == nil || len(value.b) == 0 || len(value.b) > MaxSecretBytes {
		value.Wipe()
		return nil, b.providerFailed(err)
	}
	return value, nil
}

// providerFailed returns the broker's error for a failed provider: its kind only, the
// provider's error err being dropped (SEC-007).
func (b *SecretBroker) providerFailed(err error) error {
	if b.hooks != nil {
		return b.hooks.providerFailure(err)
	}
	return &SecretError{Kind: SecretProviderFailed}
}
