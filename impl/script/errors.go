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

// ErrorKind names one refusal or uncatchable stop of the evaluator; its text is its message.
type ErrorKind = errkind.Kind[kinds]

type kinds struct{}

// Table describes the evaluator's error kinds.
func (kinds) Table() *errkind.Table { return &kindTable }

// Refusals of the evaluator API; each kind's meaning is its message in kindTable, with its
// entry's Doc. The typed errors below match theirs with errors.Is.
const (
	ErrSyntax ErrorKind = iota + 1
	ErrSourceTooLarge
	ErrInvalidLimits
	ErrNilHost
	ErrEvaluationInProgress
	ErrNotSuspended
	ErrNotAwaited
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
	return e.Kind.Expand("line", e.Pos.Line, "column", e.Pos.Column, "message", e.Message)
}

// SourceTooLargeError rejects source longer than Limits.MaxSourceBytes.
type SourceTooLargeError struct {
	errkind.Kind[kinds] // ErrSourceTooLarge
	Actual, Maximum     int
}

// Error returns "source is N bytes; maximum is M bytes".
func (e *SourceTooLargeError) Error() string {
	return e.Kind.Expand("actual", e.Actual, "maximum", e.Maximum)
}

// LimitError is an uncatchable stop: an execution bound was exceeded. Its Kind is the bound
// (ErrInstructionLimit, …), which errors.Is matches and whose text is the stop message, for
// example "script instruction limit exceeded".
type LimitError struct {
	errkind.Kind[kinds]
}

// The uncatchable stops; their text is the diagnostic message, and their entry's Doc names the
// bound.
const (
	ErrInstructionLimit ErrorKind = iota + 16
	ErrDeadline
	ErrStringLimit
	ErrHeapLimit
	ErrStackLimit
	ErrCallFrameLimit
)

// Errors a host returns from AwaitTool for the promise edge cases. The evaluator raises their
// text as a catchable script error.
const (
	ErrUnknownPromise ErrorKind = iota + 32
	ErrPromiseAlreadyAwaited
)

var kindTable = errkind.Table{Type: "ErrorKind", Kinds: []errkind.Entry{
	ErrSyntax:                {Name: "Syntax", Message: "script: syntax rejected", Detail: "syntax rejected: line {line}, column {column}: {message}", Doc: "matches every *SyntaxError"},
	ErrSourceTooLarge:        {Name: "SourceTooLarge", Message: "script: source too large", Detail: "source is {actual} bytes; maximum is {maximum} bytes", Doc: "matches a *SourceTooLargeError"},
	ErrInvalidLimits:         {Name: "InvalidLimits", Message: "script: invalid limits", Doc: "from Limits.Validate and New, for an unusable configuration"},
	ErrNilHost:               {Name: "NilHost", Message: "script: nil host", Doc: "from New without a host"},
	ErrEvaluationInProgress:  {Name: "EvaluationInProgress", Message: "a suspended Splash evaluation must be resumed first", Doc: "from Eval while an evaluation is suspended"},
	ErrNotSuspended:          {Name: "NotSuspended", Message: "script: no suspended evaluation", Doc: "from Resume when no evaluation is suspended"},
	ErrNotAwaited:            {Name: "NotAwaited", Message: "script: the suspended evaluation does not await this promise", Doc: "from Resume, for a promise the suspended evaluation does not await"},
	ErrReentered:             {Name: "Reentered", Message: "script: a host callback cannot re-enter a running machine", Doc: "from Eval and Resume when a host callback calls them while a run executes"},
	ErrInstructionLimit:      {Name: "InstructionLimit", Message: "script instruction limit exceeded", Doc: "more than Limits.InstructionLimit instructions in a run"},
	ErrDeadline:              {Name: "Deadline", Message: "script time budget exceeded", Doc: "a run reached Limits.Deadline on the injected clock"},
	ErrStringLimit:           {Name: "StringLimit", Message: "script string allocation limit exceeded", Doc: "a string built at run time exceeded Limits.MaxStringBytes"},
	ErrHeapLimit:             {Name: "HeapLimit", Message: "script heap allocation limit exceeded", Doc: "an evaluation allocated more than Limits.MaxHeapBytes of script data"},
	ErrStackLimit:            {Name: "StackLimit", Message: "script operand stack limit exceeded", Doc: "the operand stack outgrew Limits.MaxStackValues"},
	ErrCallFrameLimit:        {Name: "CallFrameLimit", Message: "script call frame limit exceeded", Doc: "active calls outnumbered Limits.MaxCallFrames"},
	ErrUnknownPromise:        {Name: "UnknownPromise", Message: "unknown tool promise", Doc: "the promise was never issued or has been collected"},
	ErrPromiseAlreadyAwaited: {Name: "PromiseAlreadyAwaited", Message: "tool promise is already awaited", Doc: "another paused evaluation already waits on the promise"},
}}

// scriptError is a catchable error raised while running: its message is what the script's
// diagnostic shows when nothing catches it.
type scriptError struct {
	msg    string
	origin string
}

func (e *scriptError) Error() string { return e.msg }

func raiseError(origin, msg string) error { return &scriptError{msg: msg, origin: origin} }

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
