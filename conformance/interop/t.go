package interop

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/driver"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/internal/childproc"
)

// maxTranscript bounds the transcript lines kept for one scenario; maxRecords the relayed
// lines kept per relay (the rest are judged and counted, not kept).
const (
	maxTranscript = 400
	maxRecords    = 200
)

// T is the context of one running scenario: the pair, its driver, the relays it started and
// its verdict.
type T struct {
	sc       *Scenario
	pair     *Pair
	run      *runState
	side     *conformance.SideChannel
	drv      *driver.Process
	features []string
	relays   []*relay
	sessions int

	conformance.T
	hazard string
	// blameHint names the side an end check found at fault, when the frames cannot tell.
	blameHint *blameHint
}

// failBlaming fails the scenario as failf does and names side as the one at fault, for why.
func (t *T) failBlaming(side Side, why, expected, actual string) {
	t.blameHint = &blameHint{side: side, why: why}
	t.Failf(expected, actual)
}

// Open prepares the scenario's directory and side channel, starts the driver and asks for its
// features; the scenario is SKIP when a side lacks one it needs (IOP-008).
func (t *T) Open() {
	for _, n := range t.sc.Needs {
		if !t.pair.Worker.offers(n) {
			t.Skipf("the worker %s does not offer %q", t.pair.Worker.Name, n)
		}
	}
	side, err := conformance.OpenSideChannel(t.run.Dir, "s", "r.sock", 8)
	if err != nil {
		t.Internal(err)
	}
	t.side = side
	t.startDriver()
	driver.RequireFeatures(&t.T, "the host "+t.pair.Host.Name, t.features, t.sc.Features)
}

// startDriver starts the host driver and says hello (HDR-010).
func (t *T) startDriver() {
	d, err := driver.Start(t.pair.Host.Command, t.run.Env, "")
	t.drv = driver.Opened(&t.T, "host driver", d, err)
	t.features = driver.Hello(&t.T, t.call)
	if restrict := t.pair.Host.Features; len(restrict) > 0 {
		// The implementations file restricts what the driver declares.
		t.features = slices.DeleteFunc(slices.Clone(t.features), func(f string) bool { return !slices.Contains(restrict, f) })
	}
}

// restartDriver kills the driver's process group and every relay, as a host crash would, and
// starts a new driver process.
func (t *T) restartDriver() {
	for _, r := range t.relays {
		r.stop()
	}
	t.drv.Kill()
	t.Logf("driver: killed; starting it again")
	t.startDriver()
}

// call sends a command and waits for its outcome until the scenario's deadline.
func (t *T) call(c map[string]any) driver.Outcome { return t.await(t.send(c)) }

// send writes a command without waiting.
func (t *T) send(c map[string]any) uint64 {
	return t.drv.SendFor(&t.T, "host driver", c, t.run.Verbose)
}

// await waits for the outcome of command id.
func (t *T) await(id uint64) driver.Outcome {
	o, err := t.drv.Await(id, t.Deadline)
	return t.drv.AcceptFor(&t.T, "host driver", id, o, err, "one outcome line per command"+t.Cite("HDR-001"), t.run.Verbose)
}

// deadlineMS is the exchange deadline given to the driver: long enough for a loaded machine,
// short against a worker that hangs.
const deadlineMS = 2000

// start asks the driver to start the worker behind a relay for a manifest of grants, with more
// start fields, and returns the relay once it reported; the start must succeed.
func (t *T) start(kind protocol.SessionKind, more map[string]any, grants ...protocol.CapabilityGrant) *relay {
	t.sessions++
	sid := fmt.Sprintf("iop-%s-%d", strings.ToLower(strings.ReplaceAll(t.sc.ID, "-", "")), t.sessions)
	m, err := protocol.NewCapabilityManifest(sid, grants)
	if err != nil {
		t.Internal(err)
	}
	cmd := slices.Concat(t.run.relay, []string{t.side.Sock, kind.String(), t.run.scope, "--"}, t.workerCommand())
	c := map[string]any{"op": "start", "command": cmd, "manifest": json.RawMessage(m.AppendJSON(nil)),
		"deadline_ms": deadlineMS, "scope": t.run.scope}
	if kind == protocol.CancellableSession {
		c["cancellable"] = true
	}
	for k, v := range more {
		c[k] = v
	}
	id := t.send(c)
	r := t.acceptRelay()
	if o := t.await(id); !o.OK {
		t.Failf("start answered with ok"+t.Cite("HDR-020"), string(o.Raw()))
	}
	return r
}

// workerCommand is the worker command with the scenario's placeholders substituted: one
// journal, effect log and scope per scenario, shared by its sessions.
func (t *T) workerCommand() []string {
	values := map[string]string{
		conformance.PlaceholderJournal:    filepath.Join(t.side.Dir, "journal.db"),
		conformance.PlaceholderEffects:    t.effectsPath(),
		conformance.PlaceholderScope:      t.run.scope,
		conformance.PlaceholderStoreFault: filepath.Join(t.side.Dir, "no-store-fault"),
		// A worker that takes its storage key from a file gets the public test key of the
		// scenario, and the secret source is never created.
		conformance.PlaceholderStorageKey:   t.storageKeyFile(),
		conformance.PlaceholderSecretSource: filepath.Join(t.side.Dir, "no-secret-source"),
	}
	out := make([]string, len(t.pair.Worker.Command))
	for i, a := range t.pair.Worker.Command {
		for p, v := range values {
			a = strings.ReplaceAll(a, p, v)
		}
		out[i] = a
	}
	return out
}

// storageKeyFile writes the scenario's storage key file, once, and returns its path: 64 hex
// digits of a key that protects nothing.
func (t *T) storageKeyFile() string {
	path := filepath.Join(t.side.Dir, "storage-key")
	if _, err := os.Stat(path); err != nil {
		_ = os.WriteFile(path, []byte(strings.Repeat("5a", 32)+"\n"), 0o600)
	}
	return path
}

func (t *T) effectsPath() string { return filepath.Join(t.side.Dir, "effects.jsonl") }

// acceptRelay waits for the next relay to connect and report.
func (t *T) acceptRelay() *relay {
	var conn net.Conn
	select {
	case conn = <-t.side.Conns:
	case <-time.After(time.Until(t.Deadline)):
		t.Failf("the host starts the relay as the worker"+t.Cite("HDR-020"), "no relay within the time limit")
	}
	r := &relay{t: t, index: len(t.relays) + 1, conn: conn, enc: json.NewEncoder(conn), changed: make(chan struct{})}
	t.relays = append(t.relays, r)
	go r.read()
	r.waitFor("the relay's report", func() bool { return r.hello != nil || r.done })
	if r.hello == nil {
		t.Failf("the relay's report", "the relay ended without one")
	}
	if r.errText != "" {
		t.Failf("a running worker behind the relay", r.errText)
	}
	t.Logf("relay %d: pid %d, worker pid %d, session %s", r.index, r.hello.Pid, r.hello.WorkerPid, r.hello.Session)
	return r
}

// relay is the runner's side of one relay process.
type relay struct {
	t     *T
	index int
	conn  net.Conn
	enc   *json.Encoder

	mu      sync.Mutex
	changed chan struct{} // closed and replaced at every event
	hello   *relayHello
	records []Record
	lines   map[Side]int // lines judged per side
	byType  map[string]int
	devs    []Deviation
	ended   map[Side]bool
	cut     bool
	dropped bool // the relay kept a host line from the worker (relayOrder.Drop)
	armed   int  // orders (cut or drop) the relay acknowledged
	exit    *int
	signal  string
	diag    string
	// unanswered is the number of the host's requests awaiting an answer after the last line.
	unanswered int
	// hazards counts the host's lines with a number another build reads differently.
	hazards int
	// keys are the keys of the host's durable requests, by message type, in order.
	keys    map[string][]string
	errText string
	done    bool // the side channel ended
}

// read collects the relay's events until its side channel ends.
func (r *relay) read() {
	dec := json.NewDecoder(bufio.NewReader(r.conn))
	for {
		var ev relayEvent
		err := dec.Decode(&ev)
		r.mu.Lock()
		if err != nil {
			r.done = true
		} else {
			r.apply(ev)
		}
		close(r.changed)
		r.changed = make(chan struct{})
		r.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// apply records one event; r.mu is held.
func (r *relay) apply(ev relayEvent) {
	if r.lines == nil {
		r.lines, r.byType, r.ended = map[Side]int{}, map[string]int{}, map[Side]bool{}
	}
	switch {
	case ev.Hello != nil:
		r.hello = ev.Hello
		r.errText = ev.Error
	case ev.Record != nil:
		rec := *ev.Record
		r.lines[rec.Side]++
		r.byType[string(rec.Side)+" "+rec.Type]++
		r.devs = append(r.devs, rec.Deviations...)
		r.unanswered = rec.Unanswered
		if rec.Side == HostSide && rec.Key != "" {
			if r.keys == nil {
				r.keys = map[string][]string{}
			}
			r.keys[rec.Type] = append(r.keys[rec.Type], rec.Key)
		}
		if slices.ContainsFunc(rec.Deviations, func(d Deviation) bool { return d.Hazard }) {
			r.hazards++
		}
		if len(r.records) < maxRecords {
			r.records = append(r.records, rec)
		}
	case ev.Stream != nil:
		r.devs = append(r.devs, *ev.Stream)
	case ev.Ended != "":
		r.ended[ev.Ended] = true
	case ev.Cut:
		r.cut = true
	case ev.Dropped:
		r.dropped = true
	case ev.Armed:
		r.armed++
	case ev.Exit != nil:
		r.exit, r.signal, r.diag = ev.Exit, ev.Signal, ev.Diagnostic
	case ev.Error != "":
		r.errText = ev.Error
	}
}

// waitFor waits until cond (called with r.mu held) holds or the scenario's deadline passes.
func (r *relay) waitFor(what string, cond func() bool) {
	for {
		r.mu.Lock()
		ok, ch := cond(), r.changed
		r.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-time.After(time.Until(r.t.Deadline)):
			r.t.End(conformance.Timeout, "waiting for "+what+": the time limit passed")
		}
	}
}

// settle waits until cond (called with r.mu held) holds or d passes, and does not fail: the
// relay's report of a line can trail the driver's outcome of the exchange it carried.
func (r *relay) settle(d time.Duration, cond func() bool) {
	until := time.Now().Add(d)
	for {
		r.mu.Lock()
		ok, ch := cond() || r.done, r.changed
		r.mu.Unlock()
		if ok || time.Now().After(until) {
			return
		}
		select {
		case <-ch:
		case <-time.After(time.Until(until)):
		}
	}
}

// count returns how many lines of side carried a message of type typ.
func (r *relay) count(side Side, typ protocol.MessageType) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byType[string(side)+" "+string(typ)]
}

// keysOf returns the keys of the host's requests of type typ, in order.
func (r *relay) keysOf(typ protocol.MessageType) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.keys[string(typ)])
}

// waitLines waits until the relay judged n lines of side with message typ.
func (r *relay) waitLines(side Side, typ protocol.MessageType, n int) {
	r.waitFor(fmt.Sprintf("%d %s %s line(s)", n, side, typ), func() bool {
		return r.byType[string(side)+" "+string(typ)] >= n
	})
}

// exitStatus waits for the worker's exit status as the relay saw it (-1: killed by a signal).
func (r *relay) exitStatus() int {
	r.waitFor("the worker's exit", func() bool { return r.exit != nil || r.done })
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.exit == nil {
		r.t.Failf("the worker's exit status from the relay", "the relay ended without one")
	}
	return *r.exit
}

// order sends an instruction to the relay.
func (r *relay) order(o relayOrder) {
	if err := r.enc.Encode(o); err != nil {
		r.t.Internal(err)
	}
}

// stop kills the relay's process group (the relay and its worker) and hangs up.
func (r *relay) stop() {
	r.mu.Lock()
	h := r.hello
	r.mu.Unlock()
	if h != nil && h.Pgid > 1 && h.Pgid != syscall.Getpgrp() {
		_ = childproc.KillGroup(h.Pgid)
	}
	if h != nil {
		_ = childproc.Kill(h.WorkerPid)
	}
	_ = r.conn.Close()
}

// teardown kills every relay's process group and the driver's, and removes the scenario's
// directory; it is bounded (IOP-006).
func (t *T) teardown() {
	for _, r := range t.relays {
		r.stop()
	}
	if t.drv != nil {
		t.drv.Kill()
	}
	t.side.Close()
}
