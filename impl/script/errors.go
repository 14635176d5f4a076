package script

import (
	"errors"
	"strconv"
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

// Sentinel errors of the evaluator API. Typed errors below match them with errors.Is.
var (
	// ErrSyntax matches every *SyntaxError.
	ErrSyntax = errors.New("script: syntax rejected")
	// ErrSourceTooLarge matches a *SourceTooLargeError.
	ErrSourceTooLarge = errors.New("script: source too large")
	// ErrInvalidLimits is returned by Limits.Validate and New for an unusable configuration.
	ErrInvalidLimits = errors.New("script: invalid limits")
	// ErrNilHost is returned by New without a host.
	ErrNilHost = errors.New("script: nil host")
	// ErrEvaluationInProgress is returned by Eval while an evaluation is suspended.
	ErrEvaluationInProgress = errors.New("a suspended Splash evaluation must be resumed first")
	// ErrNotSuspended is returned by Resume when no evaluation is suspended.
	ErrNotSuspended = errors.New("script: no suspended evaluation")
	// ErrNotAwaited is returned by Resume for a promise the suspended evaluation does not await.
	ErrNotAwaited = errors.New("script: the suspended evaluation does not await this promise")
	// ErrReentered is returned by Eval and Resume when a host callback calls them while a run
	// is executing.
	ErrReentered = errors.New("script: a host callback cannot re-enter a running machine")
)

// SyntaxError rejects source before any of it runs. It names the first problem found.
type SyntaxError struct {
	Pos     Pos
	Message string
}

// Error returns "syntax rejected: line L, column C: message".
func (e *SyntaxError) Error() string {
	return "syntax rejected: line " + strconv.Itoa(int(e.Pos.Line)) + ", column " +
		strconv.Itoa(int(e.Pos.Column)) + ": " + e.Message
}

// Is matches ErrSyntax.
func (e *SyntaxError) Is(target error) bool { return target == ErrSyntax }

// SourceTooLargeError rejects source longer than Limits.MaxSourceBytes.
type SourceTooLargeError struct {
	Actual, Maximum int
}

// Error returns "source is N bytes; maximum is M bytes".
func (e *SourceTooLargeError) Error() string {
	return "source is " + strconv.Itoa(e.Actual) + " bytes; maximum is " + strconv.Itoa(e.Maximum) + " bytes"
}

// Is matches ErrSourceTooLarge.
func (e *SourceTooLargeError) Is(target error) bool { return target == ErrSourceTooLarge }

// LimitError is an uncatchable stop: an execution bound was exceeded. Errors.Is matches it
// against the sentinel of its bound (ErrInstructionLimit, …).
type LimitError struct {
	limit error
}

// Error returns the stop message, for example "script instruction limit exceeded".
func (e *LimitError) Error() string { return e.limit.Error() }

// Is matches the sentinel of the exceeded bound.
func (e *LimitError) Is(target error) bool { return target == e.limit }

// Sentinels of the uncatchable stops; their text is the diagnostic message.
var (
	// ErrInstructionLimit: a run executed more than Limits.InstructionLimit instructions.
	ErrInstructionLimit = errors.New("script instruction limit exceeded")
	// ErrDeadline: a run reached Limits.Deadline on the injected clock.
	ErrDeadline = errors.New("script time budget exceeded")
	// ErrStringLimit: a string built at run time exceeded Limits.MaxStringBytes.
	ErrStringLimit = errors.New("script string allocation limit exceeded")
	// ErrHeapLimit: an evaluation allocated more than Limits.MaxHeapBytes of script data.
	ErrHeapLimit = errors.New("script heap allocation limit exceeded")
	// ErrStackLimit: the operand stack outgrew Limits.MaxStackValues.
	ErrStackLimit = errors.New("script operand stack limit exceeded")
	// ErrCallFrameLimit: active calls outnumbered Limits.MaxCallFrames.
	ErrCallFrameLimit = errors.New("script call frame limit exceeded")
)

// scriptError is a catchable error raised while running: its message is what the script's
// diagnostic shows when nothing catches it.
type scriptError struct {
	msg    string
	origin string
}

func (e *scriptError) Error() string { return e.msg }

func raiseError(origin, msg string) error { return &scriptError{msg: msg, origin: origin} }

func limitStop(limit error) error { return &LimitError{limit: limit} }

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
