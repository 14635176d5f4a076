package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/splashv5/conform/impl/storage/etcdstore/etcdstoretest"
	"github.com/splashv5/conform/impl/worker/workertest"
)

// etcdWorker returns the worker built with tag splashetcd, and starts an etcd cluster of n
// members (none when n is 0), stopped when t ends. Without etcd it skips, or fails when CI is set.
func etcdWorker(t *testing.T, n int) (string, *etcdstoretest.Cluster) {
	t.Helper()
	if _, err := etcdstoretest.Binary(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	var c *etcdstoretest.Cluster
	if n > 0 {
		var err error
		if c, err = etcdstoretest.Start(t.TempDir(), n); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(c.Stop)
	}
	return binaries.MustWorker(t, "splashetcd"), c
}

// journalURL is the --journal value naming the cluster's members and prefix.
func journalURL(c *etcdstoretest.Cluster, prefix string) string {
	var hosts []string
	for _, e := range c.Endpoints() {
		hosts = append(hosts, strings.TrimPrefix(e, "http://"))
	}
	return "etcd://" + strings.Join(hosts, ",") + "/" + prefix
}

// etcdConfigFile writes an --etcd-config file with short timeouts.
func etcdConfigFile(t *testing.T) string {
	cfg := filepath.Join(t.TempDir(), "etcd.json")
	if err := os.WriteFile(cfg, []byte(`{"dial_timeout_ms": 2000, "op_timeout_ms": 1500}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// witnessFile is a fresh --etcd-witness path: what one machine's workers saw.
func witnessFile(t testing.TB) string { return filepath.Join(t.TempDir(), "witness.json") }

// Two worker processes (two machines) share one journal in etcd: the second answers the
// first's operation from the journal and never runs it again. While the member is stopped the
// worker fails closed with a persistence error and answers nothing; after the restart the
// operation runs exactly once.
//
// Spec: STO-080
func TestEtcdJournalAcrossProcessesAndOutage(t *testing.T) {
	bin, c := etcdWorker(t, 1)
	effects := filepath.Join(t.TempDir(), "effects.log")
	args := []string{"--journal", journalURL(c, "splash/e2e"), "--etcd-config", etcdConfigFile(t), "--etcd-witness", witnessFile(t), "--effect-log", effects}
	record := grant(recordTool, 20, 1)

	p := start(t, bin, mustHost(t, "etcd-1"), args...)
	p.write(p.host.Bootstrap())
	p.open(record)
	p.call(p.host.Dispatch("d1", recordTool, "op-1", workertest.Record("succeed", `{"n":1}`)),
		`operation_result succeeded json:{"operation_key":"op-1","value":{"n":1}}`)
	p.expectExit(0, "")

	p = start(t, bin, mustHost(t, "etcd-2"), args...)
	p.write(p.host.Bootstrap())
	p.open(record)
	p.call(p.host.Dispatch("d1", recordTool, "op-1", workertest.Record("succeed", `{"n":1}`)),
		`operation_result succeeded json:{"operation_key":"op-1","value":{"n":1}}`)
	// The store goes away mid-session: the next dispatch is not answered.
	c.StopMember(0)
	p.send(p.host.Dispatch("d2", recordTool, "op-2", workertest.Record("succeed", `{"n":2}`)))
	code, stderr := p.end()
	if code != 7 || !strings.Contains(stderr, "persistence") {
		t.Fatalf("exit %d with %q, want 7 (persistence)", code, stderr)
	}
	if err := c.Restart(0); err != nil {
		t.Fatal(err)
	}
	p = start(t, bin, mustHost(t, "etcd-3"), args...)
	p.write(p.host.Bootstrap())
	p.open(record)
	p.call(p.host.Dispatch("d2", recordTool, "op-2", workertest.Record("succeed", `{"n":2}`)),
		`operation_result succeeded json:{"operation_key":"op-2","value":{"n":2}}`)
	p.expectExit(0, "")
	for _, op := range []string{"op-1", "op-2"} {
		if n := effectLines(t, effects, "effect", op); n != 1 {
			t.Fatalf("%s has %d effects, want exactly 1", op, n)
		}
	}
}

func mustHost(t testing.TB, session string) *workertest.Host {
	t.Helper()
	h, err := workertest.NewHost(session)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// clusterRun is a sequence of worker sessions dispatching operations against one journal in
// an etcd cluster while faults are injected between dispatches.
type clusterRun struct {
	t          *testing.T
	bin        string
	args       []string
	p          *proc
	sessions   int
	answered   map[string]string // operation key -> the answer given
	refused    []string          // operations whose session ended without an answer
	reconciled []string          // refused operations found pending later, reconciled as failed
}

func (r *clusterRun) session() *proc {
	if r.p == nil {
		r.sessions++
		r.p = start(r.t, r.bin, mustHost(r.t, fmt.Sprintf("cluster-%d", r.sessions)), r.args...)
		r.p.write(r.p.host.Bootstrap())
		r.p.open(grant(recordTool, 64, 1))
	}
	return r.p
}

// dispatch sends one durable dispatch of op. An answer must be the terminal success; no
// answer must end the session with a persistence failure (fail closed, never terminal).
func (r *clusterRun) dispatch(op string) {
	p := r.session()
	want := fmt.Sprintf(`operation_result succeeded json:{"operation_key":%q,"value":%q}`, op, op)
	p.send(p.host.Dispatch("d-"+op, recordTool, op, workertest.Record("succeed", fmt.Sprintf("%q", op))))
	line, err := readLine(p.stdout, 20*time.Second)
	if err == nil {
		if got := p.host.MustOpen(line); got != want {
			r.t.Fatalf("%s: answer %q, want %q", op, got, want)
		}
		r.answered[op] = want
		return
	}
	code, stderr := p.end()
	r.p = nil
	if code == 6 && strings.Contains(stderr, "PendingOperation") && slices.Contains(r.refused, op) {
		// The write of an earlier, unanswered attempt (indeterminate, STO-080) committed once
		// the cluster was back: the operation is pending, and the host reconciles it. Its
		// effect never ran, since the attempt ended before the adapter.
		p := r.session()
		p.call(p.host.Reconcile("q-"+op, recordTool, op), "reconciled_operation failed "+absence)
		r.reconciled = append(r.reconciled, op)
		return
	}
	if code != 7 {
		r.t.Fatalf("%s: no answer and exit %d (%s), want 7 (persistence)", op, code, stderr)
	}
	r.refused = append(r.refused, op)
}

// finish ends the session, then checks in a fresh one that every answered operation is
// answered again from the journal and that no operation ran twice.
func (r *clusterRun) finish(effects string) {
	if r.p != nil {
		r.p.expectExit(0, "")
		r.p = nil
	}
	p := r.session()
	for op, want := range r.answered {
		p.call(p.host.Dispatch("again-"+op, recordTool, op, workertest.Record("succeed", fmt.Sprintf("%q", op))), want)
	}
	p.expectExit(0, "")
	for op := range r.answered {
		if n := effectLines(r.t, effects, "effect", op); n != 1 {
			r.t.Fatalf("answered %s has %d effects, want exactly 1", op, n)
		}
	}
	for _, op := range r.refused {
		if n := effectLines(r.t, effects, "effect", op); n > 1 {
			r.t.Fatalf("unanswered %s has %d effects", op, n)
		}
	}
	r.t.Logf("%d answered, %d refused while unavailable (%d of them reconciled as failed later), %d sessions", len(r.answered), len(r.refused), len(r.reconciled), r.sessions)
}

// A three-member cluster loses its leader (SIGKILL), then a follower (stopped and restarted),
// then its quorum, between durable dispatches. Every answered dispatch is durable and answered
// again from the journal, none runs twice, and without a quorum the worker answers nothing
// and exits with a persistence failure.
//
// Spec: STO-080, STO-081
func TestEtcdClusterFaultsDuringDispatches(t *testing.T) {
	bin, c := etcdWorker(t, 3)
	effects := filepath.Join(t.TempDir(), "effects.log")
	r := &clusterRun{t: t, bin: bin, answered: map[string]string{},
		args: []string{"--journal", journalURL(c, "splash/cluster"), "--etcd-config", etcdConfigFile(t), "--etcd-witness", witnessFile(t), "--effect-log", effects}}
	n := 0
	next := func() string { n++; return fmt.Sprintf("op-%d", n) }
	for range 3 {
		r.dispatch(next())
	}
	leader, err := c.Leader(10 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.Kill(leader)
	for range 3 {
		r.dispatch(next())
	}
	if err := c.Restart(leader); err != nil {
		t.Fatal(err)
	}
	follower := (leader + 1) % 3
	c.StopMember(follower)
	for range 2 {
		r.dispatch(next())
	}
	if err := c.Restart(follower); err != nil {
		t.Fatal(err)
	}
	r.dispatch(next())
	// No quorum: two of three members down.
	c.StopMember(0)
	c.StopMember(1)
	lost := next()
	r.dispatch(lost)
	if _, ok := r.answered[lost]; ok {
		t.Fatalf("%s was answered without a quorum", lost)
	}
	for _, i := range []int{0, 1} {
		if err := c.Restart(i); err != nil {
			t.Fatal(err)
		}
	}
	r.dispatch(lost)
	r.dispatch(next())
	r.finish(effects)
	if len(r.answered) < n-2 {
		t.Fatalf("only %d of %d operations answered", len(r.answered), n)
	}
}

// The journal file anchored on etcd: after an older copy of the file is put back, the next
// worker refuses the journal (integrity failure, rollback reported) instead of answering
// from old state or running the operation again.
//
// Spec: STO-084
func TestAnchoredJournalFileRefusesARestoredCopy(t *testing.T) {
	bin, c := etcdWorker(t, 1)
	dir := t.TempDir()
	db := filepath.Join(dir, "journal.db")
	effects := filepath.Join(dir, "effects.log")
	args := []string{"--journal", db, "--journal-anchor", journalURL(c, "splash/anchor"), "--etcd-config", etcdConfigFile(t), "--etcd-witness", witnessFile(t), "--effect-log", effects}
	record := grant(recordTool, 20, 1)
	session := func(name string, ops ...string) {
		p := start(t, bin, mustHost(t, name), args...)
		p.write(p.host.Bootstrap())
		p.open(record)
		for _, op := range ops {
			p.call(p.host.Dispatch("d-"+op, recordTool, op, workertest.Record("succeed", `"v"`)),
				fmt.Sprintf(`operation_result succeeded json:{"operation_key":%q,"value":"v"}`, op))
		}
		p.expectExit(0, "")
	}
	session("anchor-1", "op-1")
	old, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	session("anchor-2", "op-2", "op-1")
	if err := os.WriteFile(db, old, 0o600); err != nil {
		t.Fatal(err)
	}
	p := start(t, bin, mustHost(t, "anchor-3"), args...)
	p.write(p.host.Bootstrap())
	p.open(record)
	code, stderr := p.end()
	if code != 9 || !strings.Contains(stderr, "integrity") || !strings.Contains(stderr, "rolled back") {
		t.Fatalf("exit %d with %q, want 9 (integrity) reporting the rollback", code, stderr)
	}
	if n := effectLines(t, effects, "effect", "op-2"); n != 1 {
		t.Fatalf("op-2 has %d effects, want exactly 1", n)
	}
}

// Two worker processes ("machines") on one etcd journal: once the second is admitted, the
// first, still running, can no longer persist anything; it fails closed and the operation it
// was asked for runs only in the newer worker.
//
// Spec: STO-081
func TestEtcdSupersededWorkerCannotWrite(t *testing.T) {
	bin, c := etcdWorker(t, 1)
	effects := filepath.Join(t.TempDir(), "effects.log")
	args := []string{"--journal", journalURL(c, "splash/superseded"), "--etcd-config", etcdConfigFile(t), "--etcd-witness", witnessFile(t), "--effect-log", effects}
	record := grant(recordTool, 20, 1)
	dispatch := func(p *proc, op string) {
		p.call(p.host.Dispatch("d-"+op, recordTool, op, workertest.Record("succeed", `"v"`)),
			fmt.Sprintf(`operation_result succeeded json:{"operation_key":%q,"value":"v"}`, op))
	}
	older := start(t, bin, mustHost(t, "older"), args...)
	older.write(older.host.Bootstrap())
	older.open(record)
	dispatch(older, "op-1")

	newer := start(t, bin, mustHost(t, "newer"), args...)
	newer.write(newer.host.Bootstrap())
	newer.open(record)
	dispatch(newer, "op-1")

	older.send(older.host.Dispatch("d-op-2", recordTool, "op-2", workertest.Record("succeed", `"v"`)))
	code, stderr := older.end()
	if code != 7 || !strings.Contains(stderr, "fencing token rejected: current 2, supplied 1") {
		t.Fatalf("superseded worker: exit %d with %q, want 7 with a fencing rejection", code, stderr)
	}
	dispatch(newer, "op-2")
	newer.expectExit(0, "")
	for _, op := range []string{"op-1", "op-2"} {
		if n := effectLines(t, effects, "effect", op); n != 1 {
			t.Fatalf("%s has %d effects, want exactly 1", op, n)
		}
	}
}

// The default build refuses an etcd journal; the splashetcd build refuses malformed, unsafe
// or incomplete etcd settings before reading anything (status 2), reports an unreachable
// cluster as a persistence failure (status 7), and prints no password.
//
// Spec: STO-083, STO-089
func TestEtcdJournalSettingsRefused(t *testing.T) {
	bin, _ := etcdWorker(t, 0)
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	pw := write("pw", "do-not-print-me\n")
	cfg := write("cfg.json", `{"dial_timeout_ms": 300}`)
	authCfg := write("auth.json", `{"username": "u", "password_file": "`+pw+`", "dial_timeout_ms": 300}`)
	badCfg := write("bad.json", `{"endpoint": "frame-chosen"}`)
	keyOnly := write("key.json", `{"key_file": "`+pw+`"}`)
	certOnly := write("cert.json", `{"cert_file": "`+pw+`"}`)
	userOnly := write("user.json", `{"username": "u"}`)
	compaction := write("compaction.json", `{"compaction": "never"}`)
	noCA := write("noca.json", `{"ca_file": "`+pw+`"}`)
	w := filepath.Join(dir, "witness.json")
	cases := []struct {
		bin  string
		args []string
		code int
		want string
	}{
		{workerBinary, []string{"--journal", "etcd://127.0.0.1:1/p"}, 7, "build with -tags splashetcd"},
		{bin, []string{"--journal", "etcd://127.0.0.1:1", "--etcd-witness", w}, 2, "HOST:PORT[,HOST:PORT...]/PREFIX"},
		{bin, []string{"--journal", "etcd://no-port/p", "--etcd-witness", w}, 2, `endpoint 1 "no-port" has no port`},
		{bin, []string{"--journal", "etcd://https://127.0.0.1:2379/x", "--etcd-witness", w}, 2, `endpoint 1 "https:" has an empty port`},
		{workerBinary, []string{"--journal", "etcd://127.0.0.1:2379,h:/x"}, 2, `endpoint 2 "h:" has an empty port`},
		{bin, []string{"--journal", "etcd://127.0.0.1:1/p", "--etcd-witness", w, "--etcd-config", badCfg}, 2, `unknown field "endpoint"`},
		{bin, []string{"--journal", "etcd://127.0.0.1:1/p", "--etcd-witness", w, "--journal-anchor", "etcd://127.0.0.1:1/q"}, 2, "--journal-anchor applies to a journal file"},
		{bin, []string{"--journal", filepath.Join(dir, "j.db"), "--etcd-witness", w, "--journal-anchor", "http://x"}, 2, "--journal-anchor needs etcd://"},
		{bin, []string{"--journal", "etcd://127.0.0.1:1/p", "--etcd-config", cfg}, 2, "needs --etcd-witness FILE"},
		{bin, []string{"--journal", "etcd://127.0.0.1:1/p", "--etcd-witness", w, "--etcd-config", authCfg}, 2, "never sent over plain http"},
		{bin, []string{"--journal", "etcd://127.0.0.1:1/p", "--etcd-witness", w, "--etcd-config", keyOnly}, 2, "key_file without cert_file"},
		{bin, []string{"--journal", "etcd://127.0.0.1:1/p", "--etcd-witness", w, "--etcd-config", certOnly}, 2, "cert_file without key_file"},
		{bin, []string{"--journal", "etcd://127.0.0.1:1/p", "--etcd-witness", w, "--etcd-config", userOnly}, 2, "username and password_file go together"},
		{bin, []string{"--journal", "etcd://127.0.0.1:1/p", "--etcd-witness", w, "--etcd-config", compaction}, 2, `compaction "never"`},
		{bin, []string{"--journal", "etcd://127.0.0.1:1/p", "--etcd-witness", w, "--etcd-config", noCA}, 2, "ca_file holds no certificate"},
		{bin, []string{"--journal", "etcd://127.0.0.1:1/p", "--etcd-witness", w, "--etcd-config", cfg}, 7, "etcd failure"},
	}
	for _, c := range cases {
		p := start(t, c.bin, mustHost(t, "settings"), c.args...)
		code, stderr := p.end()
		if code != c.code || !strings.Contains(stderr, c.want) || strings.Contains(stderr, "do-not-print-me") {
			t.Fatalf("%v: exit %d with %q, want %d with %q", c.args, code, stderr, c.code, c.want)
		}
	}
}
