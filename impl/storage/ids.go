package storage

import "fmt"

// Size limits and format constants of the authenticated record store.
const (
	// KeyBytes is the length of a storage authentication key.
	KeyBytes = 32
	// TagBytes is the length of a record authentication tag.
	TagBytes = 32
	// MaxKeyIDBytes is the longest accepted storage key identifier.
	MaxKeyIDBytes = 64
	// MaxNamespaceBytes is the longest accepted record namespace.
	MaxNamespaceBytes = 64
	// MaxNameBytes is the longest accepted record name.
	MaxNameBytes = 128
	// MaxPayloadBytes is the largest payload one record may hold.
	MaxPayloadBytes = 256 * 1024
	// MaxRecordBytes is the largest stored envelope a backend may hand back.
	MaxRecordBytes = 384 * 1024
	// FormatVersion is the envelope format written by this package.
	FormatVersion uint8 = 1
)

// validToken reports whether s is a non-empty string of at most maximum bytes
// drawn from a-z, 0-9, '.', '_' and '-'.
func validToken(s string, maximum int) bool {
	if len(s) == 0 || len(s) > maximum {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// RecordKey addresses one durable record. Namespace is a token of at most 64
// bytes, Name a token of at most 128 bytes. The zero value is invalid; every
// store and backend operation validates the key it is given.
type RecordKey struct {
	Namespace string
	Name      string
}

// NewRecordKey returns the record key (namespace, name) after validating both
// parts. It fails with ErrInvalidNamespace or ErrInvalidName.
func NewRecordKey(namespace, name string) (RecordKey, error) {
	k := RecordKey{Namespace: namespace, Name: name}
	if err := k.Validate(); err != nil {
		return RecordKey{}, err
	}
	return k, nil
}

// Validate checks the namespace first, then the name.
func (k RecordKey) Validate() error {
	if !validToken(k.Namespace, MaxNamespaceBytes) {
		return &Error{Kind: ErrInvalidNamespace}
	}
	if !validToken(k.Name, MaxNameBytes) {
		return &Error{Kind: ErrInvalidName}
	}
	return nil
}

// String returns "namespace/name".
func (k RecordKey) String() string {
	return fmt.Sprintf("%s/%s", k.Namespace, k.Name)
}

// KeyID names one version of a storage key. It is not secret. A valid KeyID
// is a token of at most 64 bytes.
type KeyID string

// ParseKeyID validates s as a storage key identifier (ErrInvalidStorageKeyID).
func ParseKeyID(s string) (KeyID, error) {
	id := KeyID(s)
	if err := id.Validate(); err != nil {
		return "", err
	}
	return id, nil
}

// Validate reports ErrInvalidStorageKeyID unless id is a token of at most 64
// bytes.
func (id KeyID) Validate() error {
	if !validToken(string(id), MaxKeyIDBytes) {
		return &Error{Kind: ErrInvalidStorageKeyID}
	}
	return nil
}

// ExpectRevision returns a pointer to r, for the expected-revision argument of
// the compare-and-swap operations (nil there means "the record must be
// absent").
func ExpectRevision(r uint64) *uint64 { return &r }
