package storage

import (
	"fmt"
	"strconv"

	"github.com/splashv5/conform/impl/errkind"
)

// ErrorKind identifies one failure rule of the storage layer. Each kind
// corresponds to one variant of the reference error enumerations; String
// returns that variant's name. An ErrorKind is itself an error, so it can be
// used as an errors.Is target: errors.Is(err, ErrFencingRequired).
type ErrorKind = errkind.Kind[kinds]

// kinds is the space of the storage error kinds.
type kinds struct{}

// Table describes the storage error kinds.
func (kinds) Table() *errkind.Table { return &kindTable }

// Identifier and keyring errors (StorageRecordKeyError, StorageKeyIdError,
// StorageKeyringError).
const (
	// ErrInvalidNamespace: the record namespace is not a token of at most 64 bytes.
	ErrInvalidNamespace ErrorKind = iota + 1
	// ErrInvalidName: the record name is not a token of at most 128 bytes.
	ErrInvalidName
	// ErrInvalidStorageKeyID: a key identifier is not a token of at most 64 bytes.
	ErrInvalidStorageKeyID
	// ErrDuplicateKeyID: the keyring already holds a key under this identifier.
	ErrDuplicateKeyID
	// ErrKeyringUnknownKeyID: the keyring holds no key under this identifier.
	ErrKeyringUnknownKeyID
	// ErrActiveKeyCannotBeRetired: the active key was asked to be retired.
	ErrActiveKeyCannotBeRetired
)

// Authenticated store errors (AuthenticatedStoreError).
const (
	// ErrBackend: the backend failed; the backend's error is wrapped.
	ErrBackend ErrorKind = iota + 16
	// ErrPayloadTooLarge: a payload exceeds MaxPayloadBytes.
	ErrPayloadTooLarge
	// ErrRecordTooLarge: a stored or sealed envelope exceeds MaxRecordBytes.
	ErrRecordTooLarge
	// ErrEncoding: the envelope could not be encoded.
	ErrEncoding
	// ErrInvalidEnvelope: the stored bytes are not a well-formed envelope.
	ErrInvalidEnvelope
	// ErrUnsupportedFormat: the envelope format_version is not 1.
	ErrUnsupportedFormat
	// ErrInvalidKeyID: the envelope key_id is not a valid key identifier.
	ErrInvalidKeyID
	// ErrUnknownKeyID: the envelope key_id names no key of the keyring.
	ErrUnknownKeyID
	// ErrInvalidRevision: a record revision is zero.
	ErrInvalidRevision
	// ErrRevisionMismatch: the envelope revision differs from the backend's.
	ErrRevisionMismatch
	// ErrInvalidAuthenticationTag: the tag is malformed or does not verify.
	ErrInvalidAuthenticationTag
	// ErrRollbackDetected: the record is missing or older than its revision floor.
	ErrRollbackDetected
	// ErrRevisionFloorMismatch: the record is newer than its revision floor,
	// or a successful write reported a floor other than its new revision.
	ErrRevisionFloorMismatch
	// ErrRevisionExhausted: the next revision would overflow a uint64.
	ErrRevisionExhausted
	// ErrWriteConflict: the record revision differs from the expected one.
	ErrWriteConflict
)

// Backend errors (VolatileMemoryStoreError, plus the durable backends' own).
const (
	// ErrBackendRevisionExhausted: the backend cannot compute the next revision.
	ErrBackendRevisionExhausted ErrorKind = iota + 48
	// ErrFencingTokenExhausted: the fencing token is already the largest uint64.
	ErrFencingTokenExhausted
	// ErrInvalidFencingToken: a fencing token of zero was supplied.
	ErrInvalidFencingToken
	// ErrInvalidReplacementRevision: the replacement revision is not expected+1.
	ErrInvalidReplacementRevision
	// ErrFencingRequired: a plain compare-and-swap targeted a fenced record.
	ErrFencingRequired
	// ErrFencingTokenRejected: the supplied fence is lower than (establish) or
	// different from (fenced compare-and-swap) the current fence.
	ErrFencingTokenRejected
	// ErrSQLite: the SQLite database failed; the driver error is wrapped.
	ErrSQLite
	// ErrStoredRecordTooLarge: a stored or replacement record exceeds MaxRecordBytes.
	ErrStoredRecordTooLarge
	// ErrRecordCommitmentMismatch: the stored record does not match the
	// commitment recorded in its rollback-anchor state.
	ErrRecordCommitmentMismatch
	// ErrMissingRecordCommitment: anchor state with a nonzero floor lacks a commitment.
	ErrMissingRecordCommitment
	// ErrUnexpectedRecordCommitment: anchor state with a zero floor has a commitment.
	ErrUnexpectedRecordCommitment
	// ErrBackendClosed: the backend was used after Close.
	ErrBackendClosed
	// ErrBolt: the bbolt database file failed, or another process holds its lock; the
	// underlying error is wrapped.
	ErrBolt
	// ErrEtcd: the etcd cluster failed or did not answer in time; the client error is
	// wrapped. The outcome of a write that fails this way is unknown (indeterminate).
	ErrEtcd
	// ErrEtcdRollback: the etcd cluster answered with a lower revision than one already
	// seen, or under another cluster id: it was restored from an older copy or replaced.
	ErrEtcdRollback
	// ErrTooManyCandidates: an anchored local store holds the most unanchored candidates it
	// keeps for a record; recover with a fresh fence and a discard of the candidates.
	ErrTooManyCandidates
	// ErrCorrupt: a value the backend stored does not decode (a truncated or rewritten etcd
	// value, an unknown value format). It is not an outage: retrying reads the same bytes.
	ErrCorrupt
	// ErrBelowWitness: the store answered below the durable witness this machine keeps of
	// what it has seen (a cluster restored from an older snapshot, or replaced), so it is
	// refused until an operator moves the witness on.
	ErrBelowWitness
	// ErrLogFile: the storage log file failed, or another process held its lock longer than
	// the lock timeout; the underlying error is wrapped.
	ErrLogFile
)

var kindTable = errkind.Table{Type: "ErrorKind", Prefix: "storage: ", Kinds: []errkind.Entry{
	ErrInvalidNamespace:           {Name: "InvalidNamespace", Message: "record namespace must be a lowercase token of at most 64 bytes"},
	ErrInvalidName:                {Name: "InvalidName", Message: "record name must be a lowercase token of at most 128 bytes"},
	ErrInvalidStorageKeyID:        {Name: "Invalid", Message: "storage key id must be a lowercase token of at most 64 bytes"},
	ErrDuplicateKeyID:             {Name: "DuplicateKeyId", Message: "keyring already holds this key id"},
	ErrKeyringUnknownKeyID:        {Name: "UnknownKeyId", Message: "keyring holds no key with this id"},
	ErrActiveKeyCannotBeRetired:   {Name: "ActiveKeyCannotBeRetired", Message: "the active key cannot be retired"},
	ErrBackend:                    {Name: "Backend", Message: "backend failure"},
	ErrPayloadTooLarge:            {Name: "PayloadTooLarge", Message: "payload too large"},
	ErrRecordTooLarge:             {Name: "RecordTooLarge", Message: "stored envelope too large"},
	ErrEncoding:                   {Name: "Encoding", Message: "envelope could not be encoded"},
	ErrInvalidEnvelope:            {Name: "InvalidEnvelope", Message: "stored envelope is malformed"},
	ErrUnsupportedFormat:          {Name: "UnsupportedFormat", Message: "unsupported envelope format version"},
	ErrInvalidKeyID:               {Name: "InvalidKeyId", Message: "envelope key id is malformed"},
	ErrUnknownKeyID:               {Name: "UnknownKeyId", Message: "envelope key id is not in the keyring"},
	ErrInvalidRevision:            {Name: "InvalidRevision", Message: "record revision must not be zero"},
	ErrRevisionMismatch:           {Name: "RevisionMismatch", Message: "envelope revision differs from the backend revision"},
	ErrInvalidAuthenticationTag:   {Name: "InvalidAuthenticationTag", Message: "record authentication tag is malformed or does not verify"},
	ErrRollbackDetected:           {Name: "RollbackDetected", Message: "record rolled back below its revision floor"},
	ErrRevisionFloorMismatch:      {Name: "RevisionFloorMismatch", Message: "record revision and revision floor disagree"},
	ErrRevisionExhausted:          {Name: "RevisionExhausted", Message: "record revision space exhausted"},
	ErrWriteConflict:              {Name: "WriteConflict", Message: "compare-and-swap conflict"},
	ErrBackendRevisionExhausted:   {Name: "RevisionExhausted", Message: "backend revision space exhausted"},
	ErrFencingTokenExhausted:      {Name: "FencingTokenExhausted", Message: "fencing token space exhausted"},
	ErrInvalidFencingToken:        {Name: "InvalidFencingToken", Message: "fencing token must be nonzero"},
	ErrInvalidReplacementRevision: {Name: "InvalidReplacementRevision", Message: "replacement revision must be the expected revision plus one"},
	ErrFencingRequired:            {Name: "FencingRequired", Message: "record is fenced; a fenced compare-and-swap is required"},
	ErrFencingTokenRejected:       {Name: "FencingTokenRejected", Message: "fencing token rejected"},
	ErrSQLite:                     {Name: "Sqlite", Message: "sqlite failure"},
	ErrStoredRecordTooLarge:       {Name: "StoredRecordTooLarge", Message: "stored record exceeds the backend limit"},
	ErrRecordCommitmentMismatch:   {Name: "AnchorRecordCommitmentMismatch", Message: "stored record does not match its anchored commitment"},
	ErrMissingRecordCommitment:    {Name: "MissingRecordCommitment", Message: "anchor state with a nonzero floor has no record commitment"},
	ErrUnexpectedRecordCommitment: {Name: "UnexpectedRecordCommitment", Message: "anchor state with a zero floor carries a record commitment"},
	ErrBackendClosed:              {Name: "BackendClosed", Message: "backend is closed"},
	ErrBolt:                       {Name: "Bolt", Message: "bbolt failure"},
	ErrEtcd:                       {Name: "Etcd", Message: "etcd failure"},
	ErrEtcdRollback:               {Name: "EtcdRollback", Message: "etcd cluster went back to an older revision or was replaced"},
	ErrTooManyCandidates:          {Name: "TooManyCandidates", Message: "too many unanchored candidates for the record; reserve a recovery fence and discard them"},
	ErrCorrupt:                    {Name: "Corrupt", Message: "stored value does not decode"},
	ErrBelowWitness:               {Name: "BelowWitness", Message: "store is below the witness of what this machine has seen"},
	ErrLogFile:                    {Name: "LogFile", Message: "storage log file failure"},
}}

// Error is a storage failure. Kind says which rule failed; the other fields
// carry the variant's data and are zero when the kind does not use them. An
// Error never contains key material or payload bytes.
type Error struct {
	errkind.Kind[kinds]

	// Size and Limit: PayloadTooLarge, RecordTooLarge, StoredRecordTooLarge.
	Size, Limit int
	// Version: UnsupportedFormat.
	Version uint8
	// Expected: WriteConflict (nil = the record was expected absent) and
	// InvalidReplacementRevision.
	Expected *uint64
	// Actual: the record revision seen (nil = absent) in WriteConflict,
	// RollbackDetected, RevisionFloorMismatch; the supplied replacement
	// revision in InvalidReplacementRevision.
	Actual *uint64
	// Floor: the revision floor in WriteConflict, RollbackDetected and
	// RevisionFloorMismatch.
	Floor uint64
	// BackendRevision and EnvelopeRevision: RevisionMismatch.
	BackendRevision, EnvelopeRevision uint64
	// CurrentFence: FencingRequired, FencingTokenRejected.
	CurrentFence uint64
	// SuppliedFence: FencingTokenRejected.
	SuppliedFence uint64
	// KeyID: keyring errors.
	KeyID KeyID
	// Err: the wrapped cause (Backend, Sqlite).
	Err error
}

// Error describes the failure and its data.
func (e *Error) Error() string {
	msg := e.Kind.Error()
	switch e.Kind {
	case ErrPayloadTooLarge, ErrRecordTooLarge, ErrStoredRecordTooLarge:
		msg += fmt.Sprintf(": %d bytes, limit %d", e.Size, e.Limit)
	case ErrUnsupportedFormat:
		msg += fmt.Sprintf(": %d", e.Version)
	case ErrWriteConflict:
		msg += fmt.Sprintf(": expected %s, actual %s, floor %d", optRevision(e.Expected), optRevision(e.Actual), e.Floor)
	case ErrRollbackDetected, ErrRevisionFloorMismatch:
		msg += fmt.Sprintf(": record %s, floor %d", optRevision(e.Actual), e.Floor)
	case ErrInvalidReplacementRevision:
		msg += fmt.Sprintf(": expected %s, got %s", optRevision(e.Expected), optRevision(e.Actual))
	case ErrRevisionMismatch:
		msg += fmt.Sprintf(": backend %d, envelope %d", e.BackendRevision, e.EnvelopeRevision)
	case ErrFencingRequired:
		msg += fmt.Sprintf(": current fence %d", e.CurrentFence)
	case ErrFencingTokenRejected:
		msg += fmt.Sprintf(": current %d, supplied %d", e.CurrentFence, e.SuppliedFence)
	case ErrDuplicateKeyID, ErrKeyringUnknownKeyID:
		msg += fmt.Sprintf(": %q", string(e.KeyID))
	}
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

func backendError(err error) error {
	return &Error{Kind: ErrBackend, Err: err}
}
