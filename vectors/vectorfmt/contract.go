package vectorfmt

// ContractSchemasFile is the file name of the JSON contract schema vectors.
const ContractSchemasFile = "contract_schemas.json"

// Group types of contract_schemas.json.
const (
	// ContractCompileType groups contract schemas compiled on their own (RUN-020).
	ContractCompileType = "ContractSchemaCompileTest"
	// ContractValidateType groups values validated against the group's schema (RUN-021).
	ContractValidateType = "ContractValidationTest"
)

// ContractViolationKind is the error of an invalid ContractValidateType test: the tool error
// kind of the rendered refusal.
const ContractViolationKind = "Denied"

// ContractSchemas is contract_schemas.json: which contract schemas compile, and the first
// violation a value breaks.
type ContractSchemas struct {
	Header
	TestGroups []ContractGroup `json:"testGroups"`
}

// ContractGroup holds the tests of one group type. Schema is, for ContractValidateType, the
// compact JSON of the schema every test of the group is validated against.
type ContractGroup struct {
	Type   string         `json:"type"`
	Schema *Text          `json:"schema,omitempty"`
	Tests  []ContractTest `json:"tests"`
}

// ContractTest is one contract test. Which fields are present depends on the group type:
//
//   - ContractCompileType: Schema (JSON text, already compact) and SchemaBytes, its length in
//     bytes, in; it compiles, or it is refused with the reference's SchemaError variant as the
//     error and Message as the refusal's exact text.
//   - ContractValidateType: Value (JSON text, an object or an array) in; it passes, or it
//     breaks the group's schema and the first violation has ViolationPath and
//     ViolationMessage; InputError and OutputError are that violation rendered for a tool's
//     input and for its output.
type ContractTest struct {
	Case
	Schema           *Text  `json:"schema,omitempty"`
	SchemaBytes      *int   `json:"schema_bytes,omitempty"`
	Message          string `json:"message,omitempty"`
	Value            *Text  `json:"value,omitempty"`
	ViolationPath    string `json:"violation_path,omitempty"`
	ViolationMessage string `json:"violation_message,omitempty"`
	InputError       string `json:"input_error,omitempty"`
	OutputError      string `json:"output_error,omitempty"`
}
