package vectorfmt

// Group types (the "type" field of a test group). Each names the operation its tests exercise.
const (
	CanonicalValueType    = "CanonicalValueTest"
	CanonicalPayloadType  = "CanonicalPayloadTest"
	MessageDecodeType     = "MessageDecodeTest"
	FrameSealType         = "FrameSealTest"
	FrameOpenType         = "FrameOpenTest"
	BootstrapReadType     = "BootstrapReadTest"
	BootstrapWriteType    = "BootstrapWriteTest"
	ManifestValidateType  = "ManifestValidateTest"
	GrantAttenuateType    = "GrantAttenuateTest"
	ManifestAttenuateType = "ManifestAttenuateTest"
	CanonicalInputType    = "CanonicalInputTest"
	GrantFingerprintType  = "GrantFingerprintTest"
)

// Generic is the view of any vector file that the structural checks need: the header and,
// per group, its type and the shared fields of its tests.
type Generic struct {
	Header
	TestGroups []struct {
		Type  string `json:"type"`
		Tests []Case `json:"tests"`
	} `json:"testGroups"`
}

// CanonicalJSON is canonical_json.json: JSON text read in one number mode and written back by
// the canonical writer.
type CanonicalJSON struct {
	Header
	TestGroups []CanonicalJSONGroup `json:"testGroups"`
}

// CanonicalJSONGroup holds canonical JSON tests of one type and mode.
type CanonicalJSONGroup struct {
	// Type is CanonicalValueType (any JSON value) or CanonicalPayloadType (the value must also
	// be a valid json tool payload: an object or array within the depth limit).
	Type string `json:"type"`
	// Mode is the number mode, "preserve" or "lossy".
	Mode  string              `json:"mode"`
	Tests []CanonicalJSONTest `json:"tests"`
}

// CanonicalJSONTest reads Input (or the bytes of InputHex) and expects Output.
type CanonicalJSONTest struct {
	Case
	// Input is the JSON text when it is valid UTF-8.
	Input *Text `json:"input,omitempty"`
	// InputHex is the input bytes in lowercase hex when they are not valid UTF-8.
	InputHex *string `json:"input_hex,omitempty"`
	// Output is the canonical serialization of a valid test.
	Output *Text `json:"output,omitempty"`
}

// Messages is messages.json: one worker message decoded from JSON text.
type Messages struct {
	Header
	TestGroups []MessageGroup `json:"testGroups"`
}

// MessageGroup holds message decoding tests in one number mode.
type MessageGroup struct {
	// Type is MessageDecodeType.
	Type string `json:"type"`
	// Mode is the number mode, "preserve" or "lossy".
	Mode  string        `json:"mode"`
	Tests []MessageTest `json:"tests"`
}

// MessageTest decodes and validates Input (or the bytes of InputHex) as a worker message.
type MessageTest struct {
	Case
	Input    *Text   `json:"input,omitempty"`
	InputHex *string `json:"input_hex,omitempty"`
	// Output is the canonical re-serialization of a valid message.
	Output *Text `json:"output,omitempty"`
	// MessageType is the message's "type" value for a valid message.
	MessageType string `json:"message_type,omitempty"`
	// SessionID is the session the valid message names.
	SessionID string `json:"session_id,omitempty"`
}

// FramesSeal is frames_seal.json: messages sealed in order by one fresh sealer.
type FramesSeal struct {
	Header
	TestGroups []FrameSealGroup `json:"testGroups"`
}

// FrameSealGroup fixes the sealer: key, session, sending role and number mode.
type FrameSealGroup struct {
	// Type is FrameSealType.
	Type string `json:"type"`
	// KeyHex is the 32-byte session key in lowercase hex (a test key, never a real one).
	KeyHex string `json:"key_hex"`
	// SessionID is the authenticator's session id.
	SessionID string `json:"session_id"`
	// Role is the sealing role, "host" or "worker".
	Role string `json:"role"`
	// Mode is the number mode used to decode the input messages.
	Mode  string     `json:"mode"`
	Tests []SealTest `json:"tests"`
}

// SealTest decodes each message in Messages and seals it with one fresh sealer, in order.
// Results has one entry per message. A failed seal does not consume a sequence number.
type SealTest struct {
	Case
	// StartSequence, when present, is the sealer's first outgoing sequence instead of 1
	// (used to reach the end of the sequence space).
	StartSequence *uint64 `json:"start_sequence,omitempty"`
	// Received, when present, are frame lines from the peer (same key and session) that the
	// authenticator opens, in order, before it seals anything; each must open. A payload
	// number among them that no Lossy writer writes proves a text-keeping peer (ENC-053).
	Received []Text       `json:"received,omitempty"`
	Messages []Text       `json:"messages"`
	Results  []SealResult `json:"results"`
}

// SealResult is the outcome of sealing one message.
type SealResult struct {
	// Error is the error kind of a failed seal, empty on success.
	Error string `json:"error,omitempty"`
	// Sequence is the sequence number the frame was sealed with.
	Sequence uint64 `json:"sequence,omitempty"`
	// TagInput is the exact byte string that was tagged.
	TagInput *Text `json:"tag_input,omitempty"`
	// Tag is the 32-byte BLAKE3 keyed tag in lowercase hex.
	Tag string `json:"tag,omitempty"`
	// Line is the frame line (without the line feed).
	Line *Text `json:"line,omitempty"`
}

// FramesOpen is frames_open.json: lines opened in order by one fresh opener.
type FramesOpen struct {
	Header
	TestGroups []FrameOpenGroup `json:"testGroups"`
}

// FrameOpenGroup fixes the opener: key, session, receiving role and number mode.
type FrameOpenGroup struct {
	// Type is FrameOpenType.
	Type   string `json:"type"`
	KeyHex string `json:"key_hex"`
	// SessionID is the authenticator's session id.
	SessionID string `json:"session_id"`
	// Role is the receiving (opening) role, "host" or "worker"; frames are expected from the
	// other role.
	Role string `json:"role"`
	// Mode is the number mode used to decode and re-serialize the frames.
	Mode  string     `json:"mode"`
	Tests []OpenTest `json:"tests"`
}

// OpenTest opens each line with one fresh opener, in order. Exactly one of Lines and LinesHex
// is present (LinesHex when a line is not valid UTF-8). Results has one entry per line. A
// failed open changes no state.
type OpenTest struct {
	Case
	// StartSequence, when present, is the opener's first expected incoming sequence
	// instead of 1 (used to reach the end of the sequence space).
	StartSequence *uint64      `json:"start_sequence,omitempty"`
	Lines         []Text       `json:"lines,omitempty"`
	LinesHex      []string     `json:"lines_hex,omitempty"`
	Results       []OpenResult `json:"results"`
}

// OpenResult is the outcome of opening one line.
type OpenResult struct {
	// Error is the error kind of a failed open, empty on success.
	Error string `json:"error,omitempty"`
	// Sequence is the opened frame's sequence number.
	Sequence uint64 `json:"sequence,omitempty"`
	// MessageType is the opened message's "type" value.
	MessageType string `json:"message_type,omitempty"`
	// Message is the canonical serialization of the opened message.
	Message *Text `json:"message,omitempty"`
}

// Bootstrap is bootstrap.json: the private-pipe bootstrap preamble.
type Bootstrap struct {
	Header
	TestGroups []BootstrapGroup `json:"testGroups"`
}

// BootstrapGroup holds reader tests (BootstrapReadType) or writer tests (BootstrapWriteType).
type BootstrapGroup struct {
	Type  string          `json:"type"`
	Tests []BootstrapTest `json:"tests"`
}

// BootstrapTest is a read test (InputHex in; SessionID, KeyHex and Consumed out) or a write
// test (SessionID and KeyHex in; OutputHex out).
type BootstrapTest struct {
	Case
	// InputHex is the byte stream given to the reader, in lowercase hex.
	InputHex *string `json:"input_hex,omitempty"`
	// SessionID is the session id read, or given to the writer.
	SessionID *string `json:"session_id,omitempty"`
	// KeyHex is the session key read, or given to the writer (test keys only).
	KeyHex *string `json:"key_hex,omitempty"`
	// Consumed is the number of bytes the reader consumed; the rest stays in the stream.
	Consumed *int `json:"consumed,omitempty"`
	// OutputHex is the preamble the writer produced.
	OutputHex *string `json:"output_hex,omitempty"`
	// WrappedError names the wrapped cause of an invalid test whose Error is "Protocol" (a
	// protocol error kind such as "InvalidToken") or "Io" (an I/O error kind such as
	// "UnexpectedEof").
	WrappedError string `json:"wrapped_error,omitempty"`
}

// Manifests is manifests.json: capability manifests decoded and validated.
type Manifests struct {
	Header
	TestGroups []ManifestGroup `json:"testGroups"`
}

// ManifestGroup holds manifest validation tests.
type ManifestGroup struct {
	// Type is ManifestValidateType.
	Type  string         `json:"type"`
	Tests []ManifestTest `json:"tests"`
}

// ManifestTest decodes Input as a capability manifest and validates it.
type ManifestTest struct {
	Case
	Input *Text `json:"input"`
	// Output is the canonical serialization of a valid manifest.
	Output *Text `json:"output,omitempty"`
}

// Attenuation is attenuation.json: grant and manifest attenuation.
type Attenuation struct {
	Header
	TestGroups []AttenuationGroup `json:"testGroups"`
}

// AttenuationGroup holds grant (GrantAttenuateType) or manifest (ManifestAttenuateType)
// attenuation tests.
type AttenuationGroup struct {
	Type  string            `json:"type"`
	Tests []AttenuationTest `json:"tests"`
}

// AttenuationTest attenuates Grant (or Manifest) by Attenuation and expects Output.
type AttenuationTest struct {
	Case
	Grant       *Text `json:"grant,omitempty"`
	Manifest    *Text `json:"manifest,omitempty"`
	Attenuation *Text `json:"attenuation"`
	// Output is the canonical serialization of the attenuated grant or manifest.
	Output *Text `json:"output,omitempty"`
}

// Fingerprints is fingerprints.json: canonical operation input bytes and fingerprints.
type Fingerprints struct {
	Header
	TestGroups []FingerprintGroup `json:"testGroups"`
}

// FingerprintGroup holds canonical input tests (CanonicalInputType, with a Mode) or grant
// compensation fingerprint tests (GrantFingerprintType).
type FingerprintGroup struct {
	Type  string            `json:"type"`
	Mode  string            `json:"mode,omitempty"`
	Tests []FingerprintTest `json:"tests"`
}

// FingerprintTest is a canonical input test (Payload in; CanonicalHex and Fingerprint out)
// or a grant fingerprint test (Grant in; Fingerprint out).
type FingerprintTest struct {
	Case
	// Payload is a tool payload as JSON ({"format":...,"value":...}).
	Payload *Text `json:"payload,omitempty"`
	// Grant is a capability grant as JSON.
	Grant *Text `json:"grant,omitempty"`
	// CanonicalHex is the canonical operation input bytes in lowercase hex.
	CanonicalHex *string `json:"canonical_hex,omitempty"`
	// Fingerprint is the 64-hex-digit fingerprint.
	Fingerprint *string `json:"fingerprint,omitempty"`
}
