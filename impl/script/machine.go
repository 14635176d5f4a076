package script

import (
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// builtinKind names what a `use` binds.
type builtinKind int32

const (
	builtinToolModule builtinKind = iota + 1 // `use mod.tool` binds the tool module
	builtinAssert                            // `use mod.std.assert` binds assert
)

// nativeKind names a built-in function value.
type nativeKind uint8

const (
	nativeAssert nativeKind = iota + 1
	nativeToolCall
	nativeToolCallJSON
	nativeToolStart
	nativeToolStartJSON
	nativeAwait
	nativeParseJSON
	nativeToJSON
)

var nativeNames = [...]string{
	nativeAssert:        "assert",
	nativeToolCall:      "tool.call",
	nativeToolCallJSON:  "tool.call_json",
	nativeToolStart:     "tool.start",
	nativeToolStartJSON: "tool.start_json",
	nativeAwait:         "await",
	nativeParseJSON:     "parse_json",
	nativeToJSON:        "to_json",
}

// native is a built-in function value: assert, or a method bound to its receiver.
type native struct {
	kind nativeKind
	recv Value
}

// closure is a script function value.
type closure struct {
	proto *proto
	env   *env
}

// env is one scope: a block, a function call, or the top level.
type env struct {
	parent *env
	names  []int32
	vals   []Value
}

func (e *env) lookup(name int32) *Value {
	for s := e; s != nil; s = s.parent {
		for i := len(s.names) - 1; i >= 0; i-- {
			if s.names[i] == name {
				return &s.vals[i]
			}
		}
	}
	return nil
}

func (e *env) define(name int32, v Value) {
	for i := range e.names {
		if e.names[i] == name {
			e.vals[i] = v
			return
		}
	}
	e.names = append(e.names, name)
	e.vals = append(e.vals, v)
}

type frame struct {
	proto *proto
	ip    int
	env   *env
	base  int // operand-stack height to restore when the call returns
}

type handler struct {
	frame   int // index of the frame that installed it
	stack   int // operand-stack height when it was installed
	env     *env
	catchIP int
}

// The memory charged for script values: the in-memory size of one element, one field and an
// object's header.
var (
	valueBytes  = int(reflect.TypeFor[Value]().Size())
	fieldBytes  = int(reflect.TypeFor[Field]().Size())
	objectBytes = 24
)

// Status summarizes an Evaluation.
type Status uint8

const (
	// StatusCompleted means the evaluation ended and its final value is not an error.
	StatusCompleted Status = 1
	// StatusSuspended means the evaluation waits on a promise; see Machine.Resume.
	StatusSuspended Status = 2
	// StatusFailed means the evaluation ended with an error value: an uncaught error in the
	// last top-level statement, or an uncatchable stop.
	StatusFailed Status = 3
)

// String returns "completed", "suspended" or "failed".
func (s Status) String() string {
	switch s {
	case StatusCompleted:
		return "completed"
	case StatusSuspended:
		return "suspended"
	case StatusFailed:
		return "failed"
	}
	return "unknown"
}

// Evaluation is the result of one run of Eval or Resume.
type Evaluation struct {
	// Value is the value of the last top-level statement (nil while suspended).
	Value Value
	// Diagnostics lists, in order, the uncaught errors of this run and the stop that ended it.
	Diagnostics []Diagnostic
	// Suspended is true when the evaluation waits on Awaiting.
	Suspended bool
	// Awaiting is the awaited promise while Suspended.
	Awaiting PromiseID
	// Stop is the *LimitError of an uncatchable stop, nil otherwise.
	Stop error
}

// Succeeded reports whether the final value is not an error (true while suspended, as in the
// reference runtime).
func (e Evaluation) Succeeded() bool { return e.Value.kind != KindError }

// Completed reports whether the evaluation succeeded and is not suspended.
func (e Evaluation) Completed() bool { return e.Succeeded() && !e.Suspended }

// Status classifies the evaluation.
func (e Evaluation) Status() Status {
	switch {
	case e.Suspended:
		return StatusSuspended
	case e.Succeeded():
		return StatusCompleted
	}
	return StatusFailed
}

// Config configures a Machine.
type Config struct {
	// Limits bounds every evaluation; the zero value means DefaultLimits.
	Limits Limits
	// Clock reads the time for the deadline; nil means time.Now.
	Clock func() time.Time
	// File names the source in diagnostics; "" means "inline.splash".
	File string
}

// Machine evaluates scripts against one Host, one evaluation at a time. It is not safe for
// concurrent use. Its state between Eval and Resume is plain data, so a suspended evaluation
// costs no goroutine.
type Machine struct {
	host   Host
	limits Limits
	clock  func() time.Time
	file   string

	// State of the current evaluation.
	prog      *program
	stack     []Value
	frames    []frame
	handlers  []handler
	heapUsed  int
	suspended bool
	awaiting  PromiseID

	// State of the current run.
	diags      []Diagnostic
	budget     int
	sinceClock int
	deadline   time.Time
	lastPos    Pos
	stopErr    error
	pause      bool
	running    bool // a run is executing (guards against a host re-entering the machine)
}

// New returns a Machine that calls host for every tool operation.
func New(host Host, cfg Config) (*Machine, error) {
	if host == nil {
		return nil, ErrNilHost
	}
	limits := cfg.Limits
	if limits == (Limits{}) {
		limits = DefaultLimits()
	}
	limits, err := limits.Validate()
	if err != nil {
		return nil, err
	}
	clock := cfg.Clock
	if clock == nil {
		clock = time.Now
	}
	file := cfg.File
	if file == "" {
		file = "inline.splash"
	}
	return &Machine{host: host, limits: limits, clock: clock, file: file}, nil
}

// Limits returns the machine's bounds.
func (m *Machine) Limits() Limits { return m.limits }

// Check parses source under limits without running it, and returns the *SyntaxError or
// *SourceTooLargeError that Eval would return, or nil.
func Check(source string, limits Limits) error {
	if len(source) > limits.MaxSourceBytes {
		return &SourceTooLargeError{Kind: ErrSourceTooLarge, Actual: len(source), Maximum: limits.MaxSourceBytes}
	}
	if _, err := parse(source, limits); err != nil {
		return err
	}
	return nil
}

// Eval starts evaluating source. It returns an error, and runs nothing, when an evaluation is
// suspended (ErrEvaluationInProgress), the source is too large (*SourceTooLargeError) or it is
// not in the supported subset (*SyntaxError). Otherwise it runs until the program ends, an
// await finds a pending promise, or a bound stops it.
func (m *Machine) Eval(source string) (Evaluation, error) {
	if m.running {
		return Evaluation{}, ErrReentered
	}
	if m.suspended {
		return Evaluation{}, ErrEvaluationInProgress
	}
	if len(source) > m.limits.MaxSourceBytes {
		return Evaluation{}, &SourceTooLargeError{Kind: ErrSourceTooLarge, Actual: len(source), Maximum: m.limits.MaxSourceBytes}
	}
	stmts, serr := parse(source, m.limits)
	if serr != nil {
		return Evaluation{}, serr
	}
	return m.start(compile(stmts)), nil
}

// start runs a compiled program as a new evaluation.
func (m *Machine) start(prog *program) Evaluation {
	m.prog = prog
	m.stack = m.stack[:0]
	m.frames = append(m.frames[:0], frame{proto: prog.protos[0], env: &env{}})
	m.handlers = m.handlers[:0]
	m.heapUsed = 0
	m.beginRun()
	return m.loop()
}

// Suspended reports the promise a suspended evaluation awaits.
func (m *Machine) Suspended() (PromiseID, bool) { return m.awaiting, m.suspended }

// Discard abandons a suspended evaluation, so that Eval may start another one. It does nothing
// while a run is executing.
func (m *Machine) Discard() {
	if m.running {
		return
	}
	m.suspended = false
	m.awaiting = 0
	m.clear()
}

// Resume continues the suspended evaluation with the outcome of the promise it awaits: the
// await yields outcome.Output, or raises outcome.Err's text as a catchable error. It returns
// ErrNotSuspended or ErrNotAwaited, and changes nothing, when id is not the awaited promise.
func (m *Machine) Resume(id PromiseID, outcome Outcome) (Evaluation, error) {
	if m.running {
		return Evaluation{}, ErrReentered
	}
	if !m.suspended {
		return Evaluation{}, ErrNotSuspended
	}
	if id != m.awaiting {
		return Evaluation{}, ErrNotAwaited
	}
	m.suspended = false
	m.awaiting = 0
	m.beginRun()
	f := &m.frames[len(m.frames)-1]
	in := f.proto.code[f.ip]
	f.ip++
	m.lastPos = in.pos
	m.stack = m.stack[:len(m.stack)-1] // the awaited promise (or bound await function)
	if outcome.Err != nil {
		m.raiseAndPush(outcome.Err.Error(), originTool, in.pos)
	} else {
		m.pushString(outcome.Output)
	}
	if m.stopErr != nil {
		return m.halt(), nil
	}
	return m.loop(), nil
}

func (m *Machine) beginRun() {
	m.diags = nil
	m.budget = m.limits.InstructionLimit
	m.sinceClock = 0
	m.deadline = m.clock().Add(m.limits.Deadline)
	m.stopErr = nil
	m.pause = false
}

func (m *Machine) clear() {
	m.prog = nil
	clear(m.stack)
	m.stack = m.stack[:0]
	clear(m.frames)
	m.frames = m.frames[:0]
	clear(m.handlers)
	m.handlers = m.handlers[:0]
}

// halt ends the evaluation with the uncatchable stop in m.stopErr.
func (m *Machine) halt() Evaluation {
	msg := m.stopErr.Error()
	m.diags = append(m.diags, Diagnostic{File: m.file, Pos: m.lastPos, Message: msg, Origin: originLimit})
	ev := Evaluation{Value: errorValue(msg), Diagnostics: m.diags, Stop: m.stopErr}
	m.diags = nil
	m.clear()
	return ev
}

func (m *Machine) stop(limit ErrorKind) {
	if m.stopErr == nil {
		m.stopErr = &LimitError{Kind: limit}
	}
}

// raise handles a catchable error at pos: it unwinds to the innermost try and reports true, or
// records a diagnostic and reports false when nothing catches it.
func (m *Machine) raise(msg, origin string, pos Pos) bool {
	if len(m.handlers) == 0 {
		m.diags = append(m.diags, Diagnostic{File: m.file, Pos: pos, Message: msg, Origin: origin})
		return false
	}
	h := m.handlers[len(m.handlers)-1]
	m.handlers = m.handlers[:len(m.handlers)-1]
	clear(m.frames[h.frame+1:])
	m.frames = m.frames[:h.frame+1]
	clear(m.stack[h.stack:])
	m.stack = m.stack[:h.stack]
	f := &m.frames[h.frame]
	f.env = h.env
	f.ip = h.catchIP
	return true
}

// raiseAndPush raises an error; when nothing catches it, the failing expression's value is an
// error value.
func (m *Machine) raiseAndPush(msg, origin string, pos Pos) {
	if !m.raise(msg, origin, pos) {
		m.stack = append(m.stack, errorValue(msg))
	}
}

// finish pushes the result of an operation, or handles its error.
func (m *Machine) finish(v Value, err error, pos Pos) {
	if err == nil {
		m.stack = append(m.stack, v)
		return
	}
	switch e := err.(type) {
	case *LimitError:
		if m.stopErr == nil {
			m.stopErr = e
		}
	case *scriptError:
		m.raiseAndPush(e.msg, e.origin, pos)
	default:
		m.raiseAndPush(err.Error(), originTool, pos)
	}
}

// alloc charges n bytes of script data to the evaluation's heap bound.
func (m *Machine) alloc(n int) error {
	if n > m.limits.MaxHeapBytes-m.heapUsed {
		m.heapUsed = m.limits.MaxHeapBytes
		return &LimitError{Kind: ErrHeapLimit}
	}
	m.heapUsed += n
	return nil
}

func (m *Machine) pushString(s string) {
	if !utf8.ValidString(s) {
		// Host text is meant to be UTF-8; invalid bytes read as U+FFFD, as a lossy UTF-8
		// conversion does.
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if err := m.alloc(len(s)); err != nil {
		m.finish(Value{}, err, m.lastPos)
		return
	}
	m.stack = append(m.stack, String(s))
}

func (m *Machine) pop() Value {
	v := m.stack[len(m.stack)-1]
	m.stack[len(m.stack)-1] = Value{}
	m.stack = m.stack[:len(m.stack)-1]
	return v
}

// firstError returns the first error value among vs.
func firstError(vs []Value) (Value, bool) {
	for _, v := range vs {
		if v.kind == KindError {
			return v, true
		}
	}
	return Value{}, false
}

// loop runs instructions until the program ends, an await suspends it, or a bound stops it.
func (m *Machine) loop() Evaluation {
	m.running = true
	defer func() { m.running = false }()
	for {
		f := &m.frames[len(m.frames)-1]
		in := f.proto.code[f.ip]
		if in.pos.Line != 0 {
			m.lastPos = in.pos
		}
		if m.budget <= 0 {
			m.stop(ErrInstructionLimit)
			return m.halt()
		}
		m.budget--
		m.sinceClock++
		if m.sinceClock >= m.limits.DeadlineCheckInterval {
			m.sinceClock = 0
			if !m.clock().Before(m.deadline) {
				m.stop(ErrDeadline)
				return m.halt()
			}
		}
		f.ip++
		if done, ev := m.step(f, in); done {
			return ev
		}
		if m.stopErr != nil {
			return m.halt()
		}
		if m.pause {
			m.pause = false
			return Evaluation{Suspended: true, Awaiting: m.awaiting, Diagnostics: m.takeDiags()}
		}
		if len(m.stack) > m.limits.MaxStackValues {
			m.stop(ErrStackLimit)
			return m.halt()
		}
	}
}

func (m *Machine) takeDiags() []Diagnostic {
	d := m.diags
	m.diags = nil
	return d
}

// step executes one instruction; it reports done with the final Evaluation at opHalt.
func (m *Machine) step(f *frame, in instr) (bool, Evaluation) {
	switch in.op {
	case opConst:
		m.stack = append(m.stack, m.prog.consts[in.a])
	case opNil:
		m.stack = append(m.stack, Value{})
	case opTrue:
		m.stack = append(m.stack, Bool(true))
	case opFalse:
		m.stack = append(m.stack, Bool(false))
	case opLoad:
		if slot := f.env.lookup(in.a); slot != nil {
			m.stack = append(m.stack, *slot)
		} else {
			m.raiseAndPush("variable `"+m.prog.names[in.a]+"` not found in scope", originScript, in.pos)
		}
	case opDefine:
		f.env.define(in.a, m.pop())
	case opAssign:
		v := m.pop()
		if slot := f.env.lookup(in.a); slot != nil {
			*slot = v
			m.stack = append(m.stack, Value{})
		} else {
			m.raiseAndPush("variable `"+m.prog.names[in.a]+"` not found in scope", originScript, in.pos)
		}
	case opPop:
		m.pop()
	case opBinary:
		y := m.pop()
		x := m.pop()
		v, err := m.binary(binaryOp(in.a), x, y)
		m.finish(v, err, in.pos)
	case opUnary:
		v, err := unary(unaryOp(in.a), m.pop())
		m.finish(v, err, in.pos)
	case opJump:
		f.ip = int(in.a)
	case opJumpFalse:
		c := m.pop()
		switch {
		case c.kind == KindError:
			m.stack = append(m.stack, c)
			f.ip = int(in.b)
		case !truthy(c):
			f.ip = int(in.a)
		}
	case opAndTest:
		if top := m.stack[len(m.stack)-1]; top.kind == KindError || !truthy(top) {
			f.ip = int(in.a)
		} else {
			m.pop()
		}
	case opOrTest:
		if top := m.stack[len(m.stack)-1]; top.kind == KindError || truthy(top) {
			f.ip = int(in.a)
		} else {
			m.pop()
		}
	case opArray:
		n := int(in.a)
		elems := m.stack[len(m.stack)-n:]
		var v Value
		var err error
		if e, bad := firstError(elems); bad {
			v = e
		} else if err = m.alloc(objectBytes + n*valueBytes); err == nil {
			v = Array(append([]Value(nil), elems...)...)
		}
		clear(elems)
		m.stack = m.stack[:len(m.stack)-n]
		m.finish(v, err, in.pos)
	case opRecord:
		names := m.prog.keyLists[in.a]
		n := len(names)
		vals := m.stack[len(m.stack)-n:]
		var v Value
		var err error
		if e, bad := firstError(vals); bad {
			v = e
		} else if err = m.alloc(objectBytes + n*fieldBytes); err == nil {
			fields := make([]Field, n)
			for i := range names {
				fields[i] = Field{Name: names[i], Value: vals[i]}
			}
			v = Value{kind: KindRecord, ref: &record{fields: fields}}
		}
		clear(vals)
		m.stack = m.stack[:len(m.stack)-n]
		m.finish(v, err, in.pos)
	case opField:
		v, err := m.field(m.pop(), m.prog.names[in.a])
		m.finish(v, err, in.pos)
	case opIndex:
		i := m.pop()
		r := m.pop()
		v, err := index(r, i)
		m.finish(v, err, in.pos)
	case opCall:
		m.call(f, int(in.a), in)
	case opMethod:
		m.method(f, m.prog.names[in.a], int(in.b), in)
	case opClosure:
		m.stack = append(m.stack, Value{kind: KindFunction, ref: &closure{proto: m.prog.protos[in.a], env: f.env}})
	case opReturn:
		v := m.pop()
		base := f.base
		depth := len(m.frames) - 1
		m.frames[depth] = frame{}
		m.frames = m.frames[:depth]
		for len(m.handlers) > 0 && m.handlers[len(m.handlers)-1].frame >= depth {
			m.handlers = m.handlers[:len(m.handlers)-1]
		}
		clear(m.stack[base:])
		m.stack = append(m.stack[:base], v)
	case opScopeEnter:
		f.env = &env{parent: f.env}
	case opScopeExit:
		f.env = f.env.parent
	case opTryBegin:
		m.handlers = append(m.handlers, handler{frame: len(m.frames) - 1, stack: len(m.stack), env: f.env, catchIP: int(in.a)})
	case opTryEnd:
		m.handlers = m.handlers[:len(m.handlers)-1]
	case opUse:
		switch builtinKind(in.a) {
		case builtinToolModule:
			m.stack = append(m.stack, Value{kind: KindModule, bits: uint64(builtinToolModule)})
		case builtinAssert:
			m.stack = append(m.stack, Value{kind: KindFunction, ref: &native{kind: nativeAssert}})
		}
	case opHalt:
		v := m.pop()
		ev := Evaluation{Value: v, Diagnostics: m.takeDiags()}
		m.clear()
		return true, ev
	}
	return false, Evaluation{}
}

// call runs `callee(args)`: the callee sits below argc arguments on the stack.
func (m *Machine) call(f *frame, argc int, in instr) {
	base := len(m.stack) - argc - 1
	callee := m.stack[base]
	args := m.stack[base+1:]
	if callee.kind == KindError {
		m.dropTo(base)
		m.stack = append(m.stack, callee)
		return
	}
	if e, bad := firstError(args); bad {
		m.dropTo(base)
		m.stack = append(m.stack, e)
		return
	}
	switch fn := callee.ref.(type) {
	case *closure:
		m.enter(fn, base, args, in)
	case *native:
		m.invoke(f, fn.kind, fn.recv, base, args, in)
	default:
		m.dropTo(base)
		m.raiseAndPush(callee.kind.withArticle()+" is not callable", originScript, in.pos)
	}
}

func (m *Machine) dropTo(base int) {
	clear(m.stack[base:])
	m.stack = m.stack[:base]
}

// enter starts a call of a script function.
func (m *Machine) enter(fn *closure, base int, args []Value, in instr) {
	if len(args) > len(fn.proto.params) {
		m.dropTo(base)
		m.raiseAndPush("function `"+fn.proto.name+"` takes "+plural(len(fn.proto.params), "argument")+" but "+strconv.Itoa(len(args))+" were given", originScript, in.pos)
		return
	}
	if len(m.frames) >= m.limits.MaxCallFrames {
		m.stop(ErrCallFrameLimit)
		return
	}
	e := &env{parent: fn.env, names: make([]int32, 0, len(fn.proto.params)), vals: make([]Value, 0, len(fn.proto.params))}
	for i, p := range fn.proto.paramNames {
		var v Value
		if i < len(args) {
			v = args[i]
		}
		e.names = append(e.names, p)
		e.vals = append(e.vals, v)
	}
	m.dropTo(base)
	m.frames = append(m.frames, frame{proto: fn.proto, env: e, base: base})
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// method runs `recv.name(args)`: the receiver sits below argc arguments on the stack.
func (m *Machine) method(f *frame, name string, argc int, in instr) {
	base := len(m.stack) - argc - 1
	recv := m.stack[base]
	args := m.stack[base+1:]
	if recv.kind == KindError {
		m.dropTo(base)
		m.stack = append(m.stack, recv)
		return
	}
	if e, bad := firstError(args); bad {
		m.dropTo(base)
		m.stack = append(m.stack, e)
		return
	}
	if recv.kind == KindRecord {
		if fv, ok := recv.Get(name); ok {
			m.stack[base] = fv
			m.call(f, argc, in)
			return
		}
	}
	kind, ok := methodOf(recv, name)
	if !ok {
		m.dropTo(base)
		m.raiseAndPush(noMethod(recv, name), originScript, in.pos)
		return
	}
	m.invoke(f, kind, recv, base, args, in)
}

// methodOf resolves a built-in method of a value.
func methodOf(recv Value, name string) (nativeKind, bool) {
	switch name {
	case "to_json":
		return nativeToJSON, true
	case "await":
		// Every value answers await: anything but a promise raises "tool promise expected".
		return nativeAwait, true
	case "parse_json":
		if recv.kind == KindString || recv.kind == KindArray {
			return nativeParseJSON, true
		}
	}
	if recv.kind == KindModule {
		switch name {
		case "call":
			return nativeToolCall, true
		case "call_json":
			return nativeToolCallJSON, true
		case "start":
			return nativeToolStart, true
		case "start_json":
			return nativeToolStartJSON, true
		}
	}
	return 0, false
}

func noMethod(recv Value, name string) string {
	if recv.kind == KindModule {
		return "method `" + name + "` not found on mod.tool"
	}
	return "method `" + name + "` not found on " + recv.kind.withArticle()
}

// field reads `r.name`.
func (m *Machine) field(r Value, name string) (Value, error) {
	switch r.kind {
	case KindError:
		return r, nil
	case KindRecord:
		if v, ok := r.Get(name); ok {
			return v, nil
		}
		return Value{}, raiseError(originScript, "field `"+name+"` not found in the record")
	}
	if kind, ok := methodOf(r, name); ok {
		return Value{kind: KindFunction, ref: &native{kind: kind, recv: r}}, nil
	}
	if r.kind == KindModule {
		return Value{}, raiseError(originScript, "`"+name+"` not found on mod.tool")
	}
	return Value{}, raiseError(originScript, "cannot read field `"+name+"` of "+r.kind.withArticle())
}

// index reads `r[i]`.
func index(r, i Value) (Value, error) {
	if r.kind == KindError {
		return r, nil
	}
	if i.kind == KindError {
		return i, nil
	}
	switch r.kind {
	case KindArray:
		if i.kind != KindNumber {
			return Value{}, raiseError(originScript, "an array index must be a number, found "+i.kind.withArticle())
		}
		f := i.NumberValue()
		elems := r.Elems()
		if f != math.Trunc(f) {
			return Value{}, raiseError(originScript, "an array index must be a whole number")
		}
		if f < 0 || f >= float64(len(elems)) {
			return Value{}, raiseError(originScript, "index "+strconv.FormatFloat(f, 'f', -1, 64)+" is out of bounds for an array of length "+strconv.Itoa(len(elems)))
		}
		return elems[int(f)], nil
	case KindRecord:
		if i.kind != KindString {
			return Value{}, raiseError(originScript, "a record index must be a string, found "+i.kind.withArticle())
		}
		if v, ok := r.Get(i.str); ok {
			return v, nil
		}
		return Value{}, raiseError(originScript, "field `"+i.str+"` not found in the record")
	}
	return Value{}, raiseError(originScript, "cannot index "+r.kind.withArticle())
}

func unary(op unaryOp, x Value) (Value, error) {
	if x.kind == KindError {
		return x, nil
	}
	switch op {
	case unNeg, unPlus:
		if x.kind != KindNumber {
			name := "-"
			if op == unPlus {
				name = "+"
			}
			return Value{}, raiseError(originScript, "unary `"+name+"` expects a number, found "+x.kind.withArticle())
		}
		if op == unNeg {
			return Number(-x.NumberValue()), nil
		}
		return x, nil
	default: // unNot
		if x.kind == KindNumber {
			return Value{}, raiseError(originScript, "`!` expects a condition, found a number")
		}
		return Bool(!truthy(x)), nil
	}
}

func (m *Machine) binary(op binaryOp, x, y Value) (Value, error) {
	if x.kind == KindError {
		return x, nil
	}
	if y.kind == KindError {
		return y, nil
	}
	switch op {
	case binEq, binNe:
		eq, exhausted := deepEqual(x, y, &m.budget)
		if exhausted {
			return Value{}, &LimitError{Kind: ErrInstructionLimit}
		}
		return Bool(eq == (op == binEq)), nil
	case binAdd:
		if x.kind == KindString && y.kind == KindString {
			n := len(x.str) + len(y.str)
			if n > m.limits.MaxStringBytes {
				return Value{}, &LimitError{Kind: ErrStringLimit}
			}
			if err := m.alloc(n); err != nil {
				return Value{}, err
			}
			return String(x.str + y.str), nil
		}
	}
	if x.kind != KindNumber || y.kind != KindNumber {
		if op == binAdd {
			return Value{}, raiseError(originScript, "operator `+` expects two numbers or two strings, found "+x.kind.withArticle()+" and "+y.kind.withArticle())
		}
		return Value{}, raiseError(originScript, "operator `"+binaryNames[op]+"` expects numbers, found "+x.kind.withArticle()+" and "+y.kind.withArticle())
	}
	a, b := x.NumberValue(), y.NumberValue()
	switch op {
	case binAdd:
		return Number(a + b), nil
	case binSub:
		return Number(a - b), nil
	case binMul:
		return Number(a * b), nil
	case binDiv:
		return Number(a / b), nil
	case binMod:
		return Number(math.Mod(a, b)), nil
	case binLt:
		return Bool(a < b), nil
	case binLe:
		return Bool(a <= b), nil
	case binGt:
		return Bool(a > b), nil
	default: // binGe
		return Bool(a >= b), nil
	}
}

// invoke runs a built-in function with its receiver; the callee or receiver slot is at base
// and the arguments above it.
func (m *Machine) invoke(f *frame, kind nativeKind, recv Value, base int, args []Value, in instr) {
	want := 0
	switch kind {
	case nativeAssert:
		want = 1
	case nativeToolCall, nativeToolCallJSON, nativeToolStart, nativeToolStartJSON:
		want = 2
	}
	if len(args) > want {
		m.dropTo(base)
		m.raiseAndPush("`"+nativeNames[kind]+"` takes "+plural(want, "argument")+" but "+strconv.Itoa(len(args))+" were given", originScript, in.pos)
		return
	}
	arg := func(i int) Value {
		if i < len(args) {
			return args[i]
		}
		return Value{}
	}
	switch kind {
	case nativeAssert:
		ok := arg(0).kind == KindBool && arg(0).BoolValue()
		m.dropTo(base)
		if ok {
			m.stack = append(m.stack, Value{})
		} else {
			m.raiseAndPush(msgAssertion, originAssert, in.pos)
		}
	case nativeToolCall, nativeToolStart, nativeToolCallJSON, nativeToolStartJSON:
		m.tool(kind, arg(0), arg(1), base, in)
	case nativeAwait:
		m.await(f, recv, base, in)
	case nativeToJSON:
		m.dropTo(base)
		text, err := m.toJSON(recv)
		if err != nil {
			m.finish(Value{}, err, in.pos)
			return
		}
		m.pushString(text)
	case nativeParseJSON:
		m.dropTo(base)
		v, err := m.parseJSON(recv)
		m.finish(v, err, in.pos)
	}
}

// tool runs tool.call, tool.call_json, tool.start or tool.start_json.
func (m *Machine) tool(kind nativeKind, nameArg, inputArg Value, base int, in instr) {
	m.dropTo(base)
	format := FormatText
	if kind == nativeToolCallJSON || kind == nativeToolStartJSON {
		format = FormatJSON
	}
	var nameErr, inputErr error
	if nameArg.kind != KindString {
		nameErr = Denied(msgToolExpectsString)
	}
	input := inputArg.str
	if format == FormatJSON {
		text, err := m.toolInputJSON(inputArg)
		if _, stop := err.(*LimitError); stop {
			m.finish(Value{}, err, in.pos)
			return
		}
		input, inputErr = text, err
	} else if inputArg.kind != KindString {
		inputErr = Denied(msgToolExpectsString)
	}
	if nameErr != nil || inputErr != nil {
		err := nameErr
		if err == nil {
			err = inputErr
		}
		m.raiseAndPush(err.Error(), originTool, in.pos)
		return
	}
	if kind == nativeToolCall || kind == nativeToolCallJSON {
		out, err := m.host.CallTool(nameArg.str, input, format)
		if err != nil {
			m.raiseAndPush(err.Error(), originTool, in.pos)
			return
		}
		m.pushString(out)
		return
	}
	id, err := m.host.StartTool(nameArg.str, input, format)
	if err != nil {
		m.raiseAndPush(err.Error(), originTool, in.pos)
		return
	}
	m.stack = append(m.stack, promiseValue(id))
}

// await settles `p.await()`; a pending promise suspends the evaluation with the instruction
// and its operands left in place, so Resume can complete exactly this await.
func (m *Machine) await(f *frame, recv Value, base int, in instr) {
	id, ok := recv.Promise()
	if !ok {
		m.dropTo(base)
		m.raiseAndPush(msgPromiseExpected, originTool, in.pos)
		return
	}
	out, ready, err := m.host.AwaitTool(id)
	if err != nil {
		m.dropTo(base)
		m.raiseAndPush(err.Error(), originTool, in.pos)
		return
	}
	if !ready {
		f.ip--
		m.suspended = true
		m.awaiting = id
		m.pause = true
		return
	}
	m.dropTo(base)
	m.pushString(out)
}
