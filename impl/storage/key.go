package storage

import (
	"crypto/rand"
	"fmt"
	"io"
	"slices"
	"sync"
)

// Key is a 32-byte BLAKE3 key that authenticates stored envelopes. Unlike a
// session key it has no weak-key check: every 32-byte value is accepted. Its
// bytes can never be read back, and every formatting verb prints a redacted
// placeholder.
type Key struct {
	bytes [KeyBytes]byte
}

const redactedKey = "storage.Key([REDACTED])"

// NewKey returns a key holding a copy of b.
func NewKey(b [KeyBytes]byte) Key { return Key{bytes: b} }

// GenerateKey returns a fresh key read from crypto/rand.
func GenerateKey() (Key, error) {
	var k Key
	if _, err := io.ReadFull(rand.Reader, k.bytes[:]); err != nil {
		return Key{}, fmt.Errorf("storage: generate key: %w", err)
	}
	return k, nil
}

// String returns a redacted placeholder.
func (Key) String() string { return redactedKey }

// GoString returns a redacted placeholder.
func (Key) GoString() string { return redactedKey }

// Format prints a redacted placeholder for every verb.
func (Key) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, redactedKey) }

// Wipe overwrites the key bytes with zeros.
func (k *Key) Wipe() { clear(k.bytes[:]) }

// Keyring holds the active signing key and any number of verification-only
// keys, each under a distinct KeyID. It is safe for concurrent use. Create
// one with NewKeyring: a zero or nil Keyring has no active key, verifies
// nothing, and makes every write fail with ErrKeyringUnknownKeyID.
type Keyring struct {
	mu     sync.RWMutex
	active KeyID
	keys   map[KeyID]Key
	// generation counts the changes of the set of keys, so that a verification remembered
	// under one generation is not trusted under another.
	generation uint64
}

// NewKeyring returns a keyring whose only key, id, is active. It fails with
// ErrInvalidStorageKeyID when id is not a valid key identifier.
func NewKeyring(id KeyID, key Key) (*Keyring, error) {
	if err := id.Validate(); err != nil {
		return nil, err
	}
	return &Keyring{active: id, keys: map[KeyID]Key{id: key}}, nil
}

// ActiveKeyID returns the identifier of the key used for new writes.
func (r *Keyring) ActiveKeyID() KeyID {
	if r == nil {
		return ""
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.active
}

// KeyIDs returns every identifier in the keyring, sorted.
func (r *Keyring) KeyIDs() []KeyID {
	if r == nil {
		return nil
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	ids := make([]KeyID, 0, len(r.keys))
	for id := range r.keys {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// AddReadKey adds a key that verifies records but does not sign new ones. It
// fails with ErrDuplicateKeyID when id is already present.
func (r *Keyring) AddReadKey(id KeyID, key Key) error {
	if err := id.Validate(); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.addLocked(id, key)
}

func (r *Keyring) addLocked(id KeyID, key Key) error {
	if r.keys == nil {
		r.keys = make(map[KeyID]Key)
	}
	if _, ok := r.keys[id]; ok {
		return &Error{Kind: ErrDuplicateKeyID, KeyID: id}
	}
	r.keys[id] = key
	r.generation++
	return nil
}

// RotateTo adds a new key and makes it active. The previous active key stays
// available for verification. It fails with ErrDuplicateKeyID when id is
// already present, leaving the keyring unchanged.
func (r *Keyring) RotateTo(id KeyID, key Key) error {
	if err := id.Validate(); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.addLocked(id, key); err != nil {
		return err
	}
	r.active = id
	return nil
}

// Retire removes a verification key and wipes its bytes. The active key
// cannot be retired (ErrActiveKeyCannotBeRetired); an absent id gives
// ErrKeyringUnknownKeyID.
func (r *Keyring) Retire(id KeyID) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if id == r.active {
		return &Error{Kind: ErrActiveKeyCannotBeRetired, KeyID: id}
	}
	key, ok := r.keys[id]
	if !ok {
		return &Error{Kind: ErrKeyringUnknownKeyID, KeyID: id}
	}
	key.Wipe()
	delete(r.keys, id)
	r.generation++
	return nil
}

// activeKey returns the active identifier and key as one consistent pair;
// ok is false when the keyring has no active key.
func (r *Keyring) activeKey() (id KeyID, key Key, ok bool) {
	if r == nil {
		return "", Key{}, false
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	key, ok = r.keys[r.active]
	return r.active, key, ok
}

// currentGeneration returns the generation of the set of keys.
func (r *Keyring) currentGeneration() uint64 {
	if r == nil {
		return 0
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.generation
}

// verificationKey returns the key stored under id.
func (r *Keyring) verificationKey(id KeyID) (Key, bool) {
	if r == nil {
		return Key{}, false
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	k, ok := r.keys[id]
	return k, ok
}

// String describes the keyring without key material.
func (r *Keyring) String() string {
	if r == nil {
		return "storage.Keyring(nil)"
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return fmt.Sprintf("storage.Keyring{active: %q, keys: %d}", string(r.active), len(r.keys))
}

// GoString describes the keyring without key material.
func (r *Keyring) GoString() string { return r.String() }

// Format describes the keyring without key material for every verb.
func (r *Keyring) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, r.String()) }
