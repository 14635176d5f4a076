package interop

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/spec"
)

// Implementation is one host or worker of the interop matrix (docs/interop.md).
type Implementation struct {
	// Name names the implementation in the matrix.
	Name string `json:"name"`
	// Command is the host driver command, or the worker command with the worker suite's
	// placeholders ({journal}, {effects}, {scope}).
	Command []string `json:"command"`
	// Features a worker offers: "durable", "compensation", "cancel" (a worker without the
	// {journal} and {effects} placeholders offers neither "journal" nor "effects"). A host's
	// features are what its driver declares in hello; a list here restricts them.
	Features []string `json:"features,omitempty"`
	// Numbers is the number model: "preserve" (keeps number text) or "lossy" (binary numbers,
	// like a standalone worker build of the reference).
	Numbers string `json:"numbers"`
	// Notes is shown with the implementation.
	Notes string `json:"notes,omitempty"`
}

// Worker features (IOP-008).
const (
	NeedDurable      = "durable"
	NeedCompensation = "compensation"
	NeedCancel       = "cancel"
	NeedJournal      = "journal"
	NeedEffects      = "effects"
)

// Number models.
const (
	NumbersPreserve = "preserve"
	NumbersLossy    = "lossy"
)

// offers reports whether a worker offers need: journal and effects by their placeholders,
// the others by Features.
func (w Implementation) offers(need conformance.Need) bool {
	switch need {
	case NeedJournal:
		return conformance.WorkerCommand(w.Command).Has(conformance.PlaceholderJournal)
	case NeedEffects:
		return conformance.WorkerCommand(w.Command).Has(conformance.PlaceholderEffects)
	}
	return slices.Contains(w.Features, string(need))
}

// Pair is one cell of the matrix: a host driver and a worker.
type Pair struct {
	Host, Worker Implementation
}

// Config describes one interop run of a pair.
type Config struct {
	// RunConfig holds what every suite's configuration holds (Run selects scenarios); an
	// empty TempDir means os.TempDir(), a zero Timeout DefaultTimeout.
	conformance.RunConfig
	// Pair is the host and the worker.
	Pair Pair
	// Relay is the command that runs the relay (the runner appends its arguments); nil means
	// this executable with the argument "relay".
	Relay []string
	// Scope is the worker's journal scope; empty means DefaultScope.
	Scope string
}

// DefaultTimeout is the time limit of one scenario.
const DefaultTimeout = 20 * time.Second

// DefaultScope is the worker's journal scope in the scenarios: not the reference worker's
// default, so that a host that ignores the scope given in start is seen (HDR-043).
const DefaultScope = "iop-tenant"

// runState is what every scenario of one run shares.
type runState struct {
	conformance.RunEnv
	relay []string
	scope string
}

// Run runs the selected scenarios on the pair and returns the report (IOP-005).
func Run(ctx context.Context, cfg Config) (*conformance.Report, error) {
	if len(cfg.Pair.Host.Command) == 0 || len(cfg.Pair.Worker.Command) == 0 {
		return nil, errors.New("the pair needs a host driver command and a worker command")
	}
	scenarios, err := Catalog().Pick(cfg.Run, "scenario")
	if err != nil {
		return nil, err
	}
	relay, err := conformance.OrSelf(cfg.Relay, RelayCommand)
	if err != nil {
		return nil, err
	}
	opts, cleanup, err := cfg.Options(DefaultTimeout, "", "iop-", false)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	st := &runState{RunEnv: opts.RunEnv, relay: relay, scope: cmp.Or(cfg.Scope, DefaultScope)}
	started := time.Now()
	done, err := conformance.RunChecks(ctx, scenarios, opts, func(sc *Scenario, _ time.Time) *T {
		return &T{sc: sc, pair: &cfg.Pair, run: st, T: conformance.T{Keep: maxTranscript}}
	})
	if err != nil {
		return nil, err
	}
	peer := slices.Concat(cfg.Pair.Host.Command, []string{"×"}, cfg.Pair.Worker.Command)
	return conformance.NewReport(Suite(), peer, false, started, done), ctx.Err()
}

// Close collects what every relay saw, tears the scenario down and judges it at both ends and
// on the wire (IOP-002, IOP-005); a passing scenario that met a documented hazard is INFO.
func (t *T) Close() {
	ev := t.evidence()
	t.teardown()
	t.judgeSides(ev)
	if t.Outcome == conformance.Pass && t.hazard != "" {
		t.Outcome, t.Detail = conformance.Info, "documented hazard: "+t.hazard
	}
}

// Keep adds the scenario's and the relays' transcript and the driver's standard error to r
// when keep. An interop result lists no needs: the worker's are the pair's, not the report's.
func (t *T) Keep(r *conformance.Result, keep bool) {
	r.Needs = nil
	if keep {
		r.Transcript = t.fullTranscript()
		if t.drv != nil {
			r.Stderr, _ = t.drv.Texts()
		}
	}
}

// relayEvidence is what one relay saw of its session when the scenario ended, before the
// teardown killed anything.
type relayEvidence struct {
	index      int
	started    bool   // the relay reported, and its worker started
	startErr   string // why the worker command did not start
	devs       []Deviation
	exit       *int
	signal     string
	diag       string
	cut        bool
	unanswered int
	hazards    int
	gone       bool // the relay's side channel ended
}

// exitText is the worker's end as the relay saw it.
func (e relayEvidence) exitText() string {
	switch {
	case e.startErr != "":
		return "never started: " + e.startErr
	case e.exit == nil && e.cut:
		return "killed by the runner at its answer, status not reported"
	case e.exit == nil && e.gone:
		return "status unknown: the relay ended without reporting it"
	case e.exit == nil:
		return "still running when the scenario ended"
	case e.cut:
		return "killed by the runner at its answer"
	case e.signal != "":
		return "killed by signal " + e.signal
	}
	return fmt.Sprintf("exit status %d", *e.exit)
}

// exitGrace bounds how long a failed scenario waits for the relays' exit reports still on
// their way.
const exitGrace = 500 * time.Millisecond

// evidence collects what every relay saw. It waits, at most exitGrace in all, for the exit
// status of a worker whose relay is still reporting when the scenario failed.
func (t *T) evidence() []relayEvidence {
	failed := t.Outcome != conformance.Pass && t.Outcome != conformance.Skip
	until := time.Now().Add(exitGrace)
	var out []relayEvidence
	for _, r := range t.relays {
		for failed {
			r.mu.Lock()
			settled, ch := r.exit != nil || r.done || r.hello == nil, r.changed
			r.mu.Unlock()
			if settled {
				break
			}
			wait := time.Until(until)
			if wait <= 0 {
				break
			}
			select {
			case <-ch:
			case <-time.After(wait):
			}
		}
		r.mu.Lock()
		e := relayEvidence{index: r.index, started: r.hello != nil && r.errText == "", startErr: r.errText, devs: slices.Clone(r.devs),
			exit: r.exit, signal: r.signal, diag: r.diag, cut: r.cut, unanswered: r.unanswered, hazards: r.hazards, gone: r.done}
		r.mu.Unlock()
		out = append(out, e)
	}
	return out
}

// judgeSides gives a failing scenario its verdict from all the evidence, naming the side at
// fault (IOP-005): a frame that breaks a rule fails the scenario whatever the ends saw and
// blames the side that sent it; without one, a worker that did not start, ended the session
// with a failure status or left a request of the host unanswered is at fault; otherwise the
// host, whose driver reported the outcome the scenario refused. Every failing verdict shows
// each worker's end. Hazard deviations (non-portable numbers) are left to the number scenario.
func (t *T) judgeSides(ev []relayEvidence) {
	if t.Outcome == conformance.Skip {
		return
	}
	var devs []string
	blame := map[Side]bool{}
	for _, e := range ev {
		for _, d := range e.devs {
			if !d.Hazard {
				// The rule a deviation breaks is named here when the scenario lists it; the
				// transcript names it always (a verdict cites only its scenario's IDs).
				devs = append(devs, fmt.Sprintf("relay %d: %s line %d breaks a rule of its sender%s: %s", e.index, d.Side, d.Line, t.Cite(d.Rule), stripCitations(d.Detail)))
				blame[d.Side] = true
			}
		}
	}
	if len(devs) > 0 {
		var sides []string
		for _, s := range []Side{HostSide, WorkerSide} {
			if blame[s] {
				sides = append(sides, string(s))
			}
		}
		detail := fmt.Sprintf("on the wire (blame: %s): %s", strings.Join(sides, " and "), strings.Join(devs, "; "))
		if t.Outcome != conformance.Pass {
			detail += "; at the ends: " + t.Detail
		}
		t.Outcome, t.Detail = conformance.Fail, detail+"; "+workerEnds(ev)
		t.Expected, t.Actual = "every frame verifies and follows the rules of its sender"+t.Cite("IOP-002", "IOP-003", "IOP-005"), strings.Join(devs, "; ")
		return
	}
	if t.Outcome == conformance.Pass {
		return
	}
	side, why := blameAtTheEnds(ev, t.blameHint)
	t.Detail = fmt.Sprintf("at the ends (blame: %s): %s; %s; %s", side, why, t.Detail, workerEnds(ev))
}

// blameAtTheEnds names the side at fault of a failure no frame explains, and why.
func blameAtTheEnds(ev []relayEvidence, hint *blameHint) (Side, string) {
	if len(ev) == 0 {
		return HostSide, "the host driver never started the worker (no relay reported)"
	}
	for _, e := range ev {
		if e.startErr != "" {
			return WorkerSide, fmt.Sprintf("relay %d: the worker command did not start", e.index)
		}
	}
	if hint != nil {
		return hint.side, hint.why
	}
	for _, e := range ev {
		failed := e.exit != nil && (*e.exit != 0 || e.signal != "")
		switch {
		case e.cut:
		case failed && e.hazards == 0:
			return WorkerSide, fmt.Sprintf("relay %d: every frame of the host followed the rules, and the worker ended the session with %s%s",
				e.index, e.exitText(), diagnosticText(e.diag))
		case e.unanswered > 0:
			return WorkerSide, fmt.Sprintf("relay %d: every frame of the host followed the rules, and the worker left %d of its requests unanswered (%s)%s",
				e.index, e.unanswered, e.exitText(), diagnosticText(e.diag))
		}
	}
	return HostSide, "every frame followed the rules and the worker answered every request; the outcome the scenario refused is the host driver's"
}

// blameHint is a scenario's judgement of which side an end check's failure belongs to, when
// the frames alone cannot tell (a worker's effect log, a key the host had to deliver again). It
// outweighs a worker's failure status: a worker rightly refuses what its journal contradicts.
type blameHint struct {
	side Side
	why  string
}

// diagnosticText quotes the worker's diagnostic, if any.
func diagnosticText(d string) string {
	d = strings.TrimSpace(d)
	if d == "" {
		return ""
	}
	return "; its diagnostic: " + strconv.Quote(conformance.Clip(d, 400))
}

// workerEnds lists each worker's end: every failing verdict shows it.
func workerEnds(ev []relayEvidence) string {
	if len(ev) == 0 {
		return "worker: never started"
	}
	var parts []string
	for _, e := range ev {
		parts = append(parts, fmt.Sprintf("relay %d: %s", e.index, e.exitText()))
	}
	return "worker: " + strings.Join(parts, ", ")
}

// citedIDs finds a parenthesised list of requirement IDs, with the space before it.
var citedIDs = regexp.MustCompile(` \((?:` + spec.CitationPattern + `(?:, )?)+\)`)

// stripCitations removes the parenthesised requirement IDs from a deviation's detail for a
// verdict; the transcript keeps the detail whole.
func stripCitations(s string) string { return citedIDs.ReplaceAllString(s, "") }

// fullTranscript is the scenario's log followed by each relay's kept lines.
func (t *T) fullTranscript() []string {
	out := slices.Clone(t.Transcript)
	for _, r := range t.relays {
		r.mu.Lock()
		for _, rec := range r.records {
			line := fmt.Sprintf("relay %d: %s #%d %s %s", r.index, rec.Side, rec.Index, rec.Type, rec.Line)
			for _, d := range rec.Deviations {
				line += "\n    deviation: " + d.String()
			}
			out = append(out, line)
		}
		if n := r.lines[HostSide] + r.lines[WorkerSide]; n > len(r.records) {
			out = append(out, fmt.Sprintf("relay %d: %d more lines judged, not kept", r.index, n-len(r.records)))
		}
		r.mu.Unlock()
	}
	return out
}
