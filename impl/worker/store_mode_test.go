package worker_test

import (
	"context"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/storage"
	"github.com/splashv5/conform/impl/worker"
)

// TestStorageJournalStoreUsesItsConfiguredMode shows that the number mode is part of the
// store's configuration: the same stored journal loads with its payload numbers kept as
// written by a Preserve store and rewritten by a Lossy one. A worker must therefore keep one
// mode for the lifetime of a journal.
//
// Spec: FP-014
func TestStorageJournalStoreUsesItsConfiguredMode(t *testing.T) {
	ctx := context.Background()
	store := authStore(t, storage.NewMemoryBackend())
	fingerprint := strings.Repeat("ab", 32)
	stored := `{"format_version":2,"scope":"` + scope + `","records":[{"tool":"conf.durable.record",` +
		`"operation_key":"op-1","input_fingerprint":"` + fingerprint + `","state":{"state":"succeeded",` +
		`"payload":{"format":"json","value":{"n":1.50}}},"compensation":null}]}`
	if _, err := store.Create(ctx, storage.RecordKey{Namespace: "worker-journal", Name: scope}, []byte(stored)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		mode canonjson.Mode
		want string
	}{
		{canonjson.Preserve, "1.50"},
		{canonjson.Lossy, "1.5"},
	} {
		js, err := worker.NewStorageJournalStore(store, "worker-journal", scope, tc.mode)
		if err != nil {
			t.Fatal(err)
		}
		j, rev, err := js.Load(ctx)
		if err != nil || rev != 1 {
			t.Fatalf("%v: load: %v (revision %d)", tc.mode, err, rev)
		}
		rec, ok := j.Operation("op-1")
		if !ok {
			t.Fatalf("%v: op-1 missing", tc.mode)
		}
		n, ok := rec.State.Payload.JSON.Get("n")
		if !ok || n.NumberText() != tc.want {
			t.Errorf("%v: stored 1.50 loads as %q, want %q", tc.mode, n.NumberText(), tc.want)
		}
	}
}
