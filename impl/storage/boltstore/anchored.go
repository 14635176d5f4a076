package boltstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/splashv5/conform/impl/storage"
)

// MaxCandidates is the most candidates an Anchored store keeps per record: the committed one
// and those a failed or lost anchor swap left behind.
const MaxCandidates = 8

// candidatesBucket holds an Anchored store's records: key dbKey || u64be(revision) ||
// commitment, value the envelope bytes.
var candidatesBucket = []byte("splash_storage_candidates")

// Anchored is a storage.Backend whose records live in a bbolt file and whose anchor state
// (floor, commitment, fence) lives in a storage.RollbackAnchor outside the file, such as an
// etcd cluster. A write first commits an immutable candidate (revision and commitment) to the
// file, fsynced, then swaps the anchor to it; a candidate the anchor never reached is ignored.
// Load returns the candidate the anchor names, so that restoring an older copy of the whole
// file is detected: the anchored revision is missing and the store reports
// storage.ErrRollbackDetected (fail closed). The file must not be shared between machines.
type Anchored struct {
	local  *Backend
	anchor storage.RollbackAnchor
}

// OpenAnchored opens (creating if needed) the bbolt file at path, anchored on anchor.
func OpenAnchored(path string, opts *Options, anchor storage.RollbackAnchor) (*Anchored, error) {
	local, err := Open(path, opts)
	if err != nil {
		return nil, err
	}
	err = local.withDB(func(db *bolt.DB) error {
		return db.Update(func(tx *bolt.Tx) error {
			_, err := tx.CreateBucketIfNotExists(candidatesBucket)
			return err
		})
	})
	if err != nil {
		return nil, err
	}
	return &Anchored{local: local, anchor: anchor}, nil
}

// Close ends the use of the file; the anchor is the caller's to close.
func (a *Anchored) Close() error { return a.local.Close() }

// candidateKey is the bucket key of key's candidate at revision with commitment.
func candidateKey(key storage.RecordKey, revision uint64, commitment [32]byte) []byte {
	k := binary.BigEndian.AppendUint64(dbKey(key), revision)
	return append(k, commitment[:]...)
}

// found is what the file holds for an anchor state: the anchored candidate when present, else
// the newest candidate below the floor (a rolled-back file), else nothing; and the number of
// candidates of the key.
type found struct {
	record *storage.StoredRecord
	count  int
}

// find reads key's candidates against st in one read transaction.
func (a *Anchored) find(key storage.RecordKey, st storage.AnchorState) (found, error) {
	var f found
	prefix := dbKey(key)
	err := a.local.withDB(func(db *bolt.DB) error {
		return db.View(func(tx *bolt.Tx) error {
			bucket := tx.Bucket(candidatesBucket)
			if bucket == nil {
				return fmt.Errorf("the file lacks the candidates bucket")
			}
			var best []byte
			var bestRev uint64
			c := bucket.Cursor()
			for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && len(k) == len(prefix)+8+32; k, v = c.Next() {
				f.count++
				rev := binary.BigEndian.Uint64(k[len(prefix):])
				anchored := st.Commitment != nil && rev == st.Floor && bytes.Equal(k[len(prefix)+8:], st.Commitment[:])
				if anchored || (rev < st.Floor && rev > bestRev && f.record == nil) {
					if len(v) > storage.MaxRecordBytes {
						return &storage.Error{Kind: storage.ErrStoredRecordTooLarge, Size: len(v), Limit: storage.MaxRecordBytes}
					}
					best, bestRev = v, rev
				}
				if anchored {
					data := bytes.Clone(v)
					if data == nil {
						data = []byte{}
					}
					if storage.RecordCommitment(key, rev, data) != *st.Commitment {
						return &storage.Error{Kind: storage.ErrRecordCommitmentMismatch}
					}
					f.record = &storage.StoredRecord{Revision: rev, Bytes: data}
				}
			}
			if f.record == nil && best != nil {
				data := bytes.Clone(best)
				if data == nil {
					data = []byte{}
				}
				f.record = &storage.StoredRecord{Revision: bestRev, Bytes: data}
			}
			return nil
		})
	})
	return f, err
}

// consistent reads the anchor state and the file's candidates for it. The two reads are not
// one transaction: when the anchored candidate is missing, the anchor is read again, and a
// changed anchor (another writer anchored a newer candidate and pruned this one) means reading
// again; an unchanged one means the file really lacks it.
func (a *Anchored) consistent(ctx context.Context, key storage.RecordKey) (storage.AnchorState, found, error) {
	st, err := a.anchor.LoadAnchor(ctx, key)
	for {
		if err != nil {
			return storage.AnchorState{}, found{}, err
		}
		f, err := a.find(key, st)
		if err != nil {
			return storage.AnchorState{}, found{}, err
		}
		if st.Floor == 0 || (f.record != nil && f.record.Revision == st.Floor) {
			return st, f, nil
		}
		again, err := a.anchor.LoadAnchor(ctx, key)
		if err == nil && again.Floor == st.Floor && again.Fence == st.Fence {
			return st, f, nil
		}
		st = again
	}
}

// Load returns the candidate the anchor names. When the file lacks it (an older copy was
// restored, or the file was lost), it returns the newest older candidate or none under the
// anchor's floor, which storage.AuthenticatedStore reports as storage.ErrRollbackDetected.
func (a *Anchored) Load(ctx context.Context, key storage.RecordKey) (storage.Snapshot, error) {
	if err := a.local.begin(ctx, key); err != nil {
		return storage.Snapshot{}, err
	}
	st, f, err := a.consistent(ctx, key)
	if err != nil {
		return storage.Snapshot{}, err
	}
	if st.Floor == 0 {
		return storage.Snapshot{}, nil
	}
	return storage.Snapshot{Record: f.record, RevisionFloor: st.Floor}, nil
}

// CompareAndSwap implements storage.Backend.CompareAndSwap.
func (a *Anchored) CompareAndSwap(ctx context.Context, key storage.RecordKey, expected *uint64, replacement storage.StoredRecord) (storage.CASOutcome, error) {
	return a.swap(ctx, key, expected, replacement, false, 0)
}

// CompareAndSwapFenced implements storage.Backend.CompareAndSwapFenced: the fence is checked
// against the anchor state the anchor swap compares.
func (a *Anchored) CompareAndSwapFenced(ctx context.Context, key storage.RecordKey, expected *uint64, replacement storage.StoredRecord, token uint64) (storage.CASOutcome, error) {
	return a.swap(ctx, key, expected, replacement, true, token)
}

func (a *Anchored) swap(ctx context.Context, key storage.RecordKey, expected *uint64, replacement storage.StoredRecord, fenced bool, token uint64) (storage.CASOutcome, error) {
	if err := a.local.begin(ctx, key); err != nil {
		return storage.CASOutcome{}, err
	}
	if fenced && token == 0 {
		return storage.CASOutcome{}, &storage.Error{Kind: storage.ErrInvalidFencingToken}
	}
	for {
		st, f, err := a.consistent(ctx, key)
		if err != nil {
			return storage.CASOutcome{}, err
		}
		var actual *uint64
		if st.Floor != 0 && f.record != nil {
			actual = storage.ExpectRevision(f.record.Revision)
		}
		conflict, revision, err := storage.PlanSwap(st.Fence, fenced, token, actual, st.Floor, expected, replacement)
		if err != nil || revision == 0 {
			return conflict, err
		}
		if f.count >= MaxCandidates {
			return storage.CASOutcome{}, &storage.Error{Kind: storage.ErrTooManyCandidates}
		}
		commitment := storage.RecordCommitment(key, revision, replacement.Bytes)
		ck := candidateKey(key, revision, commitment)
		err = a.local.withDB(func(db *bolt.DB) error {
			return db.Update(func(tx *bolt.Tx) error {
				return tx.Bucket(candidatesBucket).Put(ck, bytes.Clone(replacement.Bytes))
			})
		})
		if err != nil {
			return storage.CASOutcome{}, err
		}
		next := storage.AnchorState{Floor: revision, Fence: st.Fence, Commitment: &commitment}
		ok, err := a.anchor.SwapAnchor(ctx, key, st, next)
		if err != nil {
			return storage.CASOutcome{}, err
		}
		if ok {
			// Drop the candidates the new anchor state makes obsolete; failing here loses nothing.
			_ = a.prune(key, revision, ck)
			return storage.CASOutcome{Stored: true, RevisionFloor: revision}, nil
		}
		if err := a.local.begin(ctx, key); err != nil {
			return storage.CASOutcome{}, err
		}
	}
}

// prune deletes the candidates of key at or below revision upto, except keep.
// Candidates above upto stay: another writer may be about to anchor one.
func (a *Anchored) prune(key storage.RecordKey, upto uint64, keep []byte) error {
	prefix := dbKey(key)
	return a.local.withDB(func(db *bolt.DB) error {
		return db.Update(func(tx *bolt.Tx) error {
			bucket := tx.Bucket(candidatesBucket)
			var doomed [][]byte
			c := bucket.Cursor()
			for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && len(k) == len(prefix)+8+32; k, _ = c.Next() {
				rev := binary.BigEndian.Uint64(k[len(prefix):])
				if rev <= upto && !bytes.Equal(k, keep) {
					doomed = append(doomed, bytes.Clone(k))
				}
			}
			for _, k := range doomed {
				if err := bucket.Delete(k); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

// DiscardUnanchoredCandidates is the recovery step after an anchor outage left
// MaxCandidates candidates: stop admissions, reserve a recovery fence with ReserveFence (which
// also shuts out every older writer: their anchor swaps no longer match), then call this with
// it. It deletes every candidate except the one the anchor names, and fails with
// storage.ErrFencingTokenRejected unless recovery is the anchor's current fence.
func (a *Anchored) DiscardUnanchoredCandidates(ctx context.Context, key storage.RecordKey, recovery uint64) error {
	if err := a.local.begin(ctx, key); err != nil {
		return err
	}
	st, err := a.anchor.LoadAnchor(ctx, key)
	if err != nil {
		return err
	}
	if err := storage.CheckFence(st.Fence, true, recovery); err != nil {
		return err
	}
	var keep []byte
	if st.Commitment != nil {
		keep = candidateKey(key, st.Floor, *st.Commitment)
	}
	return a.prune(key, ^uint64(0), keep)
}

// CurrentFence implements storage.Backend.CurrentFence from the anchor.
func (a *Anchored) CurrentFence(ctx context.Context, key storage.RecordKey) (uint64, error) {
	if err := a.local.begin(ctx, key); err != nil {
		return 0, err
	}
	st, err := a.anchor.LoadAnchor(ctx, key)
	return st.Fence, err
}

// ReserveFence implements storage.Backend.ReserveFence through the anchor.
func (a *Anchored) ReserveFence(ctx context.Context, key storage.RecordKey) (uint64, error) {
	if err := a.local.begin(ctx, key); err != nil {
		return 0, err
	}
	return a.anchor.ReserveFence(ctx, key)
}

// EstablishFence implements storage.Backend.EstablishFence through the anchor.
func (a *Anchored) EstablishFence(ctx context.Context, key storage.RecordKey, token uint64) error {
	if err := a.local.begin(ctx, key); err != nil {
		return err
	}
	return a.anchor.EstablishFence(ctx, key, token)
}
