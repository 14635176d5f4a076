package etcdstore

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/splashv5/conform/impl/storage"
)

// ErrClusterMoved: the cluster changed between the comparison an operator approved and the
// acceptance of it.
var ErrClusterMoved = errors.New("etcdstore: the cluster changed since it was compared with the witness; compare again")

// Witness is a file on the worker's machine that outlives its processes: per key prefix, the
// cluster id, the highest etcd revision and, per record, the highest fence and floor the
// machine's backends saw. A backend opened with it refuses a cluster below it
// (storage.ErrBelowWitness): another cluster id, a lower revision at open, or a record whose
// fence or floor went back. That is what a cluster restored from an older snapshot looks like
// to a freshly started worker, even with its revision pushed past the old value.
//
// Every raise is written atomically (a fsynced temporary file renamed over the witness, then
// the directory fsynced) under an exclusive lock of PATH.lock, merging with what other
// processes on the machine wrote, so several workers may share one witness. A backend
// raises it after each read that saw more and before each write it committed reports
// success. A restore of both the witness and the cluster to matching older copies stays
// undetectable, as does a loss that no process of this machine ever read or wrote.
type Witness struct {
	path string

	mu   sync.Mutex
	seen witnessFile
}

// witnessFormat is the format version of the witness file.
const witnessFormat = 1

// maxWitnessBytes bounds the witness file.
const maxWitnessBytes = 16 << 20

// witnessFile is the JSON content of the witness.
type witnessFile struct {
	Format   int                       `json:"format"`
	Prefixes map[string]*witnessPrefix `json:"prefixes"`
}

// witnessPrefix is what the machine saw under one key prefix.
type witnessPrefix struct {
	// ClusterID is the cluster id in hexadecimal (a JSON number cannot hold every uint64).
	ClusterID string          `json:"cluster_id"`
	Revision  int64           `json:"revision"`
	Records   map[string]Mark `json:"records"`
}

// Mark is the fence and floor of one record's anchor.
type Mark struct {
	Fence uint64 `json:"fence"`
	Floor uint64 `json:"floor"`
}

// below reports whether m is below w in the fence or the floor.
func (m Mark) below(w Mark) bool { return m.Fence < w.Fence || m.Floor < w.Floor }

// OpenWitness reads the witness file at path; a missing file is an empty witness. A file
// that does not decode is storage.ErrCorrupt.
func OpenWitness(path string) (*Witness, error) {
	w := &Witness{path: path}
	f, err := w.load()
	if err != nil {
		return nil, err
	}
	w.seen = f
	return w, nil
}

// Path returns the witness file's path.
func (w *Witness) Path() string { return w.path }

// load reads and decodes the file.
func (w *Witness) load() (witnessFile, error) {
	empty := witnessFile{Format: witnessFormat, Prefixes: map[string]*witnessPrefix{}}
	f, err := os.Open(w.path)
	if errors.Is(err, fs.ErrNotExist) {
		return empty, nil
	}
	if err != nil {
		return witnessFile{}, w.fail(err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxWitnessBytes+1))
	if err != nil {
		return witnessFile{}, w.fail(err)
	}
	corrupt := func(why string) (witnessFile, error) {
		return witnessFile{}, &storage.Error{Kind: storage.ErrCorrupt, Err: fmt.Errorf("witness %s: %s", w.path, why)}
	}
	if len(data) > maxWitnessBytes {
		return corrupt(fmt.Sprintf("larger than %d bytes", maxWitnessBytes))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var wf witnessFile
	if err := dec.Decode(&wf); err != nil {
		return corrupt(err.Error())
	}
	if wf.Format != witnessFormat {
		return corrupt(fmt.Sprintf("format %d, want %d", wf.Format, witnessFormat))
	}
	for p, wp := range wf.Prefixes {
		if wp == nil || wp.Records == nil {
			return corrupt(fmt.Sprintf("prefix %q has no records", p))
		}
		if _, err := strconv.ParseUint(wp.ClusterID, 16, 64); err != nil {
			return corrupt(fmt.Sprintf("prefix %q: cluster id %q", p, wp.ClusterID))
		}
	}
	if wf.Prefixes == nil {
		wf.Prefixes = map[string]*witnessPrefix{}
	}
	return wf, nil
}

// fail wraps an I/O failure of the witness file. A backend cannot vouch for what it saw
// without it, so the operation fails (as an outage: the file system may come back).
func (w *Witness) fail(err error) error {
	return &storage.Error{Kind: storage.ErrBackend, Err: fmt.Errorf("witness %s: %w", w.path, err)}
}

// below is the refusal of a cluster below the witness.
func (w *Witness) below(format string, args ...any) error {
	return &storage.Error{Kind: storage.ErrBelowWitness, Err: fmt.Errorf("witness %s: "+format+"; after a deliberate restore, reconcile every open operation, then move the witness on (splash-worker etcd-witness accept)", append([]any{w.path}, args...)...)}
}

// check runs f on what the witness holds for prefix, if anything.
func (w *Witness) check(prefix string, f func(wp *witnessPrefix) error) error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if wp := w.seen.Prefixes[prefix]; wp != nil {
		return f(wp)
	}
	return nil
}

// checkCluster refuses a cluster id other than the witnessed one, and a revision below it.
func (w *Witness) checkCluster(prefix string, cluster uint64, revision int64) error {
	return w.check(prefix, func(wp *witnessPrefix) error {
		if id := strconv.FormatUint(cluster, 16); id != wp.ClusterID {
			return w.below("prefix %s was seen on cluster %s, this is cluster %s", prefix, wp.ClusterID, id)
		}
		if revision < wp.Revision {
			return w.below("prefix %s was seen at etcd revision %d, the cluster is at %d", prefix, wp.Revision, revision)
		}
		return nil
	})
}

// checkRecord refuses an anchor below the witnessed mark of its record.
func (w *Witness) checkRecord(prefix, part string, a storage.AnchorState) error {
	return w.check(prefix, func(wp *witnessPrefix) error {
		if m, ok := wp.Records[part]; ok && (Mark{a.Fence, a.Floor}).below(m) {
			return w.below("record %s under %s was seen at fence %d and floor %d, the cluster holds fence %d and floor %d", recordName(part), prefix, m.Fence, m.Floor, a.Fence, a.Floor)
		}
		return nil
	})
}

// raise records that the cluster answered a at revision for the record part: when that is
// more than the witness holds, the file is rewritten, merged with what it holds on disk.
func (w *Witness) raise(prefix string, cluster uint64, revision int64, part string, a storage.AnchorState) error {
	if w == nil {
		return nil
	}
	mark := Mark{a.Fence, a.Floor}
	if mark == (Mark{}) {
		return nil
	}
	id := strconv.FormatUint(cluster, 16)
	w.mu.Lock()
	defer w.mu.Unlock()
	if wp := w.seen.Prefixes[prefix]; wp != nil && wp.ClusterID == id {
		if m, ok := wp.Records[part]; ok && !m.below(mark) {
			return nil
		}
	}
	return w.update(func(wf *witnessFile) {
		wp := wf.Prefixes[prefix]
		if wp == nil || wp.ClusterID != id {
			wp = &witnessPrefix{ClusterID: id, Records: map[string]Mark{}}
			wf.Prefixes[prefix] = wp
		}
		wp.Revision = max(wp.Revision, revision)
		m := wp.Records[part]
		wp.Records[part] = Mark{max(m.Fence, mark.Fence), max(m.Floor, mark.Floor)}
	})
}

// update applies change to the file on disk under the lock and writes it atomically; w.mu
// is held.
func (w *Witness) update(change func(*witnessFile)) error {
	lock, err := os.OpenFile(w.path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return w.fail(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return w.fail(err)
	}
	wf, err := w.load()
	if err != nil {
		return err
	}
	change(&wf)
	data, err := json.MarshalIndent(wf, "", " ")
	if err != nil {
		return w.fail(err)
	}
	if err := writeAtomic(w.path, append(data, '\n')); err != nil {
		return w.fail(err)
	}
	w.seen = wf
	return nil
}

// writeAtomic replaces path with data: a temporary file in the same directory, fsynced,
// renamed over path, then the directory fsynced, so a crash leaves the old or the new file.
func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// recordName decodes a key part back to "namespace/name" for messages.
func recordName(part string) string {
	raw, err := hex.DecodeString(part)
	var parts []string
	for err == nil && len(raw) >= 2 {
		n := int(raw[0])<<8 | int(raw[1])
		if len(raw) < 2+n {
			break
		}
		parts = append(parts, string(raw[2:2+n]))
		raw = raw[2+n:]
	}
	if len(parts) != 2 || len(raw) != 0 {
		return part
	}
	return parts[0] + "/" + parts[1]
}

// WitnessRecord compares one witnessed record with the cluster.
type WitnessRecord struct {
	// Record is "namespace/name".
	Record             string
	Witnessed, Current Mark
}

// WitnessReport compares what a witness holds for a backend's prefix with the cluster now.
type WitnessReport struct {
	Prefix                             string
	WitnessedCluster, CurrentCluster   string
	WitnessedRevision, CurrentRevision int64
	Records                            []WitnessRecord
	currentMarks                       map[string]Mark
}

// Below reports whether the cluster is below the witness in any respect.
func (r WitnessReport) Below() bool {
	if r.WitnessedCluster != "" && (r.WitnessedCluster != r.CurrentCluster || r.CurrentRevision < r.WitnessedRevision) {
		return true
	}
	return slices.ContainsFunc(r.Records, func(x WitnessRecord) bool { return x.Current.below(x.Witnessed) })
}

// CompareWitness reads, for every record w holds under b's prefix, its anchor in the
// cluster now, without checking it against w (b should be opened without a witness).
func (b *Backend) CompareWitness(ctx context.Context, w *Witness) (WitnessReport, error) {
	fresh, err := w.load()
	if err != nil {
		return WitnessReport{}, err
	}
	w.mu.Lock()
	w.seen = fresh
	w.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, b.deadline)
	defer cancel()
	resp, err := b.cli.Get(ctx, b.prefix, clientv3.WithCountOnly())
	if err != nil {
		return WitnessReport{}, failure(err)
	}
	r := WitnessReport{Prefix: b.prefix, CurrentCluster: strconv.FormatUint(resp.Header.ClusterId, 16), CurrentRevision: resp.Header.Revision,
		currentMarks: map[string]Mark{}}
	wp := fresh.Prefixes[b.prefix]
	if wp == nil {
		return r, nil
	}
	r.WitnessedCluster, r.WitnessedRevision = wp.ClusterID, wp.Revision
	parts := make([]string, 0, len(wp.Records))
	for part := range wp.Records {
		parts = append(parts, part)
	}
	slices.Sort(parts)
	for _, part := range parts {
		got, err := b.cli.Get(ctx, b.prefix+"anchor/"+part)
		if err != nil {
			return WitnessReport{}, failure(err)
		}
		var v []byte
		if len(got.Kvs) == 1 {
			v = got.Kvs[0].Value
		}
		a, err := parseAnchor(v)
		if err != nil {
			return WitnessReport{}, err
		}
		cur := Mark{a.Fence, a.Floor}
		r.currentMarks[part] = cur
		r.Records = append(r.Records, WitnessRecord{Record: recordName(part), Witnessed: wp.Records[part], Current: cur})
	}
	return r, nil
}

// AcceptWitness moves the witness of b's prefix to the cluster as r found it, lowering it:
// the operator's last step after a deliberate restore, once every open operation was
// reconciled against the effect system. It refuses when the cluster moved since r was taken
// (another cluster id, or any record's mark changed), so compare and accept again.
func (b *Backend) AcceptWitness(ctx context.Context, w *Witness, r WitnessReport) error {
	again, err := b.CompareWitness(ctx, w)
	if err != nil {
		return err
	}
	if again.CurrentCluster != r.CurrentCluster || !maps.Equal(again.currentMarks, r.currentMarks) {
		return ErrClusterMoved
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.update(func(wf *witnessFile) {
		wf.Prefixes[b.prefix] = &witnessPrefix{ClusterID: again.CurrentCluster, Revision: again.CurrentRevision, Records: again.currentMarks}
	})
}
