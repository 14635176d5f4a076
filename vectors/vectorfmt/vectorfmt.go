// Package vectorfmt defines the on-disk shape of the Splash protocol v5 golden vector files
// in the vectors directory: the common file header, the per-file test group and test case
// types, and the conventions they share.
//
// Every file is one JSON object in the spirit of Project Wycheproof: a header naming its JSON
// Schema and the number of tests, a dictionary of flags, and a list of test groups. A group
// holds parameters shared by its tests (a session key, a role, a number mode); a test holds
// its inputs, its expected outputs, the spec requirement IDs it proves, and a result of
// "valid" or "invalid". An invalid test names the expected error kind by the reference
// implementation's error variant name.
//
// Test case IDs (tcId) are unique within a file and permanent: new cases are only ever
// appended, so a port may pin or skip individual tcIds across regenerations.
//
// Every schema type of every vector file is defined here, and nowhere else. Both the generator
// (cmd/splash-vectors) and the readers (package vectors, package vectors/replay) use these
// types, so the writer and the readers cannot drift apart.
package vectorfmt

// Result values of a test.
const (
	// Valid marks a test whose operation succeeds and whose outputs are given.
	Valid = "valid"
	// Invalid marks a test whose operation fails with the error kind given in Error.
	Invalid = "invalid"
)

// GeneratorName is the value of every file's "generator" field.
const GeneratorName = "splash-vectors"

// File names of the vector files. The specification cites them; they never change.
const (
	CanonicalJSONFile = "canonical_json.json"
	MessagesFile      = "messages.json"
	FramesSealFile    = "frames_seal.json"
	FramesOpenFile    = "frames_open.json"
	BootstrapFile     = "bootstrap.json"
	ManifestsFile     = "manifests.json"
	AttenuationFile   = "attenuation.json"
	FingerprintsFile  = "fingerprints.json"
	AuthorizerFile    = "authorizer.json"
	JournalFile       = "journal.json"
	StorageFile       = "storage.json"
)

// FileNames lists every vector file in a fixed order.
var FileNames = []string{
	CanonicalJSONFile,
	MessagesFile,
	FramesSealFile,
	FramesOpenFile,
	BootstrapFile,
	ManifestsFile,
	AttenuationFile,
	FingerprintsFile,
	AuthorizerFile,
	JournalFile,
	StorageFile,
	HostScenariosFile,
	LedgerFile,
	SecretsFile,
	ScriptsFile,
	ContractSchemasFile,
}

// SchemaName returns the JSON Schema file name (in vectors/schema) for a vector file name.
func SchemaName(fileName string) string {
	return fileName[:len(fileName)-len(".json")] + ".schema.json"
}

// Header is the part shared by every vector file.
type Header struct {
	// Schema names the JSON Schema of the file, relative to the schema directory.
	Schema string `json:"schema"`
	// ProtocolVersion is always 5.
	ProtocolVersion int `json:"protocol_version"`
	// Generator is always GeneratorName.
	Generator string `json:"generator"`
	// NumberOfTests counts the tests of all groups.
	NumberOfTests int `json:"numberOfTests"`
	// Notes maps every flag used in the file to its meaning.
	Notes map[string]string `json:"notes"`
}

// Case holds the fields every test has.
type Case struct {
	// TcID is the permanent, file-unique test case ID.
	TcID int `json:"tcId"`
	// Comment says in words what the test exercises.
	Comment string `json:"comment"`
	// Flags classify the test; each flag is explained in the file's notes.
	Flags []string `json:"flags"`
	// Requirements lists the spec requirement IDs the test proves.
	Requirements []string `json:"requirements"`
	// Result is Valid or Invalid.
	Result string `json:"result"`
	// Error is the expected error kind of an invalid test (a reference variant name).
	Error string `json:"error,omitempty"`
}
