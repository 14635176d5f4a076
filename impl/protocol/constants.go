// Package protocol implements Splash worker protocol v5 as the Rust reference
// (crates/splash-protocol) defines it: the message types and their exact JSON bytes, the
// serde decoding rules, validation in the reference's check order, capability manifests and
// their attenuation, payload limits, canonical operation inputs and fingerprints, frames, the
// error kinds, and (in the key and auth files) session keys and the frame authenticator.
//
// Every type writes itself with AppendJSON in the byte layout serde_json produces: fields in
// declaration order, compact, sets sorted and deduplicated. Decoders accept exactly what the
// reference accepts (see package derive), and validation runs the reference's checks in the
// reference's order, so the first failing check decides the error kind.
package protocol

// Protocol constants (the limits are listed in spec section 2.9).
const (
	// ProtocolVersion is the only protocol_version accepted in manifests and messages.
	ProtocolVersion uint16 = 5
	// AuthDomain is the domain string that opens every tag input.
	AuthDomain = "splash-worker-auth-v5"
	// MaxWireFrameBytes bounds a frame line read, a serialized frame or message, and a
	// serialized tag input.
	MaxWireFrameBytes = 1 << 20
	// AuthTagBytes is the length of a BLAKE3 authentication tag (64 hex characters on the
	// wire).
	AuthTagBytes = 32
	// SessionKeyBytes is the length of a session key.
	SessionKeyBytes = 32
	// MaxTokenBytes bounds the length of a token (MSG-002).
	MaxTokenBytes = 128
	// MaxResourcesPerGrant bounds the distinct resource selectors of one grant.
	MaxResourcesPerGrant = 64
	// MaxCapabilityGrantsPerManifest bounds the grants of one manifest.
	MaxCapabilityGrantsPerManifest = 128
	// MaxSessionRequestIDs bounds the distinct ids one session authorizer ever reserves.
	MaxSessionRequestIDs = 1024
	// MaxJSONPayloadDepth bounds the depth of a JSON payload; the root is depth 1 and scalars
	// count as a level.
	MaxJSONPayloadDepth = 32
	// MaxOperationErrorBytes bounds the UTF-8 length of a failed status message.
	MaxOperationErrorBytes = 4096
	// MaxWorkerOperationJournalBytes bounds a serialized worker operation journal.
	MaxWorkerOperationJournalBytes = 256 * 1024
	// MaxWorkerOperationRecords bounds the records of one worker operation journal.
	MaxWorkerOperationRecords = 64
	// WorkerOperationJournalFormatVersion is the journal format_version written and accepted.
	WorkerOperationJournalFormatVersion uint8 = 2
	// MaxNetworkOriginAccessIDs bounds a host-side network-origin access set.
	MaxNetworkOriginAccessIDs = 128
	// PrivatePipeWorkerBootstrapMagic opens the private-pipe bootstrap preamble.
	PrivatePipeWorkerBootstrapMagic = "SPLPBOOT"
	// PrivatePipeWorkerBootstrapVersion is the bootstrap preamble version.
	PrivatePipeWorkerBootstrapVersion uint8 = 1
)

// Defaults of the grant constructors [TextGrant] and [JSONGrant].
const (
	DefaultMaxCalls       uint32 = 1
	DefaultMaxInputBytes  uint32 = 16 * 1024
	DefaultMaxOutputBytes uint32 = 64 * 1024
)

// Domain strings of the fingerprints (FP-007, FP-016).
const (
	// OperationInputDomain prefixes the canonical input bytes in an operation input
	// fingerprint.
	OperationInputDomain = "splash-worker-operation-input-v1"
	// CompensationGrantDomain prefixes the length-prefixed grant JSON in a compensation
	// fingerprint.
	CompensationGrantDomain = "splash-compensation-grant-v1"
)
