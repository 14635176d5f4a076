package script

import "errors"

// PromiseID identifies one deferred tool call. The host issues it from StartTool; the
// evaluator only carries it inside promise values and hands it back to the host.
type PromiseID uint64

// Format says how the script supplied a tool call's input.
type Format uint8

const (
	// FormatText is used by tool.call and tool.start: the input is the script string itself.
	FormatText Format = 1
	// FormatJSON is used by tool.call_json and tool.start_json: the input is the script value
	// written as JSON text by the reference VM's raw serializer (see docs/script.md).
	FormatJSON Format = 2
)

// String returns "text" or "json".
func (f Format) String() string {
	switch f {
	case FormatText:
		return "text"
	case FormatJSON:
		return "json"
	}
	return "unknown"
}

// ToolErrorKind classifies a failed tool call the way a script observes it.
type ToolErrorKind uint8

const (
	// ToolDenied is a reservation or policy denial ("tool call denied: …").
	ToolDenied ToolErrorKind = 1
	// ToolFailed is a handler or worker failure ("tool call failed: …").
	ToolFailed ToolErrorKind = 2
	// ToolCancelled is a confirmed cancellation ("tool call cancelled: …").
	ToolCancelled ToolErrorKind = 3
	// ToolTimedOut is an elapsed deferred deadline ("tool call timed out: …").
	ToolTimedOut ToolErrorKind = 4
)

// String returns the kind's name: "Denied", "Failed", "Cancelled" or "TimedOut".
func (k ToolErrorKind) String() string {
	switch k {
	case ToolDenied:
		return "Denied"
	case ToolFailed:
		return "Failed"
	case ToolCancelled:
		return "Cancelled"
	case ToolTimedOut:
		return "TimedOut"
	}
	return "Unknown"
}

// ToolError is the failure of one tool call as a script sees it. Its Error text is exactly the
// message the script's error carries and the host diagnostic shows.
type ToolError struct {
	Kind    ToolErrorKind
	Message string
}

// Error renders the error as "tool call denied: …", "tool call failed: …",
// "tool call cancelled: …" or "tool call timed out: …".
func (e *ToolError) Error() string {
	switch e.Kind {
	case ToolDenied:
		return "tool call denied: " + e.Message
	case ToolFailed:
		return "tool call failed: " + e.Message
	case ToolCancelled:
		return "tool call cancelled: " + e.Message
	case ToolTimedOut:
		return "tool call timed out: " + e.Message
	}
	return "tool call error: " + e.Message
}

// Denied returns a ToolDenied error with message msg.
func Denied(msg string) *ToolError { return &ToolError{Kind: ToolDenied, Message: msg} }

// Failed returns a ToolFailed error with message msg.
func Failed(msg string) *ToolError { return &ToolError{Kind: ToolFailed, Message: msg} }

// Cancelled returns the ToolCancelled error of an external operation reported cancelled.
func Cancelled() *ToolError {
	return &ToolError{Kind: ToolCancelled, Message: "external operation was reported cancelled"}
}

// TimedOut returns the ToolTimedOut error of tool exceeding its deferred deadline.
func TimedOut(tool string) *ToolError {
	return &ToolError{Kind: ToolTimedOut, Message: tool + " exceeded its deferred deadline"}
}

// Errors a host returns from AwaitTool for the promise edge cases. The evaluator raises their
// text as a catchable script error.
var (
	// ErrUnknownPromise means the promise's record was never issued or has been collected.
	ErrUnknownPromise = errors.New("unknown tool promise")
	// ErrPromiseAlreadyAwaited means another paused evaluation already waits on the promise.
	ErrPromiseAlreadyAwaited = errors.New("tool promise is already awaited")
)

// Host is everything the evaluator needs from the capability runtime. The evaluator calls it
// synchronously from Eval and Resume, never from another goroutine, and never retains the
// strings it passes.
//
// Any error a method returns is raised in the script as a catchable error whose message is the
// error's Error text; hosts return *ToolError for tool failures so the script sees the
// reference rendering.
type Host interface {
	// CallTool performs a synchronous call (tool.call with FormatText, tool.call_json with
	// FormatJSON) and returns the tool's output text.
	CallTool(name, input string, format Format) (output string, err error)
	// StartTool reserves a deferred call (tool.start with FormatText, tool.start_json with
	// FormatJSON) and returns its promise. A denied start returns an error and no promise.
	StartTool(name, input string, format Format) (PromiseID, error)
	// AwaitTool reports the state of a promise a script awaits. A settled promise returns
	// ready=true with its output, or its failure as err. A pending promise returns ready=false:
	// the host must then record that the suspended evaluation waits on id, and call
	// Machine.Resume with the outcome once the promise settles. A settled promise must give the
	// same answer every time it is awaited.
	AwaitTool(id PromiseID) (output string, ready bool, err error)
}

// Outcome is the settled result of a promise, handed to Machine.Resume: the output text, or the
// failure (normally a *ToolError) when Err is non-nil.
type Outcome struct {
	Output string
	Err    error
}
