package vectorfmt

// ScriptsFile is the file name of the script evaluator vectors.
const ScriptsFile = "scripts.json"

// ScriptEvalType is the group type of every script evaluation test: one source evaluated by a
// fresh evaluator with the default bounds of chapter 20, against a host whose tools answer as
// the test's Tools say.
const ScriptEvalType = "ScriptEvalTest"

// Error kinds of a rejected script source (a test whose result is Invalid).
const (
	// ScriptSyntaxRejected is a source rejected before it runs (SCR-004): RejectedAt gives the
	// position of the first problem.
	ScriptSyntaxRejected = "SyntaxRejected"
	// ScriptSourceTooLarge is a source over the source bound (SCR-001), rejected before it is
	// parsed: ActualBytes and MaximumBytes give the two counts the error states.
	ScriptSourceTooLarge = "SourceTooLarge"
)

// Status values of an evaluation (ScriptTest.Status).
const (
	ScriptCompleted = "completed"
	ScriptFailed    = "failed"
	ScriptSuspended = "suspended"
)

// Scripts is scripts.json: the subset of Splash source the host runtime evaluates, what it
// evaluates to, what a script observes when something fails, and how it calls the host.
type Scripts struct {
	Header
	TestGroups []ScriptGroup `json:"testGroups"`
}

// ScriptGroup holds the tests of one group type.
type ScriptGroup struct {
	Type  string       `json:"type"`
	Tests []ScriptTest `json:"tests"`
}

// ScriptTool is how the test's host answers a tool. A synchronous call (tool.call,
// tool.call_json) returns Output, or fails with Failure as the error's whole text when
// Failure is set. A deferred start (tool.start, tool.start_json) returns the next promise ID,
// counting from 1 in the order of the starts; awaiting it answers as a call does when Deferred
// is "settled", and leaves the evaluation suspended when it is "pending". A tool the test does
// not list fails every call and start with "tool call denied: unknown tool".
type ScriptTool struct {
	Name     string `json:"name"`
	Output   string `json:"output,omitempty"`
	Failure  string `json:"failure,omitempty"`
	Deferred string `json:"deferred,omitempty"`
}

// ScriptCall is one call the evaluator made to the host, in order: Op "call" or "start" with
// Tool, Format ("text" or "json") and Input, or Op "await" with Promise.
type ScriptCall struct {
	Op      string `json:"op"`
	Tool    string `json:"tool,omitempty"`
	Format  string `json:"format,omitempty"`
	Input   string `json:"input,omitempty"`
	Promise uint64 `json:"promise,omitempty"`
}

// ScriptPosition is a one-based line and column, the column counting Unicode characters. A
// rejection whose column the rules do not fix (the first problem spans several characters)
// leaves Column out.
type ScriptPosition struct {
	Line   int `json:"line"`
	Column int `json:"column,omitempty"`
}

// ScriptTest is one evaluation. Source and Tools are the inputs. An Invalid test's source is
// rejected before anything runs (Error SyntaxRejected, at RejectedAt) and the host is never
// called. A Valid test's source runs: Status is completed, failed or suspended; ValueKind names
// the kind of the final value (nil, bool, number, string, array, record, function, module,
// promise or error); Value is, for nil, bool, number and string, that value as JSON text
// (numbers written as to_json writes them, SCR-080); Diagnostics are the diagnostics of the run,
// each rendered "file:line:column: message (origin)", or "file:?: message (origin)" where the
// rules leave the position open; Calls are the host calls in order.
type ScriptTest struct {
	Case
	Source     Text            `json:"source"`
	Tools      []ScriptTool    `json:"tools"`
	RejectedAt *ScriptPosition `json:"rejected_at,omitempty"`
	// RejectedNaming, when set, is text the rejection's message must contain: the construct,
	// operator or module path a rule says the message names.
	RejectedNaming string       `json:"rejected_naming,omitempty"`
	Status         string       `json:"status,omitempty"`
	ValueKind      string       `json:"value_kind,omitempty"`
	Value          string       `json:"value,omitempty"`
	Diagnostics    []string     `json:"diagnostics"`
	Calls          []ScriptCall `json:"calls"`
	// ClockStepMillis makes the evaluator's injected clock advance by that many milliseconds
	// after every reading (the first reading is the start of the run); without it the clock
	// stands still.
	ClockStepMillis int `json:"clock_step_millis,omitempty"`
	// ActualBytes and MaximumBytes are the counts of a SourceTooLarge rejection.
	ActualBytes  int `json:"actual_bytes,omitempty"`
	MaximumBytes int `json:"maximum_bytes,omitempty"`
	// Runs are further runs on the same evaluator after the first, in order; Calls then lists
	// the host calls of every run.
	Runs []ScriptRun `json:"runs,omitempty"`
}

// Operations of a further run (ScriptRun.Op).
const (
	ScriptOpResume  = "resume"  // Resume(Promise, the outcome Output, or Failure as the error's text)
	ScriptOpEval    = "eval"    // Eval(Source)
	ScriptOpDiscard = "discard" // discard a suspended evaluation
)

// ScriptRun is one further run of a test's evaluator and its outcome. A refused run (Refused)
// changes nothing and runs nothing; RefusedMessage, when set, is the refusal's exact text.
// Otherwise Status, ValueKind, Value and Diagnostics are as in ScriptTest, for this run alone.
// A discard has no outcome.
type ScriptRun struct {
	Op             string   `json:"op"`
	Promise        uint64   `json:"promise,omitempty"`
	Output         string   `json:"output,omitempty"`
	Failure        string   `json:"failure,omitempty"`
	Source         string   `json:"source,omitempty"`
	Refused        bool     `json:"refused,omitempty"`
	RefusedMessage string   `json:"refused_message,omitempty"`
	Status         string   `json:"status,omitempty"`
	ValueKind      string   `json:"value_kind,omitempty"`
	Value          string   `json:"value,omitempty"`
	Diagnostics    []string `json:"diagnostics,omitempty"`
}
