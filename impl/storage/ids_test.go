package storage

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Spec: STO-001
func TestRecordKeyValidation(t *testing.T) {
	ok := []RecordKey{
		{"a", "b"},
		{"workflow-ledger", "release-42"},
		{"._-0123456789", "abcdefghijklmnopqrstuvwxyz"},
		{strings.Repeat("n", 64), strings.Repeat("m", 128)},
	}
	for _, k := range ok {
		if _, err := NewRecordKey(k.Namespace, k.Name); err != nil {
			t.Errorf("%v rejected: %v", k, err)
		}
	}
	bad := []struct {
		key  RecordKey
		kind ErrorKind
	}{
		{RecordKey{"", "b"}, ErrInvalidNamespace},
		{RecordKey{strings.Repeat("n", 65), "b"}, ErrInvalidNamespace},
		{RecordKey{"Ns", "b"}, ErrInvalidNamespace},
		{RecordKey{"n s", "b"}, ErrInvalidNamespace},
		{RecordKey{"n/s", "b"}, ErrInvalidNamespace},
		{RecordKey{"né", "b"}, ErrInvalidNamespace},
		{RecordKey{"ns\x00", "b"}, ErrInvalidNamespace},
		// Both invalid: the namespace is reported.
		{RecordKey{"", ""}, ErrInvalidNamespace},
		{RecordKey{"a", ""}, ErrInvalidName},
		{RecordKey{"a", strings.Repeat("m", 129)}, ErrInvalidName},
		{RecordKey{"a", "release 42"}, ErrInvalidName},
		{RecordKey{"a", "Release"}, ErrInvalidName},
		{RecordKey{"a", "a+b"}, ErrInvalidName},
	}
	for _, c := range bad {
		_, err := NewRecordKey(c.key.Namespace, c.key.Name)
		wantKind(t, err, c.kind)
		if !errors.Is(err, c.kind) {
			t.Errorf("errors.Is(%v, %v) is false", err, c.kind)
		}
	}
}

// Spec: STO-002
func TestKeyIDValidation(t *testing.T) {
	for _, s := range []string{"storage-v1", "k", strings.Repeat("k", 64), "a.b_c-d"} {
		if id, err := ParseKeyID(s); err != nil || string(id) != s {
			t.Errorf("%q: %v", s, err)
		}
	}
	for _, s := range []string{"", "Storage v1", "storage v1", strings.Repeat("k", 65), "ключ"} {
		_, err := ParseKeyID(s)
		wantKind(t, err, ErrInvalidStorageKeyID)
		if _, err := NewKeyring(KeyID(s), vector10Key()); !errors.Is(err, ErrInvalidStorageKeyID) {
			t.Errorf("keyring accepted key id %q: %v", s, err)
		}
	}
}

// Spec: STO-004
func TestKeyMaterialNeverFormatted(t *testing.T) {
	var raw [KeyBytes]byte
	for i := range raw {
		raw[i] = byte(0xa0 + i%16)
	}
	key := NewKey(raw)
	ring := mustKeyring(t, "storage-v1", key)
	if err := ring.AddReadKey("storage-v0", key); err != nil {
		t.Fatal(err)
	}
	holder := struct {
		K Key
		P *Key
		R *Keyring
	}{key, &key, ring}
	forbidden := []string{
		hex.EncodeToString(raw[:]), strings.ToUpper(hex.EncodeToString(raw[:4])), hex.EncodeToString(raw[:4]),
		string(raw[:4]), fmt.Sprint(raw[:4]), fmt.Sprintf("%d", raw[0]),
	}
	var outputs []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%T %v"} {
		outputs = append(outputs, fmt.Sprintf(verb, key), fmt.Sprintf(verb, &key), fmt.Sprintf(verb, holder), fmt.Sprintf(verb, ring))
	}
	js, err := json.Marshal(holder)
	if err != nil {
		t.Fatal(err)
	}
	outputs = append(outputs, string(js), key.String(), key.GoString(), ring.String())
	// Errors raised while the key is in use.
	s := NewAuthenticatedStore(NewMemoryBackend(), ring)
	if _, err := s.Create(ctxb(), testKey, []byte("p")); err != nil {
		t.Fatal(err)
	}
	_, err = NewAuthenticatedStore(s.Backend(), mustKeyring(t, "storage-v1", vector10Key())).Load(ctxb(), testKey)
	outputs = append(outputs, err.Error(), fmt.Sprintf("%#v", err))
	for _, out := range outputs {
		for _, f := range forbidden {
			if strings.Contains(out, f) {
				t.Fatalf("output %q contains key material %q", out, f)
			}
		}
	}
	if got := fmt.Sprintf("%v", key); !strings.Contains(got, "REDACTED") {
		t.Fatalf("key formats as %q", got)
	}
}

// Spec: STO-003
func TestGenerateKeyIsRandom(t *testing.T) {
	a, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	b, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	if a.bytes == b.bytes || a.bytes == ([KeyBytes]byte{}) {
		t.Fatal("two generated keys are equal or zero")
	}
	a.Wipe()
	if a.bytes != ([KeyBytes]byte{}) {
		t.Fatal("wipe left key bytes behind")
	}
}

// Spec: STO-005, STO-006
func TestKeyring(t *testing.T) {
	one, two := vector10Key(), NewKey([KeyBytes]byte{1})
	ring := mustKeyring(t, "k1", one)
	if ring.ActiveKeyID() != "k1" {
		t.Fatal(ring.ActiveKeyID())
	}
	err := ring.AddReadKey("k1", two)
	if e := wantKind(t, err, ErrDuplicateKeyID); e.KeyID != "k1" {
		t.Fatalf("%v", e)
	}
	if k, _ := ring.verificationKey("k1"); k != one {
		t.Fatal("a rejected duplicate replaced the key")
	}
	if err := ring.AddReadKey("k0", two); err != nil {
		t.Fatal(err)
	}
	if ring.ActiveKeyID() != "k1" {
		t.Fatal("adding a read key changed the active key")
	}
	// A rejected rotation leaves the active key alone.
	wantKind(t, ring.RotateTo("k0", one), ErrDuplicateKeyID)
	if ring.ActiveKeyID() != "k1" {
		t.Fatal("a failed rotation changed the active key")
	}
	wantKind(t, ring.RotateTo("K2", one), ErrInvalidStorageKeyID)
	if err := ring.RotateTo("k2", two); err != nil {
		t.Fatal(err)
	}
	if id, k, ok := ring.activeKey(); !ok || id != "k2" || k != two {
		t.Fatal("rotation did not activate the new key")
	}
	if got := ring.KeyIDs(); !slices.Equal(got, []KeyID{"k0", "k1", "k2"}) {
		t.Fatalf("ids %v", got)
	}

	wantKind(t, ring.Retire("k2"), ErrActiveKeyCannotBeRetired)
	e := wantKind(t, ring.Retire("k9"), ErrKeyringUnknownKeyID)
	if e.KeyID != "k9" {
		t.Fatalf("%v", e)
	}
	if err := ring.Retire("k1"); err != nil {
		t.Fatal(err)
	}
	if _, ok := ring.verificationKey("k1"); ok {
		t.Fatal("retired key still verifies")
	}
	wantKind(t, ring.Retire("k1"), ErrKeyringUnknownKeyID)
	// The retired id may be reused.
	if err := ring.AddReadKey("k1", one); err != nil {
		t.Fatal(err)
	}
}

// Spec: STO-070
func TestErrorKindsAreDistinctAndNamed(t *testing.T) {
	seen := map[ErrorKind]bool{}
	for i, entry := range kindTable.Kinds {
		k := ErrorKind(i)
		if entry.Name == "" {
			continue
		}
		if seen[k] {
			t.Fatalf("duplicate kind %d", k)
		}
		seen[k] = true
		if k.String() != entry.Name {
			t.Fatalf("kind %d names itself %q", k, k.String())
		}
		if entry.Message == "" || k.Error() != "storage: "+entry.Message {
			t.Fatalf("kind %v has no message", k)
		}
		err := &Error{Kind: k}
		if !errors.Is(err, k) {
			t.Fatalf("errors.Is(%v, %v) is false", err, k)
		}
		var target *Error
		if !errors.As(fmt.Errorf("wrapped: %w", err), &target) || target.Kind != k {
			t.Fatalf("errors.As lost kind %v", k)
		}
	}
	if len(seen) != 40 {
		t.Fatalf("%d kinds; want the 27 variants of the reference storage enumerations plus 13 of the durable backends", len(seen))
	}
	if ErrorKind(200).String() != "ErrorKind(200)" {
		t.Fatal(ErrorKind(200).String())
	}
	// Kinds of different enumerations sharing a reference name stay distinct.
	if errors.Is(&Error{Kind: ErrRevisionExhausted}, ErrBackendRevisionExhausted) ||
		errors.Is(&Error{Kind: ErrUnknownKeyID}, ErrKeyringUnknownKeyID) {
		t.Fatal("kinds of different enumerations compare equal")
	}
	msg := (&Error{Kind: ErrWriteConflict, Expected: rev(0), Actual: rev(1), Floor: 1}).Error()
	if msg != "storage: compare-and-swap conflict: expected 0, actual 1, floor 1" {
		t.Fatalf("message %q", msg)
	}
}

// Spec: STO-005
func TestZeroKeyringIsSafe(t *testing.T) {
	for _, ring := range []*Keyring{nil, {}} {
		s := NewAuthenticatedStore(NewMemoryBackend(), ring)
		_, err := s.Create(ctxb(), testKey, []byte("x"))
		wantKind(t, err, ErrKeyringUnknownKeyID)
		if _, err := s.Backend().CompareAndSwap(ctxb(), vectorKey, nil, StoredRecord{Revision: 1, Bytes: []byte(vector10Envelope)}); err != nil {
			t.Fatal(err)
		}
		_, err = s.Load(ctxb(), vectorKey)
		wantKind(t, err, ErrUnknownKeyID)
		if ring.ActiveKeyID() != "" || len(ring.KeyIDs()) != 0 || ring.String() == "" {
			t.Fatal("zero keyring reports keys")
		}
	}
	var ring Keyring
	if err := ring.AddReadKey("k1", vector10Key()); err != nil {
		t.Fatal(err)
	}
	if err := ring.RotateTo("k2", vector10Key()); err != nil || ring.ActiveKeyID() != "k2" {
		t.Fatalf("rotation on a zero keyring: %v", err)
	}
}
