package storage

import (
	"strconv"

	"github.com/splashv5/conform/impl/errkind"
)

// ErrorKind identifies one failure rule of the storage layer, a variant of the reference's errors.
type ErrorKind = errkind.Kind[kinds]

type kinds struct{}

// Table describes the storage error kinds.
func (kinds) Table() *errkind.Table { return &kindTable }

// The storage error kinds; a kind's meaning is its message in kindTable, and its entry's Doc
// says what the message leaves out.
const (
	// Identifiers and keyring (StorageRecordKeyError, StorageKeyIdError, StorageKeyringError).
	ErrInvalidNamespace ErrorKind = iota + 1
	ErrInvalidName
	ErrInvalidStorageKeyID
	ErrDuplicateKeyID
	ErrKeyringUnknownKeyID
	ErrActiveKeyCannotBeRetired

	// The authenticated store (AuthenticatedStoreError).
	ErrBackend
	ErrPayloadTooLarge
	ErrRecordTooLarge
	ErrEncoding
	ErrInvalidEnvelope
	ErrUnsupportedFormat
	ErrInvalidKeyID
	ErrUnknownKeyID
	ErrInvalidRevision
	ErrRevisionMismatch
	ErrInvalidAuthenticationTag
	ErrRollbackDetected
	ErrRevisionFloorMismatch
	ErrRevisionExhausted
	ErrWriteConflict

	// Backends (VolatileMemoryStoreError, plus the durable backends' own).
	ErrBackendRevisionExhausted
	ErrFencingTokenExhausted
	ErrInvalidFencingToken
	ErrInvalidReplacementRevision
	ErrFencingRequired
	ErrFencingTokenRejected
	ErrSQLite
	ErrStoredRecordTooLarge
	ErrRecordCommitmentMismatch
	ErrMissingRecordCommitment
	ErrUnexpectedRecordCommitment
	ErrBackendClosed
	ErrBolt
	ErrEtcd
	ErrEtcdRollback
	ErrTooManyCandidates
	ErrCorrupt
	ErrBelowWitness
	ErrLogFile
)

var kindTable = errkind.Table{Type: "ErrorKind", Prefix: "storage: ", Kinds: []errkind.Entry{
	ErrInvalidNamespace:           {Name: "InvalidNamespace", Message: "record namespace must be a lowercase token of at most 64 bytes"},
	ErrInvalidName:                {Name: "InvalidName", Message: "record name must be a lowercase token of at most 128 bytes"},
	ErrInvalidStorageKeyID:        {Name: "Invalid", Message: "storage key id must be a lowercase token of at most 64 bytes"},
	ErrDuplicateKeyID:             {Name: "DuplicateKeyId", Message: "keyring already holds this key id", Detail: "{}: {key}"},
	ErrKeyringUnknownKeyID:        {Name: "UnknownKeyId", Message: "keyring holds no key with this id", Detail: "{}: {key}"},
	ErrActiveKeyCannotBeRetired:   {Name: "ActiveKeyCannotBeRetired", Message: "the active key cannot be retired"},
	ErrBackend:                    {Name: "Backend", Message: "backend failure", Doc: "Err holds the backend's error"},
	ErrPayloadTooLarge:            {Name: "PayloadTooLarge", Message: "payload too large", Detail: "{}: {size} bytes, limit {limit}", Doc: "above MaxPayloadBytes"},
	ErrRecordTooLarge:             {Name: "RecordTooLarge", Message: "stored envelope too large", Detail: "{}: {size} bytes, limit {limit}", Doc: "a stored or sealed envelope above MaxRecordBytes"},
	ErrEncoding:                   {Name: "Encoding", Message: "envelope could not be encoded"},
	ErrInvalidEnvelope:            {Name: "InvalidEnvelope", Message: "stored envelope is malformed"},
	ErrUnsupportedFormat:          {Name: "UnsupportedFormat", Message: "unsupported envelope format version", Detail: "{}: {version}", Doc: "format_version is not 1"},
	ErrInvalidKeyID:               {Name: "InvalidKeyId", Message: "envelope key id is malformed"},
	ErrUnknownKeyID:               {Name: "UnknownKeyId", Message: "envelope key id is not in the keyring"},
	ErrInvalidRevision:            {Name: "InvalidRevision", Message: "record revision must not be zero"},
	ErrRevisionMismatch:           {Name: "RevisionMismatch", Message: "envelope revision differs from the backend revision", Detail: "{}: backend {backend}, envelope {envelope}"},
	ErrInvalidAuthenticationTag:   {Name: "InvalidAuthenticationTag", Message: "record authentication tag is malformed or does not verify"},
	ErrRollbackDetected:           {Name: "RollbackDetected", Message: "record rolled back below its revision floor", Detail: "{}: record {actual}, floor {floor}", Doc: "the record is missing or older than its floor"},
	ErrRevisionFloorMismatch:      {Name: "RevisionFloorMismatch", Message: "record revision and revision floor disagree", Detail: "{}: record {actual}, floor {floor}", Doc: "the record is newer than its floor, or a write reported a floor other than its new revision"},
	ErrRevisionExhausted:          {Name: "RevisionExhausted", Message: "record revision space exhausted", Doc: "the next revision would overflow a uint64"},
	ErrWriteConflict:              {Name: "WriteConflict", Message: "compare-and-swap conflict", Detail: "{}: expected {expected}, actual {actual}, floor {floor}", Doc: "the record revision differs from the expected one"},
	ErrBackendRevisionExhausted:   {Name: "RevisionExhausted", Message: "backend revision space exhausted"},
	ErrFencingTokenExhausted:      {Name: "FencingTokenExhausted", Message: "fencing token space exhausted", Doc: "the fence is already the largest uint64"},
	ErrInvalidFencingToken:        {Name: "InvalidFencingToken", Message: "fencing token must be nonzero"},
	ErrInvalidReplacementRevision: {Name: "InvalidReplacementRevision", Message: "replacement revision must be the expected revision plus one", Detail: "{}: expected {expected}, got {actual}"},
	ErrFencingRequired:            {Name: "FencingRequired", Message: "record is fenced; a fenced compare-and-swap is required", Detail: "{}: current fence {current}", Doc: "a plain compare-and-swap targeted a fenced record"},
	ErrFencingTokenRejected:       {Name: "FencingTokenRejected", Message: "fencing token rejected", Detail: "{}: current {current}, supplied {supplied}", Doc: "the supplied fence is lower than (establish) or differs from (fenced compare-and-swap) the current one"},
	ErrSQLite:                     {Name: "Sqlite", Message: "sqlite failure", Doc: "Err holds the driver's error"},
	ErrStoredRecordTooLarge:       {Name: "StoredRecordTooLarge", Message: "stored record exceeds the backend limit", Detail: "{}: {size} bytes, limit {limit}", Doc: "a stored or replacement record above MaxRecordBytes"},
	ErrRecordCommitmentMismatch:   {Name: "AnchorRecordCommitmentMismatch", Message: "stored record does not match its anchored commitment"},
	ErrMissingRecordCommitment:    {Name: "MissingRecordCommitment", Message: "anchor state with a nonzero floor has no record commitment"},
	ErrUnexpectedRecordCommitment: {Name: "UnexpectedRecordCommitment", Message: "anchor state with a zero floor carries a record commitment"},
	ErrBackendClosed:              {Name: "BackendClosed", Message: "backend is closed", Doc: "used after Close"},
	ErrBolt:                       {Name: "Bolt", Message: "bbolt failure", Doc: "or another process holds the file lock; Err holds the cause"},
	ErrEtcd:                       {Name: "Etcd", Message: "etcd failure", Doc: "or no answer in time; Err holds the client error. The outcome of a write is unknown (indeterminate)"},
	ErrEtcdRollback:               {Name: "EtcdRollback", Message: "etcd cluster went back to an older revision or was replaced", Doc: "a lower revision than one already seen, or another cluster id: restored from an older copy or replaced"},
	ErrTooManyCandidates:          {Name: "TooManyCandidates", Message: "too many unanchored candidates for the record; reserve a recovery fence and discard them", Doc: "an anchored local store keeps no more unanchored candidates for the record"},
	ErrCorrupt:                    {Name: "Corrupt", Message: "stored value does not decode", Doc: "a truncated or rewritten etcd value, an unknown value format; not an outage: a retry reads the same bytes"},
	ErrBelowWitness:               {Name: "BelowWitness", Message: "store is below the witness of what this machine has seen", Doc: "the durable witness of what this machine has seen (an older snapshot, a replaced cluster); refused until an operator moves the witness on"},
	ErrLogFile:                    {Name: "LogFile", Message: "storage log file failure", Doc: "or another process held its lock longer than the lock timeout; Err holds the cause"},
}}

// Error is a storage failure. Kind says which rule failed; the other fields
// carry the variant's data and are zero when the kind does not use them. An
// Error never contains key material or payload bytes.
type Error struct {
	errkind.Kind[kinds]
	Size, Limit                       int     // PayloadTooLarge, RecordTooLarge, StoredRecordTooLarge
	Version                           uint8   // UnsupportedFormat
	Expected                          *uint64 // WriteConflict (nil: expected absent), InvalidReplacementRevision
	Actual                            *uint64 // the record revision seen (nil: absent), or the supplied replacement revision
	Floor                             uint64  // the revision floor of WriteConflict, RollbackDetected, RevisionFloorMismatch
	BackendRevision, EnvelopeRevision uint64  // RevisionMismatch
	CurrentFence                      uint64  // FencingRequired, FencingTokenRejected
	SuppliedFence                     uint64  // FencingTokenRejected
	KeyID                             KeyID   // the keyring kinds
	Err                               error   // the wrapped cause (Backend, Sqlite, Bolt, Etcd)
}

// Error describes the failure and its data.
func (e *Error) Error() string {
	msg := e.Kind.Expand("size", e.Size, "limit", e.Limit, "version", e.Version,
		"expected", optRevision(e.Expected), "actual", optRevision(e.Actual), "floor", e.Floor,
		"backend", e.BackendRevision, "envelope", e.EnvelopeRevision,
		"current", e.CurrentFence, "supplied", e.SuppliedFence, "key", strconv.Quote(string(e.KeyID)))
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the wrapped cause, if any.
func (e *Error) Unwrap() error { return e.Err }

func optRevision(r *uint64) string {
	if r == nil {
		return "none"
	}
	return strconv.FormatUint(*r, 10)
}
