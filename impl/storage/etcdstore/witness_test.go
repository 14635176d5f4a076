package etcdstore

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/splashv5/conform/impl/storage"
	"github.com/splashv5/conform/impl/storage/storagetest"
)

const witnessPrefixForTest = "/p/"

// raiseTo raises the witness for record part to fence and floor on cluster 0xabc.
func raiseTo(t testing.TB, w *Witness, part string, revision int64, fence, floor uint64) {
	t.Helper()
	if err := w.raise(witnessPrefixForTest, 0xabc, revision, part, storage.AnchorState{Fence: fence, Floor: floor}); err != nil {
		t.Fatal(err)
	}
}

// openWitnessT opens the witness at path, closed when the test ends.
func openWitnessT(t testing.TB, path string) *Witness {
	t.Helper()
	w, err := OpenWitness(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// markOf returns what w holds for part.
func markOf(w *Witness, part string) (Mark, int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	wp := w.seen.Prefixes[witnessPrefixForTest]
	if wp == nil {
		return Mark{}, 0
	}
	return wp.Records[part], wp.Revision
}

// frameEnds returns the offsets at which the frames of the log at path end.
func frameEnds(t testing.TB, path string) []int64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var ends []int64
	off := int64(witnessHeaderBytes)
	for off+witnessFrameHead <= int64(len(data)) {
		n := int64(binary.BigEndian.Uint32(data[off:]))
		if n == 0 {
			break
		}
		off += witnessFrameHead + n
		ends = append(ends, off)
	}
	return ends
}

// A raise that goes above the witness appends one frame to the log, inside the room the file
// was grown by, so its size does not change; a raise not above it writes nothing. A witness
// opened afresh holds every raise.
//
// Spec: STO-087
func TestWitnessAppendsOneFramePerRaise(t *testing.T) {
	path := filepath.Join(t.TempDir(), "witness")
	w := openWitnessT(t, path)
	raiseTo(t, w, "aa", 10, 1, 1)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte(WitnessMagic)) {
		t.Fatalf("the witness starts with %q, want the header %q", data[:min(len(data), 32)], WitnessMagic)
	}
	size := int64(len(data))
	if got := len(frameEnds(t, path)); got != 1 {
		t.Fatalf("a new witness has %d frames, want 1 (the state)", got)
	}
	raiseTo(t, w, "aa", 11, 1, 2)
	raiseTo(t, w, "bb", 12, 3, 0)
	raiseTo(t, w, "aa", 13, 1, 2) // not above: nothing written
	raiseTo(t, w, "aa", 14, 1, 1) // below: nothing written
	if got := len(frameEnds(t, path)); got != 3 {
		t.Fatalf("after two raises above and two not, the log has %d frames, want 3", got)
	}
	if info, err := os.Stat(path); err != nil || info.Size() != size {
		t.Fatalf("the appends changed the file's size from %d (%v, %v): the zeroed room was not used", size, info.Size(), err)
	}
	again := openWitnessT(t, path)
	if m, rev := markOf(again, "aa"); m != (Mark{1, 2}) || rev != 12 {
		t.Fatalf("reopened: aa at %+v, revision %d; want fence 1 floor 2, revision 12", m, rev)
	}
	if m, _ := markOf(again, "bb"); m != (Mark{3, 0}) {
		t.Fatalf("reopened: bb at %+v, want fence 3", m)
	}
	err = again.checkRecord(witnessPrefixForTest, "aa", storage.AnchorState{Fence: 1, Floor: 1})
	storagetest.WantKind(t, err, storage.ErrBelowWitness)
}

// A frame torn by a crash (cut at any byte, or its bytes not all written) is not part of the
// log: the witness holds what it held before that raise, and the next raise takes the torn
// frame's place and is read back.
//
// Spec: STO-087
func TestWitnessTornTailIsIgnored(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "witness")
	w := openWitnessT(t, path)
	raiseTo(t, w, "aa", 10, 1, 1)
	raiseTo(t, w, "aa", 11, 1, 2)
	raiseTo(t, w, "aa", 12, 1, 3)
	w.Close()
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ends := frameEnds(t, path)
	last, prev := ends[len(ends)-1], ends[len(ends)-2]
	tears := map[string]func(data []byte, cut int64){
		"zeros":   func(data []byte, cut int64) { clear(data[cut:last]) },
		"garbage": func(data []byte, cut int64) { copy(data[cut:last], bytes.Repeat([]byte{0x5a}, int(last-cut))) },
	}
	for name, tear := range tears {
		for cut := prev; cut < last; cut++ {
			data := bytes.Clone(good)
			tear(data, cut)
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			torn, err := OpenWitness(path)
			if err != nil {
				t.Fatalf("%s from byte %d of the last frame: %v", name, cut-prev, err)
			}
			if m, _ := markOf(torn, "aa"); m != (Mark{1, 2}) {
				t.Fatalf("%s from byte %d of the last frame: the witness holds %+v, want the raise before it (floor 2)", name, cut-prev, m)
			}
			raiseTo(t, torn, "aa", 13, 1, 4)
			torn.Close()
			after := openWitnessT(t, path)
			if m, _ := markOf(after, "aa"); m != (Mark{1, 4}) {
				t.Fatalf("%s from byte %d: the raise after the torn frame reads back as %+v, want floor 4", name, cut-prev, m)
			}
			after.Close()
		}
	}
}

// Every state a crash can leave a rewrite in (a temporary file partly or wholly written, the
// rename done or not) reads as the old or the new witness, never as a lower one, and stray
// temporary files are ignored.
//
// Spec: STO-087
func TestWitnessRewriteCrashLeavesOldOrNew(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "witness")
	w := openWitnessT(t, path)
	raiseTo(t, w, "aa", 10, 2, 5)
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// A temporary file the crash left behind, written to any length, is not the witness.
	for _, n := range []int{0, 10, witnessHeaderBytes + 5, len(old)} {
		if err := os.WriteFile(filepath.Join(dir, "witness.tmp-"+strconv.Itoa(n)), old[:n], 0o600); err != nil {
			t.Fatal(err)
		}
	}
	w2 := openWitnessT(t, path)
	if m, _ := markOf(w2, "aa"); m != (Mark{2, 5}) {
		t.Fatalf("with stray temporary files the witness holds %+v, want fence 2 floor 5", m)
	}
	// Lowering rewrites the file; the log starts again at the state.
	if err := w2.update(func(wf *witnessFile) { wf.Prefixes[witnessPrefixForTest].Records["aa"] = Mark{1, 1} }); err != nil {
		t.Fatal(err)
	}
	if got := len(frameEnds(t, path)); got != 1 {
		t.Fatalf("after a rewrite the log has %d frames, want 1", got)
	}
	// The first process still holds the replaced file open: its next raise reads the new
	// file first, and merges into it.
	raiseTo(t, w, "bb", 11, 1, 1)
	fresh := openWitnessT(t, path)
	if m, _ := markOf(fresh, "aa"); m != (Mark{1, 1}) {
		t.Fatalf("after the rewrite and another process's raise, aa is at %+v, want the lowered fence 1 floor 1", m)
	}
	if m, _ := markOf(fresh, "bb"); m != (Mark{1, 1}) {
		t.Fatalf("the raise after another process's rewrite was lost: bb at %+v", m)
	}
}

// A witness written as JSON by earlier versions (format 1) is read, and rewritten as a log,
// marks kept, at its next raise.
//
// Spec: STO-087
func TestWitnessReadsFormat1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "witness.json")
	legacy := `{"format":1,"prefixes":{"/p/":{"cluster_id":"abc","revision":40,"records":{"aa":{"fence":3,"floor":7}}}}}`
	if err := os.WriteFile(path, []byte(legacy), 0o600); err != nil {
		t.Fatal(err)
	}
	w := openWitnessT(t, path)
	storagetest.WantKind(t, w.checkRecord(witnessPrefixForTest, "aa", storage.AnchorState{Fence: 3, Floor: 6}), storage.ErrBelowWitness)
	raiseTo(t, w, "bb", 41, 1, 1)
	data, err := os.ReadFile(path)
	if err != nil || !bytes.HasPrefix(data, []byte(WitnessMagic)) {
		t.Fatalf("after a raise the format 1 witness was not rewritten as a log (%v)", err)
	}
	again := openWitnessT(t, path)
	if m, rev := markOf(again, "aa"); m != (Mark{3, 7}) || rev != 41 {
		t.Fatalf("the rewritten witness holds aa at %+v, revision %d; want fence 3 floor 7, revision 41", m, rev)
	}
}

// Two processes (two witnesses on one file) see each other's raises, across the rewrites the
// log's growth causes: after every raise, a witness opened afresh holds the highest mark of
// every record.
//
// Spec: STO-087
func TestWitnessSharedAndCompacted(t *testing.T) {
	defer func(v int64) { witnessCompactAfter = v }(witnessCompactAfter)
	witnessCompactAfter = 2 << 10
	path := filepath.Join(t.TempDir(), "witness")
	a, b := openWitnessT(t, path), openWitnessT(t, path)
	want := map[string]uint64{}
	rewrites, frames := 0, 0
	for i := 1; i <= 120; i++ {
		w := a
		if i%3 == 0 {
			w = b
		}
		part := fmt.Sprintf("r%d", i%7)
		raiseTo(t, w, part, int64(i), 1, uint64(i))
		want[part] = uint64(i)
		if n := len(frameEnds(t, path)); n < frames {
			rewrites++
		} else {
			frames = n
		}
		frames = len(frameEnds(t, path))
		fresh, err := OpenWitness(path)
		if err != nil {
			t.Fatal(err)
		}
		for part, floor := range want {
			if m, _ := markOf(fresh, part); m.Floor != floor {
				t.Fatalf("after raise %d (%d rewrites so far) %s is at floor %d, want %d", i, rewrites, part, m.Floor, floor)
			}
		}
		if _, rev := markOf(fresh, "r1"); rev != int64(i) {
			t.Fatalf("after raise %d the revision is %d", i, rev)
		}
		fresh.Close()
	}
	if rewrites == 0 {
		t.Fatal("the log was never rewritten")
	}
}

// A frame that checks but does not decode is corruption, not the end of the log.
//
// Spec: STO-087
func TestWitnessUndecodableFrameIsCorrupt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "witness")
	w := openWitnessT(t, path)
	raiseTo(t, w, "aa", 1, 1, 1)
	if err := w.append([]byte(`{"prefix":"/p/","cluster_id":"not hex","revision":1,"record":"aa","fence":1,"floor":2}`)); err != nil {
		t.Fatal(err)
	}
	_, err := OpenWitness(path)
	storagetest.WantKind(t, err, storage.ErrCorrupt)
}

// witnessChildEnv makes the test binary a child that raises the witness at the path it
// names, floor after floor, and prints each floor once its raise returned.
const witnessChildEnv = "SPLASH_WITNESS_CHILD"

func witnessChildMain() int {
	witnessCompactAfter = 1 << 10 // rewrites too are interrupted
	w, err := OpenWitness(os.Getenv(witnessChildEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	start, _ := markOf(w, "aa")
	for floor := start.Floor + 1; ; floor++ {
		if err := w.raise(witnessPrefixForTest, 0xabc, int64(floor), "aa", storage.AnchorState{Fence: 1, Floor: floor}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Printf("%d\n", floor)
	}
}

// A process killed at any point of a raise, an append or a rewrite, leaves a witness that
// opens and holds at least every raise that returned.
//
// Spec: STO-087
func TestWitnessSurvivesKilledWriter(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "witness")
	var acknowledged uint64
	for round := range 6 {
		cmd := exec.Command(exe)
		cmd.Env = append(os.Environ(), witnessChildEnv+"="+path)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := bufio.NewScanner(out)
		stop := time.Now().Add(time.Duration(20+round*15) * time.Millisecond)
		for lines.Scan() {
			floor, err := strconv.ParseUint(strings.TrimSpace(lines.Text()), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			acknowledged = floor
			if time.Now().After(stop) {
				break
			}
		}
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		w, err := OpenWitness(path)
		if err != nil {
			t.Fatalf("round %d: the witness of a killed writer does not open: %v", round, err)
		}
		m, _ := markOf(w, "aa")
		w.Close()
		if m.Floor < acknowledged {
			t.Fatalf("round %d: the witness holds floor %d, but the writer acknowledged %d", round, m.Floor, acknowledged)
		}
	}
	if acknowledged == 0 {
		t.Fatal("the writer acknowledged no raise")
	}
}

// One raise of a record's floor: one frame appended and made durable. SPLASH_BENCH_DIR puts
// the witness elsewhere (a tmpfs, to leave the sync out).
func BenchmarkWitnessRaise(b *testing.B) {
	dir := os.Getenv("SPLASH_BENCH_DIR")
	if dir == "" {
		dir = b.TempDir()
	} else {
		var err error
		if dir, err = os.MkdirTemp(dir, "bench"); err != nil {
			b.Fatal(err)
		}
		defer os.RemoveAll(dir)
	}
	w := openWitnessT(b, filepath.Join(dir, "witness"))
	floor := uint64(0)
	b.ReportAllocs()
	for b.Loop() {
		floor++
		raiseTo(b, w, "aa", int64(floor), 1, floor)
	}
}

// A witness file removed while a process holds it open is written again at the next raise,
// from what the disk holds (nothing) and that raise, as a first raise writes it.
//
// Spec: STO-087
func TestWitnessRemovedIsWrittenAgain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "witness")
	w := openWitnessT(t, path)
	raiseTo(t, w, "aa", 1, 1, 5)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	raiseTo(t, w, "bb", 2, 1, 1)
	again := openWitnessT(t, path)
	if m, _ := markOf(again, "bb"); m != (Mark{1, 1}) {
		t.Fatalf("after the file was removed the raise reads back as %+v", m)
	}
	if m, _ := markOf(again, "aa"); m != (Mark{}) {
		t.Fatalf("a removed witness came back with %+v for a record it no longer held", m)
	}
}
