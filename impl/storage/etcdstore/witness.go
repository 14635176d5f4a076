package etcdstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
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
// The file is a log (format 2): a 32-byte header (the line "splash-etcd-witness v2\n", zero
// padded), then frames, each a 16-byte head (u32 body length, u32 CRC-32C of the sequence
// number and the body, u64 sequence number, all big-endian) and a JSON body. Frame 1 holds
// the whole state ({"prefixes":{...}}, as in format 1 without the format member); every later
// frame holds one raise ({"prefix","cluster_id","revision","record","fence","floor"}), merged
// into the state in order: a raise under another cluster id than the prefix's starts the
// prefix afresh, else the revision, fence and floor each keep the higher value. The log ends
// at the first frame that is zeros, does not check or does not follow its predecessor's
// number: a crash tore it before its raise returned, and the next raise takes its place. The
// file is grown in zeroed chunks ahead of the frames, so a raise's fdatasync does not also
// commit a new file size.
//
// A raise appends one frame under an exclusive lock of PATH.lock, after reading the frames
// other processes appended since, and makes it durable (fdatasync) before it returns; so
// several workers may share one witness. A backend raises it after each read that saw more
// and before each write it committed reports success. Lowering it (the operator's
// acceptance), the first raise (no file yet, or a format 1 file: JSON, as earlier versions
// wrote it, which is read as it is) and a raise on a log grown well past its state write the
// file atomically instead: the state as frame 1 of a temporary file, fsynced, renamed over
// the witness, then the directory fsynced. A restore of both the
// witness and the cluster to matching older copies stays undetectable, as does a loss that no
// process of this machine ever read or wrote.
type Witness struct {
	path string

	mu   sync.Mutex
	seen witnessFile
	// The open file and how far it was read; f is nil before the file exists or is read
	// again, legacy says it is a format 1 file.
	f      *os.File
	info   os.FileInfo
	legacy bool
	end    int64  // offset of the next frame
	size   int64  // the file's size as last seen (frames and zeroed room)
	seq    uint64 // number of the last frame read or written
	// state is the size of the state frame; the log is rewritten when its raises outgrow it.
	state int64
	lock  *os.File
	// stale says the state in memory may hold raises that are not durable (a sync failed):
	// nothing is taken for granted from it until the file is read again.
	stale bool
}

// WitnessMagic is the first line of a witness file of format 2; the header is it, zero
// padded to 32 bytes.
const WitnessMagic = "splash-etcd-witness v2\n"

// witnessFormat is the format version of a witness file written as JSON (format 1), which
// is read and rewritten as a log at the next raise.
const witnessFormat = 1

const (
	// maxWitnessBytes bounds the witness file's frames.
	maxWitnessBytes = 16 << 20
	// witnessChunk is how much zeroed room the file is grown by at a time.
	witnessChunk = 64 << 10
)

// witnessCompactAfter is the least room the raises take before the log is rewritten; it is
// rewritten when they also take twice the state's frame. Tests lower it.
var witnessCompactAfter int64 = 256 << 10

// witnessFile is the state of the witness, and the JSON of a format 1 file.
type witnessFile struct {
	Format   int                       `json:"format,omitempty"`
	Prefixes map[string]*witnessPrefix `json:"prefixes"`
}

// witnessPrefix is what the machine saw under one key prefix.
type witnessPrefix struct {
	// ClusterID is the cluster id in hexadecimal (a JSON number cannot hold every uint64).
	ClusterID string          `json:"cluster_id"`
	Revision  int64           `json:"revision"`
	Records   map[string]Mark `json:"records"`
}

// witnessRaise is the body of every frame after the first: one raise.
type witnessRaise struct {
	Prefix    string `json:"prefix"`
	ClusterID string `json:"cluster_id"`
	Revision  int64  `json:"revision"`
	Record    string `json:"record"`
	Fence     uint64 `json:"fence"`
	Floor     uint64 `json:"floor"`
}

// Mark is the fence and floor of one record's anchor.
type Mark struct {
	Fence uint64 `json:"fence"`
	Floor uint64 `json:"floor"`
}

// below reports whether m is below w in the fence or the floor.
func (m Mark) below(w Mark) bool { return m.Fence < w.Fence || m.Floor < w.Floor }

// apply merges r into wf.
func (wf *witnessFile) apply(r witnessRaise) {
	wp := wf.Prefixes[r.Prefix]
	if wp == nil || wp.ClusterID != r.ClusterID {
		wp = &witnessPrefix{ClusterID: r.ClusterID, Records: map[string]Mark{}}
		wf.Prefixes[r.Prefix] = wp
	}
	wp.Revision = max(wp.Revision, r.Revision)
	m := wp.Records[r.Record]
	wp.Records[r.Record] = Mark{max(m.Fence, r.Fence), max(m.Floor, r.Floor)}
}

// covers reports whether wf already holds r's mark under r's cluster id.
func (wf *witnessFile) covers(r witnessRaise) bool {
	wp := wf.Prefixes[r.Prefix]
	if wp == nil || wp.ClusterID != r.ClusterID {
		return false
	}
	m, ok := wp.Records[r.Record]
	return ok && !m.below(Mark{r.Fence, r.Floor})
}

// clone returns a deep copy of wf.
func (wf *witnessFile) clone() witnessFile {
	out := witnessFile{Prefixes: make(map[string]*witnessPrefix, len(wf.Prefixes))}
	for p, wp := range wf.Prefixes {
		out.Prefixes[p] = &witnessPrefix{ClusterID: wp.ClusterID, Revision: wp.Revision, Records: maps.Clone(wp.Records)}
	}
	return out
}

func emptyWitness() witnessFile { return witnessFile{Prefixes: map[string]*witnessPrefix{}} }

// OpenWitness reads the witness file at path; a missing file is an empty witness. A file
// that does not decode is storage.ErrCorrupt.
func OpenWitness(path string) (*Witness, error) {
	w := &Witness{path: path, seen: emptyWitness()}
	if err := w.read(); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// Close closes the witness file; a later raise opens it again.
func (w *Witness) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.forget()
	if w.lock != nil {
		w.lock.Close()
		w.lock = nil
	}
	return nil
}

// Path returns the witness file's path.
func (w *Witness) Path() string { return w.path }

// forget closes the file and drops what was read of it.
func (w *Witness) forget() {
	if w.f != nil {
		w.f.Close()
	}
	w.f, w.info, w.legacy, w.end, w.size, w.seq, w.state = nil, nil, false, 0, 0, 0, 0
}

func (w *Witness) corrupt(why string) error {
	return &storage.Error{Kind: storage.ErrCorrupt, Err: fmt.Errorf("witness %s: %s", w.path, why)}
}

// read reads the file at the path from its start into w.seen; a missing file is empty.
func (w *Witness) read() error {
	w.forget()
	f, err := os.OpenFile(w.path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrPermission) {
		f, err = os.Open(w.path) // to compare only: a raise fails to write
	}
	if errors.Is(err, fs.ErrNotExist) {
		w.seen, w.stale = emptyWitness(), false
		return nil
	}
	if err != nil {
		return w.fail(err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return w.fail(err)
	}
	w.f, w.info, w.size = f, info, info.Size()
	head := make([]byte, witnessHeaderBytes)
	n, err := f.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return w.fail(err)
	}
	if n > 0 && head[0] == '{' {
		wf, err := w.readLegacy()
		if err != nil {
			return err
		}
		w.seen, w.legacy, w.stale = wf, true, false
		return nil
	}
	if n < witnessHeaderBytes || !bytes.Equal(head, witnessHeader()) {
		return w.corrupt("not a witness file (wrong header)")
	}
	w.seen, w.end, w.stale = emptyWitness(), witnessHeaderBytes, false
	if err := w.catchUp(); err != nil {
		return err
	}
	if w.seq == 0 {
		return w.corrupt("no state frame")
	}
	return nil
}

// readLegacy decodes a format 1 (JSON) file.
func (w *Witness) readLegacy() (witnessFile, error) {
	data, err := io.ReadAll(io.LimitReader(io.NewSectionReader(w.f, 0, maxWitnessBytes+1), maxWitnessBytes+1))
	if err != nil {
		return witnessFile{}, w.fail(err)
	}
	if len(data) > maxWitnessBytes {
		return witnessFile{}, w.corrupt(fmt.Sprintf("larger than %d bytes", maxWitnessBytes))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var wf witnessFile
	if err := dec.Decode(&wf); err != nil {
		return witnessFile{}, w.corrupt(err.Error())
	}
	if wf.Format != witnessFormat {
		return witnessFile{}, w.corrupt(fmt.Sprintf("format %d, want %d", wf.Format, witnessFormat))
	}
	if err := w.checkState(&wf); err != nil {
		return witnessFile{}, err
	}
	wf.Format = 0
	return wf, nil
}

// checkState checks a decoded state.
func (w *Witness) checkState(wf *witnessFile) error {
	for p, wp := range wf.Prefixes {
		if wp == nil || wp.Records == nil {
			return w.corrupt(fmt.Sprintf("prefix %q has no records", p))
		}
		if _, err := strconv.ParseUint(wp.ClusterID, 16, 64); err != nil {
			return w.corrupt(fmt.Sprintf("prefix %q: cluster id %q", p, wp.ClusterID))
		}
	}
	if wf.Prefixes == nil {
		wf.Prefixes = map[string]*witnessPrefix{}
	}
	return nil
}

const (
	witnessHeaderBytes = 32
	witnessFrameHead   = 16
)

func witnessHeader() []byte {
	h := make([]byte, witnessHeaderBytes)
	copy(h, WitnessMagic)
	return h
}

// catchUp reads the frames after w.end into w.seen.
func (w *Witness) catchUp() error {
	var head [witnessFrameHead]byte
	for {
		if _, err := w.f.ReadAt(head[:], w.end); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return w.fail(err)
		}
		n := binary.BigEndian.Uint32(head[:])
		seq := binary.BigEndian.Uint64(head[8:])
		if n == 0 || n > maxWitnessBytes || seq != w.seq+1 || w.end+witnessFrameHead+int64(n) > witnessHeaderBytes+maxWitnessBytes {
			return nil
		}
		body := make([]byte, n)
		if _, err := w.f.ReadAt(body, w.end+witnessFrameHead); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return w.fail(err)
		}
		if crc32.Update(crc32.Checksum(head[8:], castagnoli), castagnoli, body) != binary.BigEndian.Uint32(head[4:]) {
			return nil
		}
		if err := w.applyFrame(seq, body); err != nil {
			return w.corrupt(fmt.Sprintf("frame %d at offset %d: %v", seq, w.end, err))
		}
		w.end += witnessFrameHead + int64(n)
		w.seq = seq
		w.size = max(w.size, w.end)
	}
}

// applyFrame decodes one frame body into w.seen: the state for frame 1, a raise after it.
func (w *Witness) applyFrame(seq uint64, body []byte) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if seq == 1 {
		var wf witnessFile
		if err := dec.Decode(&wf); err != nil {
			return err
		}
		if wf.Format != 0 {
			return errors.New("a state frame has no format member")
		}
		if err := w.checkState(&wf); err != nil {
			return err
		}
		w.seen, w.state = wf, int64(len(body))
		return nil
	}
	var r witnessRaise
	if err := dec.Decode(&r); err != nil {
		return err
	}
	if _, err := strconv.ParseUint(r.ClusterID, 16, 64); err != nil {
		return fmt.Errorf("cluster id %q", r.ClusterID)
	}
	w.seen.apply(r)
	return nil
}

// castagnoli is the CRC-32C table of the witness frames.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

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
// more than the witness holds, one frame is appended and made durable before it returns.
func (w *Witness) raise(prefix string, cluster uint64, revision int64, part string, a storage.AnchorState) error {
	if w == nil {
		return nil
	}
	if (Mark{a.Fence, a.Floor}) == (Mark{}) {
		return nil
	}
	r := witnessRaise{Prefix: prefix, ClusterID: strconv.FormatUint(cluster, 16), Revision: revision, Record: part, Fence: a.Fence, Floor: a.Floor}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.stale && w.seen.covers(r) {
		return nil
	}
	return w.locked(func() (bool, error) {
		if w.seen.covers(r) {
			return false, nil // another process raised it already
		}
		if w.f == nil || w.legacy || w.end-w.state > max(witnessCompactAfter, 2*w.state) {
			next := w.seen.clone()
			next.apply(r)
			return false, w.rewrite(next)
		}
		body, err := json.Marshal(r)
		if err != nil {
			return false, err
		}
		if err := w.append(body); err != nil {
			return false, err
		}
		w.seen.apply(r)
		return true, nil
	})
}

// locked runs fn under the lock of PATH.lock, with w.seen read up to the end of the file,
// and makes the file durable before it returns when fn appended a frame or frames of other
// processes were read (their writers may still be syncing them). w.mu is held.
func (w *Witness) locked(fn func() (appended bool, err error)) error {
	if w.lock == nil {
		lock, err := os.OpenFile(w.path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			return w.fail(err)
		}
		w.lock = lock
	}
	if err := flock(w.lock, syscall.LOCK_EX); err != nil {
		return w.fail(err)
	}
	seq, err := w.refresh()
	unsynced := err == nil && w.seq != seq && w.f != nil
	if err == nil {
		var appended bool
		appended, err = fn()
		unsynced = unsynced || appended
	}
	_ = flock(w.lock, syscall.LOCK_UN)
	if unsynced && err == nil {
		// After the lock, so that the syncs of several processes overlap.
		if serr := datasync(w.f); serr != nil {
			err = serr
		}
	}
	if err != nil {
		w.stale = true
		var se *storage.Error
		if !errors.As(err, &se) {
			err = w.fail(err)
		}
	}
	return err
}

// refresh brings w.seen up to the file on disk: read again from the start when the path
// names another file (a rewrite by another process) or memory is stale, else the frames
// appended since. It returns the frame number before reading.
func (w *Witness) refresh() (uint64, error) {
	seq := w.seq
	named, err := os.Stat(w.path)
	switch {
	case errors.Is(err, fs.ErrNotExist) && w.f == nil && !w.stale:
		return seq, nil
	case errors.Is(err, fs.ErrNotExist):
		// Removed since it was read: what the disk holds is nothing, as at the first raise.
		return 0, w.read()
	case err != nil:
		return seq, err
	}
	if w.stale || w.f == nil || !os.SameFile(w.info, named) {
		if err := w.read(); err != nil {
			return seq, err
		}
		return 0, nil
	}
	if w.legacy {
		return seq, nil
	}
	return seq, w.catchUp()
}

// append writes one frame with body at the end of the log, growing the file in zeroed
// chunks first when it has no room.
func (w *Witness) append(body []byte) error {
	frame := make([]byte, witnessFrameHead, witnessFrameHead+len(body))
	frame = append(frame, body...)
	binary.BigEndian.PutUint32(frame, uint32(len(body)))
	binary.BigEndian.PutUint64(frame[8:], w.seq+1)
	binary.BigEndian.PutUint32(frame[4:], crc32.Update(crc32.Checksum(frame[8:16], castagnoli), castagnoli, body))
	need := w.end + int64(len(frame))
	if need > w.size {
		info, err := w.f.Stat()
		if err != nil {
			return err
		}
		w.size = max(w.size, info.Size())
	}
	if need > w.size {
		grown := need + witnessChunk - need%witnessChunk
		if _, err := w.f.WriteAt(make([]byte, grown-w.size), w.size); err != nil {
			return err
		}
		w.size = grown
	}
	if _, err := w.f.WriteAt(frame, w.end); err != nil {
		return err
	}
	w.end, w.seq = need, w.seq+1
	return nil
}

// rewrite replaces the file with a log whose first frame is the state wf, atomically (a
// temporary file in the same directory, fsynced, renamed over the path, then the directory
// fsynced, so a crash leaves the old or the new file), and makes wf the state in memory.
// The lock of PATH.lock is held.
func (w *Witness) rewrite(wf witnessFile) error {
	wf.Format = 0
	body, err := json.Marshal(wf)
	if err != nil {
		return err
	}
	dir := filepath.Dir(w.path)
	tmp, err := os.CreateTemp(dir, filepath.Base(w.path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	frame := make([]byte, witnessFrameHead, witnessFrameHead+len(body))
	frame = append(frame, body...)
	binary.BigEndian.PutUint32(frame, uint32(len(body)))
	binary.BigEndian.PutUint64(frame[8:], 1)
	binary.BigEndian.PutUint32(frame[4:], crc32.Update(crc32.Checksum(frame[8:16], castagnoli), castagnoli, body))
	end := int64(witnessHeaderBytes + len(frame))
	size := end + witnessChunk - end%witnessChunk
	data := make([]byte, size)
	copy(data, witnessHeader())
	copy(data[witnessHeaderBytes:], frame)
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), w.path); err != nil {
		return err
	}
	if err := syncDir(dir); err != nil {
		return err
	}
	info, err := tmp.Stat()
	if err != nil {
		return err
	}
	ok = true
	w.forget()
	w.f, w.info, w.end, w.size, w.seq, w.state = tmp, info, end, size, 1, int64(len(body))
	w.seen, w.stale = wf, false
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// update replaces the witness with change applied to what it holds on disk, rewriting the
// file (it may lower marks); w.mu is held.
func (w *Witness) update(change func(*witnessFile)) error {
	return w.locked(func() (bool, error) {
		next := w.seen.clone()
		change(&next)
		return false, w.rewrite(next)
	})
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
	w.mu.Lock()
	err := w.read()
	fresh := w.seen.clone()
	w.mu.Unlock()
	if err != nil {
		return WitnessReport{}, err
	}
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
