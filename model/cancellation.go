package model

import (
	"fmt"
	"slices"
	"strings"
)

// This file models the worker's cancellable driver (chapter 14) as a pure state machine, and
// composes it with the host's multiplexed transport (the Multiplex model, chapter 22) over two
// FIFO channels into one closed system: the host starts and cancels invocations, frames travel
// in both directions, the adapter completes, acknowledges or fails whenever it runs, and one
// frame may be corrupted in transit. Exploring it covers every interleaving of a cancel with a
// result, an acknowledgement with a fatal error, and a close with the last answer.

// Driver phases.
const (
	DriverIdle     = "idle"     // Idle(Last)
	DriverActive   = "active"   // Active(Active, Cancel)
	DriverStopping = "stopping" // fatal; the token is set and the driver waits for the adapter
	DriverStopped  = "stopped"  // fatal; Run returned its error
	DriverClosed   = "closed"   // close_session accepted; Run returned nil
)

// Kinds of CancelFrame.
const (
	FrameInvoke             = "invoke"
	FrameCancel             = "cancel"
	FrameClose              = "close_session"
	FrameTampered           = "tampered" // a host frame corrupted in transit: its tag fails
	FrameResult             = "result"
	FrameCancellationResult = "cancellation_result"
)

// Adapter behaviours of the driver model.
const (
	AdapterComplete    = "complete"    // returns a payload
	AdapterAcknowledge = "acknowledge" // returns acknowledged
	AdapterFail        = "fail"        // returns an adapter error
)

// CancelFrame is one abstract frame on a channel.
type CancelFrame struct {
	Kind           string
	RequestID      string
	CancellationID string
	Outcome        string // of a cancellation_result
	// Forged marks a frame a hostile peer wrote, not the driver.
	Forged bool
}

// String renders the frame.
func (f CancelFrame) String() string {
	switch f.Kind {
	case FrameInvoke, FrameResult:
		return f.Kind + "(" + f.RequestID + ")"
	case FrameCancel:
		return "cancel(" + f.CancellationID + "->" + f.RequestID + ")"
	case FrameCancellationResult:
		return "cancellation_result(" + f.CancellationID + "->" + f.RequestID + " " + f.Outcome + ")"
	}
	return f.Kind
}

// Driver is the state of the cancellable driver model. Ids are small strings ("r1", "c1").
type Driver struct {
	Phase string
	// Last is X of Idle(X): the latest invocation that produced a result, or "".
	Last string
	// Active and Cancel are I and c of Active(I, c).
	Active, Cancel string
	// Token reports whether the active invocation's token is set; Running whether an adapter
	// call is in progress; Permit whether the reader holds a read permit.
	Token, Running, Permit bool
	// Reserved lists every id the worker authorizer reserved; Cancelled every target with an
	// authorized cancellation (both sorted).
	Reserved, Cancelled []string
	Calls, MaxCalls     int
	// Err is the fatal error.
	Err string
}

// NewDriver returns a driver model that just started: Idle(none), holding its first permit.
func NewDriver(maxCalls int) Driver {
	return Driver{Phase: DriverIdle, Permit: true, MaxCalls: maxCalls}
}

// Key is a canonical encoding of the driver state.
func (d Driver) Key() string {
	return fmt.Sprintf("%s/%s/%s/%s/%t%t%t/%s/%s/%d/%s", d.Phase, d.Last, d.Active, d.Cancel, d.Token, d.Running, d.Permit,
		strings.Join(d.Reserved, ","), strings.Join(d.Cancelled, ","), d.Calls, d.Err)
}

// Reads reports whether the driver reads its next frame now (CAN-003).
func (d Driver) Reads() bool {
	return d.Permit && (d.Phase == DriverIdle || d.Phase == DriverActive)
}

func addSorted(s []string, v string) []string {
	out := append(slices.Clone(s), v)
	slices.Sort(out)
	return out
}

// fatal stops the driver; with an adapter running it sets the token and waits (CAN-019).
func (d Driver) fatal(err string) Driver {
	d.Err, d.Permit = err, false
	if d.Running {
		d.Phase, d.Token = DriverStopping, true
	} else {
		d.Phase = DriverStopped
	}
	return d
}

// authorizeCancel is the worker authorizer's check of a cancel against target (chapter 11):
// "" or the refusal.
func (d Driver) authorizeCancel(f CancelFrame, target string) string {
	switch {
	case f.RequestID != target:
		return "Protocol:CancellationTargetMismatch"
	case f.CancellationID == f.RequestID:
		return "Protocol:CancellationIdMatchesRequest"
	case slices.Contains(d.Cancelled, target):
		return "Protocol:CancellationAlreadyRequested"
	case slices.Contains(d.Reserved, f.CancellationID):
		return "Protocol:DuplicateRequest"
	}
	return ""
}

// Frame is the driver reading one frame; it returns the new state and the frames it writes.
// The driver must be reading (Reads).
func (d Driver) Frame(f CancelFrame) (Driver, []CancelFrame) {
	d.Permit = false // the read consumes the permit
	switch f.Kind {
	case FrameTampered:
		return d.fatal("Protocol:InvalidAuthenticationTag"), nil // CAN-013
	case FrameInvoke:
		switch {
		case d.Phase == DriverActive:
			return d.fatal("UnexpectedMessage:invoke"), nil // CAN-005
		case slices.Contains(d.Reserved, f.RequestID):
			return d.fatal("Protocol:DuplicateRequest"), nil
		case d.Calls >= d.MaxCalls:
			return d.fatal("Protocol:CallBudgetExhausted"), nil
		}
		d.Reserved, d.Calls = addSorted(d.Reserved, f.RequestID), d.Calls+1
		d.Phase, d.Active, d.Cancel, d.Token, d.Running, d.Permit = DriverActive, f.RequestID, "", false, true, true // CAN-004
		return d, nil
	case FrameCancel:
		switch {
		case d.Phase == DriverActive:
			if e := d.authorizeCancel(f, d.Active); e != "" {
				return d.fatal(e), nil
			}
			// CAN-006: the token only after authorization; no permit.
			d.Reserved, d.Cancelled = addSorted(d.Reserved, f.CancellationID), addSorted(d.Cancelled, f.RequestID)
			d.Cancel, d.Token = f.CancellationID, true
			return d, nil
		case d.Last != "":
			if e := d.authorizeCancel(f, d.Last); e != "" {
				return d.fatal(e), nil
			}
			d.Reserved, d.Cancelled = addSorted(d.Reserved, f.CancellationID), addSorted(d.Cancelled, f.RequestID)
			d.Permit = true // CAN-007
			return d, []CancelFrame{{Kind: FrameCancellationResult, RequestID: f.RequestID, CancellationID: f.CancellationID, Outcome: MuxTooLate}}
		}
		return d.fatal("CancellationWithoutTarget"), nil // CAN-008
	case FrameClose:
		if d.Phase == DriverActive {
			return d.fatal("CloseWhileInvocationActive"), nil // CAN-010
		}
		d.Phase = DriverClosed // CAN-009
		return d, nil
	}
	return d.fatal("UnexpectedMessage:" + f.Kind), nil // CAN-011
}

// Adapter is the running adapter call returning with behaviour b (one of the Adapter
// constants); it returns the new state and the frames written.
func (d Driver) Adapter(b string) (Driver, []CancelFrame) {
	d.Running = false
	if d.Phase == DriverStopping {
		d.Phase = DriverStopped // CAN-019: the fatal error is returned only now
		return d, nil
	}
	id, c := d.Active, d.Cancel
	d.Active, d.Cancel, d.Token = "", "", false
	switch b {
	case AdapterFail:
		return d.fatal("Adapter"), nil // CAN-018
	case AdapterAcknowledge:
		if c == "" {
			return d.fatal("UnrequestedAcknowledgement"), nil // CAN-017
		}
		d.Phase, d.Last, d.Permit = DriverIdle, "", true // CAN-016
		return d, []CancelFrame{{Kind: FrameCancellationResult, RequestID: id, CancellationID: c, Outcome: MuxAcknowledged}}
	}
	d.Phase, d.Last = DriverIdle, id
	out := []CancelFrame{{Kind: FrameResult, RequestID: id}}
	if c != "" { // CAN-015
		d.Permit = true
		out = append(out, CancelFrame{Kind: FrameCancellationResult, RequestID: id, CancellationID: c, Outcome: MuxTooLate})
	}
	return d, out // CAN-014: the permit issued at the start is still outstanding
}

// Actors of CancelAction.
const (
	ActorHost    = "host"    // a host command on the multiplexed transport
	ActorWorker  = "worker"  // the driver reads the next host frame
	ActorAdapter = "adapter" // the running adapter returns
	ActorNet     = "net"     // the host reads the next worker frame, or the end of the stream
	ActorPeer    = "peer"    // a hostile peer writes a frame no correct worker writes
)

// CancelAction is one transition of the cancellation system. The fields after Kind are the
// model's prediction: what the host sent, the host's events, the frames the worker wrote.
type CancelAction struct {
	Actor string
	// Kind is a MuxStep kind for the host and the net, a frame kind for the worker (FrameTampered
	// when the frame was corrupted in transit), an Adapter behaviour for the adapter.
	Kind           string
	RequestID      string
	CancellationID string
	// Forged: the host read a frame a hostile peer wrote.
	Forged bool

	Sent    string
	Events  []string
	Written []CancelFrame
	// Err is the fatal error the step gave the driver (the driver's Err), or "".
	Err string
}

// Input is the action without its predicted outcome.
func (a CancelAction) Input() string {
	return a.Actor + " " + a.Kind + " " + a.RequestID + " " + a.CancellationID
}

// String renders the action and its outcome.
func (a CancelAction) String() string {
	s := a.Actor + " " + a.Kind
	if a.RequestID != "" {
		s += " " + a.RequestID
	}
	if a.CancellationID != "" {
		s += " " + a.CancellationID
	}
	if a.Sent != "" {
		s += " => sent " + a.Sent
	}
	if len(a.Events) > 0 {
		s += " => events " + strings.Join(a.Events, ", ")
	}
	if len(a.Written) > 0 {
		s += " => wrote " + fmt.Sprint(a.Written)
	}
	if a.Err != "" {
		s += " => fatal " + a.Err
	}
	return s
}

// CancelState is one state of the composed system.
type CancelState struct {
	Host     *Multiplex
	Worker   Driver
	ToWorker []CancelFrame
	ToHost   []CancelFrame
	// EndSeen reports whether the host read the end of the worker's stream.
	EndSeen bool
	// Started, Tampered and Forged count host invocations, corrupted frames and frames of a
	// hostile peer so far; ForgedRead is set once the host read a forged frame.
	Started, Tampered, Forged int
	ForgedRead                bool
	// History of the run, for the invariants: request ids the worker answered with a result,
	// with an acknowledgement; targets the host sent a cancel for; invocations resolved at the
	// host.
	Resulted, Acked, CancelSent, Resolved []string
}

// Cancellation configures the composed system: at most Invocations invocations, at most
// Tampers corrupted host frames, and at most Hostile frames of a hostile peer that holds the
// session key: on the worker's stream a duplicate of a result or an acknowledgement nobody
// requested; on the host's stream, once the driver is idle after acknowledging a cancellation,
// a second cancel of that invocation, which the driver must refuse as a cancel without a
// target (CAN-008, CAN-016). With FaultyAdapter the adapter may also acknowledge a
// cancellation nobody requested, which the driver must refuse as fatal (CAN-017).
type Cancellation struct {
	Invocations, Tampers, Hostile int
	FaultyAdapter                 bool
}

// Kinds of a hostile peer's frames.
const (
	PeerDuplicateResult = "duplicate_result" // a result for a request already answered
	PeerUnrequestedAck  = "unrequested_ack"  // an acknowledgement for a cancellation never sent
	PeerForgedCancel    = "forged_cancel"    // a host frame: a second cancel of an acknowledged invocation
)

// CancelTool is the one granted tool of the cancellation system.
const CancelTool = "work.run"

// Initial returns the initial state: the session is open on both sides.
func (c Cancellation) Initial() CancelState {
	return CancelState{Host: NewMultiplex(CancelTool, c.Invocations), Worker: NewDriver(c.Invocations)}
}

// Key is the canonical encoding of a state.
func (c Cancellation) Key(s CancelState) string {
	return fmt.Sprintf("%s#%s#%v#%v#%t%d%d%d%t#%v#%v#%v#%v", s.Host.Key(), s.Worker.Key(), s.ToWorker, s.ToHost, s.EndSeen,
		s.Started, s.Tampered, s.Forged, s.ForgedRead, s.Resulted, s.Acked, s.CancelSent, s.Resolved)
}

// Describe renders a state for a counterexample.
func (c Cancellation) Describe(s CancelState) string {
	active, cancel := s.Host.Active()
	w := s.Worker
	return fmt.Sprintf("host %s(%s,%s) | to worker %v | worker %s last=%q active=%q cancel=%q token=%t adapter=%t permit=%t err=%q | to host %v",
		s.Host.Phase, active, cancel, s.ToWorker, w.Phase, w.Last, w.Active, w.Cancel, w.Token, w.Running, w.Permit, w.Err, s.ToHost)
}

func (s CancelState) clone() CancelState {
	s.Host = s.Host.Clone()
	s.ToWorker, s.ToHost = slices.Clone(s.ToWorker), slices.Clone(s.ToHost)
	return s
}

// written records the worker's frames in the history and on the channel.
func (s *CancelState) written(frames []CancelFrame) {
	for _, f := range frames {
		s.ToHost = append(s.ToHost, f)
		switch {
		case f.Kind == FrameResult:
			s.Resulted = addSorted(s.Resulted, f.RequestID)
		case f.Outcome == MuxAcknowledged:
			s.Acked = addSorted(s.Acked, f.RequestID)
		}
	}
}

func (s *CancelState) resolved(events []string) {
	for _, e := range events {
		if id, ok := eventInvocation(e); ok {
			s.Resolved = addSorted(s.Resolved, id)
		}
	}
}

// eventInvocation returns the request id an invocation event resolves ("invocation:completed:r1").
func eventInvocation(e string) (string, bool) {
	parts := strings.SplitN(e, ":", 3)
	if len(parts) == 3 && parts[0] == "invocation" && (parts[1] == "completed" || parts[1] == "cancelled") {
		return parts[2], true
	}
	return "", false
}

// hostFrame is the worker-frame step of the host model for a frame.
func hostFrame(f CancelFrame) MuxStep {
	if f.Kind == FrameResult {
		return MuxStep{Kind: MuxStepResult, RequestID: f.RequestID}
	}
	return MuxStep{Kind: MuxStepCancellationResult, RequestID: f.RequestID, CancellationID: f.CancellationID,
		Tool: CancelTool, Outcome: f.Outcome}
}

// newFatal is the fatal error a step from one driver state to the next gave, or "".
func newFatal(from, to Driver) string {
	if from.Err == "" {
		return to.Err
	}
	return ""
}

// Next returns every transition enabled in s.
func (c Cancellation) Next(s CancelState) []Move[CancelState, CancelAction] {
	var out []Move[CancelState, CancelAction]
	host := func(step MuxStep, frame *CancelFrame) {
		n := s.clone()
		o := n.Host.Step(step)
		if o.Err != "" {
			return // a refused command changes nothing
		}
		a := CancelAction{Actor: ActorHost, Kind: step.Kind, RequestID: step.RequestID, CancellationID: step.CancellationID,
			Sent: o.Sent, Events: o.Events}
		n.resolved(o.Events)
		if frame != nil {
			n.ToWorker = append(n.ToWorker, *frame)
		}
		switch step.Kind {
		case MuxStepStart:
			n.Started++
		case MuxStepCancel:
			n.CancelSent = addSorted(n.CancelSent, step.RequestID)
		}
		out = append(out, Move[CancelState, CancelAction]{Action: a, Next: n})
	}
	// Host commands.
	if s.Host.Phase == MuxIdle && s.Started < c.Invocations {
		id := fmt.Sprintf("r%d", s.Started+1)
		host(MuxStep{Kind: MuxStepStart, RequestID: id}, &CancelFrame{Kind: FrameInvoke, RequestID: id})
	}
	if active, _ := s.Host.Active(); s.Host.Phase == MuxActive && !s.Host.Requested(active) {
		cid := fmt.Sprintf("c%d", len(s.CancelSent)+1)
		host(MuxStep{Kind: MuxStepCancel, RequestID: active, CancellationID: cid},
			&CancelFrame{Kind: FrameCancel, RequestID: active, CancellationID: cid})
	}
	if s.Host.Phase == MuxIdle {
		host(MuxStep{Kind: MuxStepClose}, &CancelFrame{Kind: FrameClose})
	}
	// The worker reads the next host frame, intact or corrupted.
	if s.Worker.Reads() && len(s.ToWorker) > 0 {
		for _, tamper := range []bool{false, true} {
			if tamper && s.Tampered >= c.Tampers {
				continue
			}
			n := s.clone()
			f := n.ToWorker[0]
			n.ToWorker = n.ToWorker[1:]
			kind := f.Kind
			if tamper {
				n.Tampered++
				kind, f = FrameTampered, CancelFrame{Kind: FrameTampered}
			}
			var w []CancelFrame
			n.Worker, w = n.Worker.Frame(f)
			n.written(w)
			out = append(out, Move[CancelState, CancelAction]{
				Action: CancelAction{Actor: ActorWorker, Kind: kind, RequestID: f.RequestID, CancellationID: f.CancellationID, Written: w,
					Err: newFatal(s.Worker, n.Worker)},
				Next: n})
		}
	}
	// The adapter returns.
	if s.Worker.Running {
		for _, b := range []string{AdapterComplete, AdapterAcknowledge, AdapterFail} {
			if b == AdapterAcknowledge && !s.Worker.Token && !c.FaultyAdapter {
				continue // CAN-020: a correct adapter acknowledges only a requested cancellation
			}
			n := s.clone()
			var w []CancelFrame
			n.Worker, w = n.Worker.Adapter(b)
			n.written(w)
			out = append(out, Move[CancelState, CancelAction]{Action: CancelAction{Actor: ActorAdapter, Kind: b, Written: w,
				Err: newFatal(s.Worker, n.Worker)}, Next: n})
		}
	}
	// A hostile peer writes a frame no correct worker writes.
	if s.Forged < c.Hostile && !s.Host.terminal() {
		forge := func(kind string, f CancelFrame) {
			n := s.clone()
			n.Forged++
			f.Forged = true
			n.ToHost = append(n.ToHost, f)
			out = append(out, Move[CancelState, CancelAction]{Action: CancelAction{Actor: ActorPeer, Kind: kind,
				RequestID: f.RequestID, CancellationID: f.CancellationID}, Next: n})
		}
		if len(s.Resulted) > 0 {
			id := s.Resulted[len(s.Resulted)-1]
			forge(PeerDuplicateResult, CancelFrame{Kind: FrameResult, RequestID: id})
		}
		if active, _ := s.Host.Active(); active != "" && !slices.Contains(s.CancelSent, active) {
			forge(PeerUnrequestedAck, CancelFrame{Kind: FrameCancellationResult, RequestID: active, CancellationID: "c0",
				Outcome: MuxAcknowledged})
		}
		last := fmt.Sprintf("r%d", s.Started)
		if w := s.Worker; w.Phase == DriverIdle && w.Last == "" && len(s.ToWorker) == 0 && slices.Contains(s.Acked, last) {
			n := s.clone()
			n.Forged++
			n.ToWorker = append(n.ToWorker, CancelFrame{Kind: FrameCancel, RequestID: last, CancellationID: "c0", Forged: true})
			out = append(out, Move[CancelState, CancelAction]{Action: CancelAction{Actor: ActorPeer, Kind: PeerForgedCancel,
				RequestID: last, CancellationID: "c0"}, Next: n})
		}
	}
	// The host reads the next worker frame, or the end of the stream once the worker is gone.
	if len(s.ToHost) > 0 {
		n := s.clone()
		f := n.ToHost[0]
		n.ToHost = n.ToHost[1:]
		step := hostFrame(f)
		o := n.Host.Step(step)
		n.resolved(o.Events)
		n.ForgedRead = n.ForgedRead || f.Forged
		out = append(out, Move[CancelState, CancelAction]{
			Action: CancelAction{Actor: ActorNet, Kind: step.Kind, RequestID: f.RequestID, CancellationID: f.CancellationID,
				Forged: f.Forged, Events: o.Events},
			Next: n})
	} else if !s.EndSeen && (s.Worker.Phase == DriverStopped || s.Worker.Phase == DriverClosed) {
		n := s.clone()
		n.EndSeen = true
		o := n.Host.Step(MuxStep{Kind: MuxStepEnd})
		n.resolved(o.Events)
		out = append(out, Move[CancelState, CancelAction]{Action: CancelAction{Actor: ActorNet, Kind: MuxStepEnd, Events: o.Events}, Next: n})
	}
	return out
}

// String names the system and its bound.
func (c Cancellation) String() string {
	s := fmt.Sprintf("cancellation(invocations=%d tampers=%d hostile=%d", c.Invocations, c.Tampers, c.Hostile)
	if c.FaultyAdapter {
		s += " faulty-adapter"
	}
	return s + ")"
}

// System returns the explorable system with its invariants.
func (c Cancellation) System() System[CancelState, CancelAction] {
	return System[CancelState, CancelAction]{
		Name:       c.String(),
		Init:       []CancelState{c.Initial()},
		Next:       c.Next,
		Key:        c.Key,
		Describe:   c.Describe,
		Invariants: CancellationInvariants(),
	}
}

// answeredTwice reports whether a's frames give request id a second kind of answer: a result
// after an acknowledgement (second false) or an acknowledgement after a result (second true),
// counting the frames of a in order.
func answeredTwice(from CancelState, a CancelAction, ackSecond bool) bool {
	resulted, acked := slices.Clone(from.Resulted), slices.Clone(from.Acked)
	for _, f := range a.Written {
		switch {
		case f.Kind == FrameResult:
			if !ackSecond && slices.Contains(acked, f.RequestID) {
				return true
			}
			resulted = append(resulted, f.RequestID)
		case f.Outcome == MuxAcknowledged:
			if ackSecond && slices.Contains(resulted, f.RequestID) {
				return true
			}
			acked = append(acked, f.RequestID)
		}
	}
	return false
}

// CancellationInvariants are the safety properties of the composed cancellation system.
func CancellationInvariants() []Invariant[CancelState, CancelAction] {
	return []Invariant[CancelState, CancelAction]{
		{
			Name: "never a result after an acknowledgement", Spec: "CAN-016, CAN-020, TRN-062",
			Step: func(from CancelState, a CancelAction, _ CancelState) bool { return !answeredTwice(from, a, false) },
		},
		{
			Name: "never an acknowledgement after a result", Spec: "CAN-015, CAN-016, TRN-053",
			Step: func(from CancelState, a CancelAction, _ CancelState) bool { return !answeredTwice(from, a, true) },
		},
		{
			Name: "at most one cancel per target", Spec: "CAN-012, TRN-042",
			Step: func(from CancelState, a CancelAction, _ CancelState) bool {
				return !(a.Actor == ActorHost && a.Kind == MuxStepCancel && slices.Contains(from.CancelSent, a.RequestID))
			},
		},
		{
			Name: "the token is set only after the cancel was authorized, or to stop", Spec: "CAN-006, CAN-019",
			State: func(s CancelState) bool {
				w := s.Worker
				return !w.Token || w.Phase == DriverStopping || w.Phase == DriverStopped || w.Cancel != "" && slices.Contains(w.Cancelled, w.Active)
			},
		},
		{
			Name: "a fatal error waits for the adapter", Spec: "CAN-019, CAN-024",
			State: func(s CancelState) bool {
				return !s.Worker.Running || s.Worker.Phase == DriverActive || s.Worker.Phase == DriverStopping
			},
		},
		{
			Name: "nothing is written after a fatal error", Spec: "CAN-019, WRK-091",
			Step: func(from CancelState, a CancelAction, _ CancelState) bool {
				p := from.Worker.Phase
				return len(a.Written) == 0 || p == DriverIdle || p == DriverActive
			},
		},
		{
			Name: "the host sees no protocol violation from a correct worker", Spec: "TRN-051, TRN-052, TRN-053, TRN-057, CAN-014, CAN-015",
			Step: func(_ CancelState, a CancelAction, _ CancelState) bool {
				if a.Forged {
					return true
				}
				for _, e := range a.Events {
					if strings.Contains(e, ":error:Protocol:") || strings.Contains(e, ":error:UnexpectedMessage:") && !strings.HasSuffix(e, "end of worker stream") {
						return false
					}
				}
				return true
			},
		},
		{
			Name: "the host takes no forged frame as an answer: it stops", Spec: "TRN-055, TRN-056, TRN-057, TRN-061",
			Step: func(from CancelState, a CancelAction, to CancelState) bool {
				if !a.Forged || from.Host.terminal() {
					return true
				}
				for _, e := range a.Events {
					if !strings.Contains(e, ":error:") {
						return false
					}
				}
				return to.Host.Phase == MuxStopped
			},
		},
		{
			// After a hostile peer stopped the host, the host terminates the worker, which may
			// be left waiting for input.
			Name: "a run ends only with both sides finished", Spec: "CAN-009, CAN-019, TRN-059, TRN-061",
			Final: func(s CancelState) bool {
				h, w := s.Host.Phase, s.Worker.Phase
				if s.ForgedRead && h == MuxStopped {
					return true
				}
				return (h == MuxClosed || h == MuxStopped) && (w == DriverClosed || w == DriverStopped) &&
					!s.Worker.Running && len(s.ToHost) == 0
			},
		},
		{
			Name: "an invocation resolves at most once", Spec: "TRN-050, TRN-052, TRN-053, TRN-061",
			Step: func(from CancelState, a CancelAction, _ CancelState) bool {
				for _, e := range a.Events {
					if id, ok := eventInvocation(e); ok && slices.Contains(from.Resolved, id) {
						return false
					}
				}
				return true
			},
		},
	}
}
