package vectorfmt

// SecretsFile is the file name of the capability secret broker vectors.
const SecretsFile = "secrets.json"

// Group types of secrets.json.
const (
	// SecretBindingType groups binding constructions (SEC-001).
	SecretBindingType = "SecretBindingTest"
	// SecretBrokerConfigType groups broker configurations (SEC-002).
	SecretBrokerConfigType = "SecretBrokerConfigTest"
	// SecretResolveType groups resolutions against one configured broker (SEC-003).
	SecretResolveType = "SecretResolveTest"
	// SecretValueType groups resolutions whose provider returns a value of a given length,
	// which the broker bounds (SEC-005).
	SecretValueType = "SecretValueTest"
)

// Secrets is secrets.json: the binding, configuration and selector rules of the capability
// secret broker.
type Secrets struct {
	Header
	TestGroups []SecretGroup `json:"testGroups"`
}

// SecretBinding is one (tool, secret identifier) pair.
type SecretBinding struct {
	Tool     string `json:"tool"`
	SecretID string `json:"secret_id"`
}

// SecretGroup holds the tests of one group type. Bindings is, for SecretResolveType, the
// broker's configuration; its provider knows exactly the identifiers of Bindings.
type SecretGroup struct {
	Type     string          `json:"type"`
	Bindings []SecretBinding `json:"bindings,omitempty"`
	Tests    []SecretTest    `json:"tests"`
}

// SecretTest is one broker test. Which fields are present depends on the group type:
//
//   - SecretBindingType: Binding in; success or the binding error.
//   - SecretBrokerConfigType: Bindings in (in configuration order); BindingCount out, or the
//     configuration error.
//   - SecretResolveType: Grant (a capability grant as JSON) and Binding in, and ProviderFails
//     when the provider fails; ResolvedID out (the one identifier the provider is asked for),
//     or the resolution error, in which case the provider is asked for nothing unless the
//     error is Provider.
//   - SecretValueType: the group's one binding is resolved under a grant carrying its
//     selector, and the provider returns ValueLength bytes, each ValueByte; the callback sees
//     those bytes, or the resolution fails with EmptyValue or ValueTooLarge (with ActualBytes
//     and MaximumBytes) before the callback runs.
type SecretTest struct {
	Case
	Binding       *SecretBinding  `json:"binding,omitempty"`
	Bindings      []SecretBinding `json:"bindings,omitempty"`
	BindingCount  *int            `json:"binding_count,omitempty"`
	Grant         *Text           `json:"grant,omitempty"`
	ProviderFails bool            `json:"provider_fails,omitempty"`
	ResolvedID    string          `json:"resolved_id,omitempty"`
	ValueLength   *int            `json:"value_length,omitempty"`
	ValueByte     *int            `json:"value_byte,omitempty"`
	ActualBytes   *int            `json:"actual_bytes,omitempty"`
	MaximumBytes  *int            `json:"maximum_bytes,omitempty"`
}
