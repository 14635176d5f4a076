package script

import "github.com/splashv5/conform/impl/errkind"

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
type ToolErrorKind = errkind.Kind[toolKinds]

type toolKinds struct{}

// Table describes the tool failure kinds.
func (toolKinds) Table() *errkind.Table { return &toolKindTable }

// The four kinds of tool failure; see toolKindTable.
const (
	ToolDenied ToolErrorKind = iota + 1
	ToolFailed
	ToolCancelled
	ToolTimedOut
)

var toolKindTable = errkind.Table{Type: "ToolErrorKind", Prefix: "tool call ", Kinds: []errkind.Entry{
	ToolDenied:    {Name: "Denied", Message: "denied", Doc: "a reservation, policy or output-validation denial"},
	ToolFailed:    {Name: "Failed", Message: "failed", Doc: "a handler, worker or host failure"},
	ToolCancelled: {Name: "Cancelled", Message: "cancelled", Doc: "a confirmed cancellation"},
	ToolTimedOut:  {Name: "TimedOut", Message: "timed out", Doc: "an operation past its deferred deadline"},
}}

// ToolError is the failure of one tool call. Its Error text, the kind's text, ": " and
// Message, is exactly what the script's error carries and the host diagnostic shows.
type ToolError struct {
	errkind.Kind[toolKinds]
	Message string
}

// Error renders the error as "tool call denied: …", "tool call failed: …", …
func (e *ToolError) Error() string {
	if !e.Kind.Valid() {
		return "tool call error: " + e.Message
	}
	return e.Kind.Error() + ": " + e.Message
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
