package replay

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/splashv5/conform/impl/storage"
	"github.com/splashv5/conform/vectors/vectorfmt"
)

// checkStoreSequence applies a sequence test's steps to one authenticated store over a fresh
// memory backend and compares each outcome.
func checkStoreSequence(t *vectorfmt.StorageTest) []string {
	key, err := storageKey(t.KeyHex)
	if err != nil {
		return []string{err.Error()}
	}
	ring, err := storage.NewKeyring(storage.KeyID(t.KeyID), key)
	if err != nil {
		return []string{"keyring: " + err.Error()}
	}
	backend := &scriptedBackend{Backend: storage.NewMemoryBackend()}
	store := storage.NewAuthenticatedStore(backend, ring)
	ctx := context.Background()
	var problems []string
	for i, step := range t.Steps {
		where := fmt.Sprintf("step %d (%s)", i+1, step.Op)
		if step.Namespace == "" && step.Name == "" {
			step.Namespace, step.Name = t.Namespace, t.Name
		}
		backend.next = nil
		if a := step.BackendAnswers; a != nil {
			backend.next = &storage.CASOutcome{Stored: a.Stored, RevisionFloor: a.Floor}
			if a.Actual != nil {
				actual := *a.Actual
				backend.next.ActualRevision = &actual
			}
		}
		got, err := applyStoreStep(ctx, store, ring, step)
		problems = append(problems, compareStoreOutcome(where, step.Expect, got, err)...)
	}
	return problems
}

// storeOutcome is what a step returned.
type storeOutcome struct {
	record *storage.Record
	absent bool
	fence  *uint64
}

func applyStoreStep(ctx context.Context, store *storage.AuthenticatedStore, ring *storage.Keyring, step vectorfmt.StoreStep) (storeOutcome, error) {
	rk := storage.RecordKey{Namespace: step.Namespace, Name: step.Name}
	payload := []byte{}
	switch {
	case step.Payload != nil:
		payload = []byte(string(*step.Payload))
	case step.PayloadBytes != nil:
		payload = []byte(strings.Repeat("a", *step.PayloadBytes))
	}
	token := uint64(0)
	if step.Token != nil {
		token = *step.Token
	}
	var expected *uint64
	if step.Expected != nil {
		e := *step.Expected
		expected = &e
	}
	write := func(r storage.Record, err error) (storeOutcome, error) {
		if err != nil {
			return storeOutcome{}, err
		}
		return storeOutcome{record: &r}, nil
	}
	fence := func(f uint64, err error) (storeOutcome, error) { return storeOutcome{fence: &f}, err }
	switch step.Op {
	case vectorfmt.StoreOpLoad:
		r, err := store.Load(ctx, rk)
		return storeOutcome{record: r, absent: r == nil && err == nil}, err
	case vectorfmt.StoreOpCreate:
		return write(store.CompareAndSwap(ctx, rk, nil, payload))
	case vectorfmt.StoreOpReplace:
		if expected == nil {
			return storeOutcome{}, errors.New("the test's replace names no expected revision")
		}
		return write(store.CompareAndSwap(ctx, rk, expected, payload))
	case vectorfmt.StoreOpCreateFenced:
		return write(store.CompareAndSwapFenced(ctx, rk, nil, payload, token))
	case vectorfmt.StoreOpReplaceFenced:
		if expected == nil {
			return storeOutcome{}, errors.New("the test's replace names no expected revision")
		}
		return write(store.CompareAndSwapFenced(ctx, rk, expected, payload, token))
	case vectorfmt.StoreOpReserveFence:
		return fence(store.ReserveFence(ctx, rk))
	case vectorfmt.StoreOpCurrentFence:
		return fence(store.CurrentFence(ctx, rk))
	case vectorfmt.StoreOpRotateKey, vectorfmt.StoreOpAddReadKey:
		k, err := storageKey(step.KeyHex)
		if err != nil {
			return storeOutcome{}, err
		}
		if step.Op == vectorfmt.StoreOpRotateKey {
			return storeOutcome{}, ring.RotateTo(storage.KeyID(step.KeyID), k)
		}
		return storeOutcome{}, ring.AddReadKey(storage.KeyID(step.KeyID), k)
	case vectorfmt.StoreOpRetireKey:
		return storeOutcome{}, ring.Retire(storage.KeyID(step.KeyID))
	}
	return storeOutcome{}, fmt.Errorf("unknown store operation %q", step.Op)
}

func compareStoreOutcome(where string, want vectorfmt.StoreExpect, got storeOutcome, err error) []string {
	rev := func(p *uint64) string {
		if p == nil {
			return "absent"
		}
		return strconv.FormatUint(*p, 10)
	}
	var problems []string
	add := func(what, w, g string) {
		if w != g {
			problems = append(problems, fmt.Sprintf("%s: %s: want %s, got %s", where, what, w, g))
		}
	}
	if want.Error != "" {
		if err == nil {
			return []string{fmt.Sprintf("%s: expected error %s, got success", where, want.Error)}
		}
		add("error", want.Error, ErrorKindName(err))
		var se *storage.Error
		if !errors.As(err, &se) {
			return problems
		}
		if want.Cause != "" {
			var inner *storage.Error
			if se.Kind != storage.ErrBackend || !errors.As(se.Err, &inner) {
				return append(problems, fmt.Sprintf("%s: want a Backend error carrying %s, got %v", where, want.Cause, err))
			}
			add("backend kind", want.Cause, inner.Kind.String())
			se = inner
		}
		if want.CurrentFence != nil {
			add("current fence", rev(want.CurrentFence), strconv.FormatUint(se.CurrentFence, 10))
		}
		if want.SuppliedFence != nil {
			add("supplied fence", rev(want.SuppliedFence), strconv.FormatUint(se.SuppliedFence, 10))
		}
		if want.Actual != nil || want.ActualAbsent {
			add("actual revision", rev(want.Actual), rev(se.Actual))
		}
		if want.Floor != nil {
			add("floor", rev(want.Floor), strconv.FormatUint(se.Floor, 10))
		}
		return problems
	}
	if err != nil {
		return []string{fmt.Sprintf("%s: expected success, got %s (%v)", where, ErrorKindName(err), err)}
	}
	if want.Absent != got.absent {
		add("absent", strconv.FormatBool(want.Absent), strconv.FormatBool(got.absent))
	}
	if want.Fence != nil {
		add("fence", rev(want.Fence), rev(got.fence))
	}
	if want.Revision != nil || want.Payload != nil || want.KeyID != "" {
		if got.record == nil {
			return append(problems, where+": want a record, got none")
		}
		if want.Revision != nil {
			add("revision", rev(want.Revision), strconv.FormatUint(got.record.Revision, 10))
		}
		if want.Payload != nil {
			add("payload", strconv.Quote(string(*want.Payload)), strconv.Quote(string(got.record.Payload)))
		}
		if want.KeyID != "" {
			add("key id", want.KeyID, string(got.record.KeyID))
		}
	}
	return problems
}

// checkStorageCommitment recomputes a record commitment.
func checkStorageCommitment(t *vectorfmt.StorageTest) []string {
	if t.Envelope == nil || t.Revision == nil {
		return []string{"the test has no envelope or revision"}
	}
	sum := storage.RecordCommitment(storage.RecordKey{Namespace: t.Namespace, Name: t.Name}, *t.Revision, []byte(string(*t.Envelope)))
	return compare("commitment", t.Commitment, hex.EncodeToString(sum[:]))
}

// scriptedBackend is a memory backend whose next compare-and-swap, when next is set, writes
// nothing and answers next instead.
type scriptedBackend struct {
	storage.Backend
	next *storage.CASOutcome
}

func (b *scriptedBackend) answer() (storage.CASOutcome, bool) {
	if b.next == nil {
		return storage.CASOutcome{}, false
	}
	out := *b.next
	b.next = nil
	return out, true
}

func (b *scriptedBackend) CompareAndSwap(ctx context.Context, key storage.RecordKey, expected *uint64, replacement storage.StoredRecord) (storage.CASOutcome, error) {
	if out, ok := b.answer(); ok {
		return out, nil
	}
	return b.Backend.CompareAndSwap(ctx, key, expected, replacement)
}

func (b *scriptedBackend) CompareAndSwapFenced(ctx context.Context, key storage.RecordKey, expected *uint64, replacement storage.StoredRecord, token uint64) (storage.CASOutcome, error) {
	if out, ok := b.answer(); ok {
		return out, nil
	}
	return b.Backend.CompareAndSwapFenced(ctx, key, expected, replacement, token)
}
