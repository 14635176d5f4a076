package storage_test

import (
	"errors"
	"testing"

	"github.com/splashv5/conform/impl/storage"
)

// A durable backend's loaded record is a private, never-nil copy, and a record at the floor
// must be the one the anchor's commitment names; above the floor, or without a commitment,
// nothing is compared.
//
// Spec: STO-062, STO-063
func TestLoadedRecord(t *testing.T) {
	key := storage.RecordKey{Namespace: "ns", Name: "rec"}
	data := []byte("envelope")
	good := storage.RecordCommitment(key, 3, data)
	rec, err := storage.LoadedRecord(key, 3, 3, &good, data)
	if err != nil || rec.Revision != 3 || string(rec.Bytes) != "envelope" {
		t.Fatalf("matching record: %+v, %v", rec, err)
	}
	data[0] = 'E'
	if string(rec.Bytes) != "envelope" {
		t.Fatal("the loaded record shares the backend's buffer")
	}
	if _, err := storage.LoadedRecord(key, 3, 3, &good, data); !errors.Is(err, storage.ErrRecordCommitmentMismatch) {
		t.Fatalf("a record at the floor that the commitment does not name: %v", err)
	}
	if _, err := storage.LoadedRecord(key, 4, 3, &good, data); err != nil {
		t.Fatalf("a record above the floor: %v", err)
	}
	if rec, err := storage.LoadedRecord(key, 1, 0, nil, nil); err != nil || rec.Bytes == nil {
		t.Fatalf("an empty record: %+v, %v", rec, err)
	}
}
