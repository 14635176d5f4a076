// Package storagetest is the contract every storage.Backend must meet, written once and run
// by the tests of each backend package: the backend rules (compare-and-swap, floors, fences),
// the authenticated store's writes and its fourteen load checks over the backend, a porcupine
// linearizability check of concurrent histories and, for durable backends, a writer killed
// with SIGKILL. It is imported only by tests.
package storagetest

import (
	"context"
	"strconv"
	"testing"

	"github.com/splashv5/conform/impl/storage"
)

// Harness opens a fresh backend and lets the suite tamper with its raw state, the way an
// attacker or a faulty disk could, bypassing the Backend API.
type Harness struct {
	// Name names the backend in subtest names.
	Name string
	// Open returns a new, empty backend that is closed when t ends.
	Open func(t testing.TB) storage.Backend
	// SetRecord replaces the raw record (nil deletes it) without touching the anchor state.
	SetRecord func(t testing.TB, b storage.Backend, key storage.RecordKey, rec *storage.StoredRecord)
	// SetFloor sets the revision floor; a durable backend's commitment is set to match the
	// record at that revision when there is one.
	SetFloor func(t testing.TB, b storage.Backend, key storage.RecordKey, floor uint64)
	// SetFence sets the raw fencing token.
	SetFence func(t testing.TB, b storage.Backend, key storage.RecordKey, fence uint64)
	// OversizeIsBackendError says the backend itself refuses to hand back an oversized record
	// (ErrStoredRecordTooLarge) instead of returning it.
	OversizeIsBackendError bool
}

// Plant stores rec as the record of key with a consistent floor, as if it had been written
// through the backend.
func (h Harness) Plant(t testing.TB, b storage.Backend, key storage.RecordKey, rec storage.StoredRecord) {
	t.Helper()
	h.SetRecord(t, b, key, &rec)
	h.SetFloor(t, b, key, rec.Revision)
}

// contractTest is one rule of the contract.
type contractTest struct {
	name string
	fn   func(*testing.T, Harness)
}

// Run runs the whole contract against h, one subtest per rule.
func Run(t *testing.T, h Harness) {
	for _, group := range [][]contractTest{backendTests, storeTests, loadTests} {
		for _, c := range group {
			t.Run(c.name, func(t *testing.T) { c.fn(t, h) })
		}
	}
}

// backendTests check the Backend methods directly.
var backendTests = []contractTest{
	{"BackendCompareAndSwap", testBackendCompareAndSwap},
	{"BackendConflictWhenRevisionDiffersFromFloor", testBackendConflictWhenRevisionDiffersFromFloor},
	{"BackendReplacementRevision", testBackendReplacementRevision},
	{"BackendFenceLifecycle", testBackendFenceLifecycle},
	{"BackendFenceExhaustion", testBackendFenceExhaustion},
	{"BackendFencedSwap", testBackendFencedSwap},
	{"BackendKeysAreIndependent", testBackendKeysAreIndependent},
	{"BackendRejectsInvalidRecordKeys", testBackendRejectsInvalidRecordKeys},
	{"BackendConcurrentReservationsAreDistinct", testBackendConcurrentReservationsAreDistinct},
	{"BackendHonoursCancelledContext", testBackendHonoursCancelledContext},
	{"BackendLoadReturnsACopy", testBackendLoadReturnsACopy},
	{"BackendRejectsOversizedReplacement", testBackendRejectsOversizedReplacement},
}

// storeTests check AuthenticatedStore's writes over the backend.
var storeTests = []contractTest{
	{"StoreCreateReplaceLoad", testStoreCreateReplaceLoad},
	{"StoreWriteConflicts", testStoreWriteConflicts},
	{"StoreWriteCheckOrder", testStoreWriteCheckOrder},
	{"StoreRevisionExhausted", testStoreRevisionExhausted},
	{"StoreFencedSupersededWriter", testStoreFencedSupersededWriter},
	{"StoreFencedWriteEstablishesBeforeAnyOtherCheck", testStoreFencedWriteEstablishesBeforeAnyOtherCheck},
	{"StoreFencePassThrough", testStoreFencePassThrough},
	{"StoreKeyRotation", testStoreKeyRotation},
}

// loadTests check AuthenticatedStore's load checks over records planted in the backend.
var loadTests = []contractTest{
	{"LoadCheck1RevisionPair", testLoadCheck1RevisionPair},
	{"LoadCheck3RecordTooLarge", testLoadCheck3RecordTooLarge},
	{"LoadCheck4InvalidEnvelope", testLoadCheck4InvalidEnvelope},
	{"LoadAcceptsEveryReferenceSpellingOfTheVector", testLoadAcceptsEveryReferenceSpellingOfTheVector},
	{"LoadCheck5FormatVersion", testLoadCheck5FormatVersion},
	{"LoadCheck6And7EnvelopeRevision", testLoadCheck6And7EnvelopeRevision},
	{"LoadCheck8KeyID", testLoadCheck8KeyID},
	{"LoadCheck9Base64", testLoadCheck9Base64},
	{"LoadCheck10PayloadTooLarge", testLoadCheck10PayloadTooLarge},
	{"LoadCheck12To14Tag", testLoadCheck12To14Tag},
	{"LoadRejectsATransplantedRecord", testLoadRejectsATransplantedRecord},
}

// Record keys the suite writes: TestKey and OtherKey are independent records; VectorKey is
// the key of reference anchor A10.
var (
	TestKey   = storage.RecordKey{Namespace: "workflow-ledger", Name: "release-42"}
	OtherKey  = storage.RecordKey{Namespace: "workflow-ledger", Name: "release-43"}
	VectorKey = storage.RecordKey{Namespace: "worker-journal", Name: "tenant-release"}
)

func rev(r uint64) *uint64 { return &r }

// kindOf returns the innermost storage error kind of err (the backend's own kind for a
// wrapped backend error).
func kindOf(err error) storage.ErrorKind {
	var last storage.ErrorKind
	for err != nil {
		if se, ok := err.(*storage.Error); ok {
			last = se.Kind
			err = se.Err
			continue
		}
		break
	}
	return last
}

// WantKind fails unless err is a chain of storage errors whose kinds are exactly kinds
// (outermost first), and returns the innermost one.
func WantKind(t testing.TB, err error, kinds ...storage.ErrorKind) *storage.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %v", kinds)
	}
	cur := err
	var se *storage.Error
	for i, k := range kinds {
		var ok bool
		se, ok = cur.(*storage.Error)
		if !ok || se.Kind != k {
			t.Fatalf("error %q: level %d is not %v", err, i, k)
		}
		cur = se.Err
	}
	if _, nested := cur.(*storage.Error); nested {
		t.Fatalf("error %q: unexpected nested storage error below %v", err, kinds)
	}
	return se
}

// vector10Key is the key of reference anchor A10 (docs/reference-anchors.md): 32 bytes 0x07.
func vector10Key() storage.Key {
	var b [storage.KeyBytes]byte
	for i := range b {
		b[i] = 0x07
	}
	return storage.NewKey(b)
}

// Keyring returns the suite's keyring: the key of reference anchor A10 under "storage-v1".
func Keyring(t testing.TB) *storage.Keyring {
	t.Helper()
	ring, err := storage.NewKeyring("storage-v1", vector10Key())
	if err != nil {
		t.Fatal(err)
	}
	return ring
}

func ctxb() context.Context { return context.Background() }

// Vector10Envelope is the storage record of reference anchor A10 (docs/reference-anchors.md):
// produced by the Rust reference implementation, never by this package.
const Vector10Envelope = `{"format_version":1,"key_id":"storage-v1","revision":1,"payload":"aGVsbG8","auth_tag":"364a8f1bc9e6cdeca3b4612a14dc81029d96c050c62886c46140a43b7776eecd"}`

func sameRevision(a, b *uint64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

func revisionOrZero(r *uint64) uint64 {
	if r == nil {
		return 0
	}
	return *r
}

func optRevision(r *uint64) string {
	if r == nil {
		return "none"
	}
	return strconv.FormatUint(*r, 10)
}
