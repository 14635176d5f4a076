package host

import (
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/errkind"
)

// AuditOutcome is what one audit event records.
type AuditOutcome uint8

// The audit outcomes.
const (
	OutcomeAllowed AuditOutcome = iota + 1
	OutcomeDenied
	OutcomeFailed
	OutcomeCancelled
	OutcomeTimedOut
	OutcomeCancellationRequested
	OutcomeRetryScheduled
	OutcomeStreamed
	OutcomeStreamDenied
)

var outcomeNames = [...]string{
	OutcomeAllowed:               "allowed",
	OutcomeDenied:                "denied",
	OutcomeFailed:                "failed",
	OutcomeCancelled:             "cancelled",
	OutcomeTimedOut:              "timed_out",
	OutcomeCancellationRequested: "cancellation_requested",
	OutcomeRetryScheduled:        "retry_scheduled",
	OutcomeStreamed:              "streamed",
	OutcomeStreamDenied:          "stream_denied",
}

// String returns the snake_case outcome name ("timed_out", …).
func (o AuditOutcome) String() string {
	if int(o) < len(outcomeNames) && outcomeNames[o] != "" {
		return outcomeNames[o]
	}
	return "AuditOutcome(" + strconv.Itoa(int(o)) + ")"
}

func outcomeOf(err *ToolError) AuditOutcome {
	switch err.Kind {
	case ToolFailed:
		return OutcomeFailed
	case ToolCancelled:
		return OutcomeCancelled
	case ToolTimedOut:
		return OutcomeTimedOut
	}
	return OutcomeDenied
}

// AuditEvent is one audit record.
type AuditEvent struct {
	// EventSequence orders the records of one runtime, from 1, without wrapping.
	EventSequence uint64
	// Sequence is the reservation sequence q of the operation the record belongs to.
	Sequence uint64
	// Tool is the tool name, or an "unrecognized:<digest>" label for a name that is not a token.
	Tool        string
	InputBytes  int
	OutputBytes int
	Outcome     AuditOutcome
	// RetryClass is set on retry_scheduled records only (zero otherwise).
	RetryClass RetryClass
}

// AppendJSON appends the event's JSON: event_sequence, sequence, tool, input_bytes,
// output_bytes, outcome, and retry_class when present.
func (e AuditEvent) AppendJSON(b []byte) []byte {
	b = append(b, `{"event_sequence":`...)
	b = strconv.AppendUint(b, e.EventSequence, 10)
	b = append(b, `,"sequence":`...)
	b = strconv.AppendUint(b, e.Sequence, 10)
	b = append(b, `,"tool":`...)
	b = canonjson.AppendString(b, e.Tool)
	b = append(b, `,"input_bytes":`...)
	b = strconv.AppendInt(b, int64(e.InputBytes), 10)
	b = append(b, `,"output_bytes":`...)
	b = strconv.AppendInt(b, int64(e.OutputBytes), 10)
	b = append(b, `,"outcome":"`...)
	b = append(b, e.Outcome.String()...)
	b = append(b, '"')
	if e.RetryClass != 0 {
		b = append(b, `,"retry_class":"`...)
		b = append(b, e.RetryClass.String()...)
		b = append(b, '"')
	}
	return append(b, '}')
}

// Errors of AuditEvent.ValidateForTelemetry.
var (
	ErrAuditInvalidEventSequence  = errors.New("invalid capability audit event sequence")
	ErrAuditInvalidTool           = errors.New("invalid capability audit tool label")
	ErrAuditRetryClassRequired    = errors.New("retry-scheduled capability audit event requires a retry class")
	ErrAuditRetryClassUnexpected  = errors.New("only retry-scheduled capability audit events may carry a retry class")
	ErrAuditUnexpectedOutputBytes = errors.New("capability audit outcome cannot carry output bytes")
)

// ValidateForTelemetry checks the shape a durable telemetry sink requires: an event sequence
// other than 0 and 2^64-1, a valid tool label, a retry class exactly on retry_scheduled, and no
// output bytes except on allowed and streamed.
func (e AuditEvent) ValidateForTelemetry() error {
	if e.EventSequence == 0 || e.EventSequence == math.MaxUint64 {
		return ErrAuditInvalidEventSequence
	}
	if !isAuditLabel(e.Tool) {
		return ErrAuditInvalidTool
	}
	switch {
	case e.Outcome == OutcomeRetryScheduled && e.RetryClass == 0:
		return ErrAuditRetryClassRequired
	case e.Outcome != OutcomeRetryScheduled && e.RetryClass != 0:
		return ErrAuditRetryClassUnexpected
	}
	if e.Outcome != OutcomeAllowed && e.Outcome != OutcomeStreamed && e.OutputBytes != 0 {
		return ErrAuditUnexpectedOutputBytes
	}
	return nil
}

func isAuditLabel(s string) bool {
	if isToolName(s) {
		return true
	}
	digest, ok := strings.CutPrefix(s, unrecognizedToolTag)
	if !ok || len(digest) != 64 {
		return false
	}
	for i := 0; i < len(digest); i++ {
		c := digest[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// AuditBatch is a contiguous range of exported audit events.
type AuditBatch struct {
	Events []AuditEvent
	// Next is the cursor that follows the batch.
	Next uint64
}

// First returns the event sequence of the first event, or Next for an empty batch.
func (b AuditBatch) First() uint64 {
	if len(b.Events) == 0 {
		return b.Next
	}
	return b.Events[0].EventSequence
}

// AuditCursorErrorKind classifies a rejected export cursor.
type AuditCursorErrorKind = errkind.Kind[auditCursorKinds]

// auditCursorKinds is the space of the audit cursor error kinds.
type auditCursorKinds struct{}

// Table describes the audit cursor error kinds.
func (auditCursorKinds) Table() *errkind.Table { return &auditCursorKindTable }

// The audit cursor errors.
const (
	ErrAuditInvalidCursor AuditCursorErrorKind = iota + 1
	ErrAuditCursorEvicted
	ErrAuditCursorAhead
)

var auditCursorKindTable = errkind.Table{Type: "AuditCursorErrorKind", Kinds: []errkind.Entry{
	ErrAuditInvalidCursor: {Name: "InvalidCursor", Message: "capability audit cursor is invalid"},
	ErrAuditCursorEvicted: {Name: "Evicted", Message: "capability audit cursor was evicted", Detail: "capability audit cursor {requested} was evicted; earliest available is {available}"},
	ErrAuditCursorAhead:   {Name: "Ahead", Message: "capability audit cursor is ahead of the next available sequence", Detail: "capability audit cursor {requested} is ahead of the next available sequence {available}"},
}}

// AuditCursorError rejects an AuditSince cursor.
type AuditCursorError struct {
	errkind.Kind[auditCursorKinds]
	Requested uint64
	// Available is the earliest available sequence (evicted) or the next one (ahead).
	Available uint64
}

// Error describes the rejection.
func (e *AuditCursorError) Error() string {
	return e.Kind.Expand("requested", e.Requested, "available", e.Available)
}

// auditRing is the bounded in-memory audit buffer: a circular slice that grows up to its
// capacity and then evicts the oldest record.
type auditRing struct {
	buf     []AuditEvent
	head    int // index of the oldest record
	n       int // records held
	max     int
	dropped uint64
	first   uint64 // event sequence of the oldest retained record (or next when empty)
	next    uint64
}

func newAuditRing() auditRing {
	return auditRing{max: DefaultMaxAuditEvents, first: 1, next: 1}
}

func (a *auditRing) at(i int) *AuditEvent {
	return &a.buf[(a.head+i)%len(a.buf)]
}

func (a *auditRing) record(e AuditEvent) {
	if a.next == math.MaxUint64 {
		a.dropped = satAdd(a.dropped, 1)
		return
	}
	e.EventSequence = a.next
	if a.n == a.max {
		a.evictOldest()
	}
	if a.n == len(a.buf) {
		a.grow()
	}
	a.buf[(a.head+a.n)%len(a.buf)] = e
	a.n++
	a.next++
}

func (a *auditRing) grow() {
	size := 2 * len(a.buf)
	if size < 16 {
		size = 16
	}
	if size > a.max {
		size = a.max
	}
	nb := make([]AuditEvent, size)
	for i := 0; i < a.n; i++ {
		nb[i] = *a.at(i)
	}
	a.buf, a.head = nb, 0
}

func (a *auditRing) evictOldest() {
	*a.at(0) = AuditEvent{}
	a.head = (a.head + 1) % len(a.buf)
	a.n--
	a.dropped = satAdd(a.dropped, 1)
	a.first = satAdd(a.first, 1)
}

func (a *auditRing) setMax(n int) error {
	if n <= 0 || n > MaxAuditEvents {
		return invalidLimits("max_audit_events must be between 1 and " + strconv.Itoa(MaxAuditEvents))
	}
	a.max = n
	for a.n > a.max {
		a.evictOldest()
	}
	if len(a.buf) > a.max {
		nb := make([]AuditEvent, a.max)
		for i := 0; i < a.n; i++ {
			nb[i] = *a.at(i)
		}
		a.buf, a.head = nb, 0
	}
	return nil
}

func (a *auditRing) clear() {
	clear(a.buf)
	a.head, a.n, a.dropped = 0, 0, 0
	a.first = a.next
}

func (a *auditRing) events(from int) []AuditEvent {
	out := make([]AuditEvent, 0, a.n-from)
	for i := from; i < a.n; i++ {
		out = append(out, *a.at(i))
	}
	return out
}

func (a *auditRing) since(cursor uint64) (AuditBatch, error) {
	switch {
	case cursor == 0:
		return AuditBatch{}, &AuditCursorError{Kind: ErrAuditInvalidCursor}
	case cursor < a.first:
		return AuditBatch{}, &AuditCursorError{Kind: ErrAuditCursorEvicted, Requested: cursor, Available: a.first}
	case cursor > a.next:
		return AuditBatch{}, &AuditCursorError{Kind: ErrAuditCursorAhead, Requested: cursor, Available: a.next}
	}
	skip := cursor - a.first
	if skip > uint64(a.n) {
		skip = uint64(a.n)
	}
	return AuditBatch{Events: a.events(int(skip)), Next: a.next}, nil
}

func satAdd(a, b uint64) uint64 {
	if a > math.MaxUint64-b {
		return math.MaxUint64
	}
	return a + b
}
