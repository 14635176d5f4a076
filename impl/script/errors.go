package script

import (
	"strconv"

	"github.com/splashv5/conform/impl/errkind"
)

// Pos is a one-based source position: the line, and the column counted in Unicode characters.
type Pos struct {
	Line   int32
	Column int32
}

// String returns "line:column".
func (p Pos) String() string {
	return strconv.Itoa(int(p.Line)) + ":" + strconv.Itoa(int(p.Column))
}

// Diagnostic is one error reported by an evaluation: an uncaught script error, or the
// uncatchable stop that ended the evaluation.
type Diagnostic struct {
	File    string // the configured source name, "inline.splash" by default
	Pos     Pos    // where the failing expression is
	Message string // the error message exactly as the script raised it
	Origin  string // what raised it: "mod.tool", "mod.std.assert", "json", "script" or "limit"
}

// String renders the diagnostic as "file:line:column: message (origin)".
func (d Diagnostic) String() string {
	return d.File + ":" + d.Pos.String() + ": " + d.Message + " (" + d.Origin + ")"
}

// ErrorKind names one refusal or uncatchable stop of the evaluator. A kind is an error whose
// text is its message, so it is an errors.Is target; the typed errors below carry theirs.
type ErrorKind = errkind.Kind[kinds]

// kinds is the space of the evaluator's error kinds.
type kinds struct{}

// Table describes the evaluator's error kinds.
func (kinds) Table() *errkind.Table { return &kindTable }

// Refusals of the evaluator API. Typed errors below match them with errors.Is.
const (
	// ErrSyntax matches every *SyntaxError.
	ErrSyntax ErrorKind = iota + 1
	// ErrSourceTooLarge matches a *SourceTooLargeError.
	ErrSourceTooLarge
	// ErrInvalidLimits is returned by Limits.Validate and New for an unusable configuration.
	ErrInvalidLimits
	// ErrNilHost is returned by New without a host.
	ErrNilHost
	// ErrEvaluationInProgress is returned by Eval while an evaluation is suspended.
	ErrEvaluationInProgress
	// ErrNotSuspended is returned by Resume when no evaluation is suspended.
	ErrNotSuspended
	// ErrNotAwaited is returned by Resume for a promise the suspended evaluation does not await.
	ErrNotAwaited
	// ErrReentered is returned by Eval and Resume when a host callback calls them while a run
	// is executing.
	ErrReentered
)

// SyntaxError rejects source before any of it runs. It names the first problem found.
type SyntaxError struct {
	errkind.Kind[kinds] // ErrSyntax
	Pos                 Pos
	Message             string
}

// Error returns "syntax rejected: line L, column C: message".
func (e *SyntaxError) Error() string {
	return "syntax rejected: line " + strconv.Itoa(int(e.Pos.Line)) + ", column " +
		strconv.Itoa(int(e.Pos.Column)) + ": " + e.Message
}

// SourceTooLargeError rejects source longer than Limits.MaxSourceBytes.
type SourceTooLargeError struct {
	errkind.Kind[kinds] // ErrSourceTooLarge
	Actual, Maximum     int
}

// Error returns "source is N bytes; maximum is M bytes".
func (e *SourceTooLargeError) Error() string {
	return "source is " + strconv.Itoa(e.Actual) + " bytes; maximum is " + strconv.Itoa(e.Maximum) + " bytes"
}

// LimitError is an uncatchable stop: an execution bound was exceeded. Its Kind is the bound
// (ErrInstructionLimit, …), which errors.Is matches and whose text is the stop message, for
// example "script instruction limit exceeded".
type LimitError struct {
	errkind.Kind[kinds]
}

// The uncatchable stops; their text is the diagnostic message.
const (
	// ErrInstructionLimit: a run executed more than Limits.InstructionLimit instructions.
	ErrInstructionLimit ErrorKind = iota + 16
	// ErrDeadline: a run reached Limits.Deadline on the injected clock.
	ErrDeadline
	// ErrStringLimit: a string built at run time exceeded Limits.MaxStringBytes.
	ErrStringLimit
	// ErrHeapLimit: an evaluation allocated more than Limits.MaxHeapBytes of script data.
	ErrHeapLimit
	// ErrStackLimit: the operand stack outgrew Limits.MaxStackValues.
	ErrStackLimit
	// ErrCallFrameLimit: active calls outnumbered Limits.MaxCallFrames.
	ErrCallFrameLimit
)

// Errors a host returns from AwaitTool for the promise edge cases. The evaluator raises their
// text as a catchable script error.
const (
	// ErrUnknownPromise means the promise's record was never issued or has been collected.
	ErrUnknownPromise ErrorKind = iota + 32
	// ErrPromiseAlreadyAwaited means another paused evaluation already waits on the promise.
	ErrPromiseAlreadyAwaited
)

var kindTable = errkind.Table{Type: "ErrorKind", Kinds: []errkind.Entry{
	ErrSyntax:                {Name: "Syntax", Message: "script: syntax rejected"},
	ErrSourceTooLarge:        {Name: "SourceTooLarge", Message: "script: source too large"},
	ErrInvalidLimits:         {Name: "InvalidLimits", Message: "script: invalid limits"},
	ErrNilHost:               {Name: "NilHost", Message: "script: nil host"},
	ErrEvaluationInProgress:  {Name: "EvaluationInProgress", Message: "a suspended Splash evaluation must be resumed first"},
	ErrNotSuspended:          {Name: "NotSuspended", Message: "script: no suspended evaluation"},
	ErrNotAwaited:            {Name: "NotAwaited", Message: "script: the suspended evaluation does not await this promise"},
	ErrReentered:             {Name: "Reentered", Message: "script: a host callback cannot re-enter a running machine"},
	ErrInstructionLimit:      {Name: "InstructionLimit", Message: "script instruction limit exceeded"},
	ErrDeadline:              {Name: "Deadline", Message: "script time budget exceeded"},
	ErrStringLimit:           {Name: "StringLimit", Message: "script string allocation limit exceeded"},
	ErrHeapLimit:             {Name: "HeapLimit", Message: "script heap allocation limit exceeded"},
	ErrStackLimit:            {Name: "StackLimit", Message: "script operand stack limit exceeded"},
	ErrCallFrameLimit:        {Name: "CallFrameLimit", Message: "script call frame limit exceeded"},
	ErrUnknownPromise:        {Name: "UnknownPromise", Message: "unknown tool promise"},
	ErrPromiseAlreadyAwaited: {Name: "PromiseAlreadyAwaited", Message: "tool promise is already awaited"},
}}

// scriptError is a catchable error raised while running: its message is what the script's
// diagnostic shows when nothing catches it.
type scriptError struct {
	msg    string
	origin string
}

func (e *scriptError) Error() string { return e.msg }

func raiseError(origin, msg string) error { return &scriptError{msg: msg, origin: origin} }

func limitStop(limit ErrorKind) error { return &LimitError{Kind: limit} }

// Origins used in diagnostics.
const (
	originTool   = "mod.tool"
	originAssert = "mod.std.assert"
	originJSON   = "json"
	originScript = "script"
	originLimit  = "limit"
)

// Messages fixed by the reference runtime.
const (
	msgAssertion         = "assertion failed"
	msgPromiseExpected   = "tool promise expected"
	msgToolExpectsString = "tool API expects a string value"
	msgJSONLimits        = "JSON operation exceeded Splash runtime limits"
	msgJSONBoundary      = "value cannot cross Splash's bounded JSON boundary"
)
