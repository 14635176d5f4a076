package profile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"

	"github.com/splashv5/conform/impl/canonjson"
)

// EffectKind says what an effect line records.
type EffectKind string

// The two kinds of effect line.
const (
	// KindEffect records one performed effect of a durable dispatch.
	KindEffect EffectKind = "effect"
	// KindCompensation records one performed compensation.
	KindCompensation EffectKind = "compensation"
	// KindFence records the highest fencing token shown for an operation key (PRF-035).
	KindFence EffectKind = "fence"
)

// EffectLine is one line of the effect log.
type EffectLine struct {
	// Kind is KindEffect or KindCompensation.
	Kind EffectKind
	// Tool is the tool that performed the effect.
	Tool string
	// OperationKey is the durable operation key of the effect (or of the
	// compensated operation).
	OperationKey string
	// CompensationKey is the compensation key; empty for KindEffect.
	CompensationKey string
	// Value is the recorded value (null when the input had none); not part of a fence line.
	Value canonjson.Value
	// Token is the fencing token of a KindFence line.
	Token uint64
}

// AppendJSON appends the line's compact JSON (without the newline) to dst, with
// the members in the order kind, tool, operation_key, [compensation_key], value.
func (l EffectLine) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"kind":`...)
	dst = canonjson.AppendString(dst, string(l.Kind))
	dst = append(dst, `,"tool":`...)
	dst = canonjson.AppendString(dst, l.Tool)
	dst = append(dst, `,"operation_key":`...)
	dst = canonjson.AppendString(dst, l.OperationKey)
	if l.Kind == KindFence {
		dst = append(dst, `,"token":`...)
		dst = strconv.AppendUint(dst, l.Token, 10)
		return append(dst, '}')
	}
	if l.Kind == KindCompensation {
		dst = append(dst, `,"compensation_key":`...)
		dst = canonjson.AppendString(dst, l.CompensationKey)
	}
	dst = append(dst, `,"value":`...)
	dst = l.Value.AppendJSON(dst)
	return append(dst, '}')
}

// ErrEffectLog is wrapped by every error about a malformed effect log.
var ErrEffectLog = errors.New("profile: malformed effect log")

// EffectLogError reports a line of an effect log that does not decode.
type EffectLogError struct {
	// Line is the 1-based line number.
	Line int
	// Reason says what is wrong with it.
	Reason string
}

// Error describes the malformed line.
func (e *EffectLogError) Error() string {
	return fmt.Sprintf("profile: effect log line %d: %s", e.Line, e.Reason)
}

// Unwrap returns ErrEffectLog.
func (e *EffectLogError) Unwrap() error { return ErrEffectLog }

// ParseEffectLog decodes a whole effect log. It returns the complete lines and
// the number of bytes they span; bytes after the last newline are a torn write
// and are not part of the result. Numbers in values are read in mode m.
func ParseEffectLog(data []byte, m canonjson.Mode) ([]EffectLine, int, error) {
	complete := bytes.LastIndexByte(data, '\n') + 1
	var lines []EffectLine
	rest := data[:complete]
	for n := 1; len(rest) > 0; n++ {
		end := bytes.IndexByte(rest, '\n')
		line, err := ParseEffectLine(rest[:end], m)
		if err != nil {
			return nil, 0, &EffectLogError{Line: n, Reason: err.Error()}
		}
		lines = append(lines, line)
		rest = rest[end+1:]
	}
	return lines, complete, nil
}

// ParseEffectLine decodes one effect line (without its newline). The members
// must appear exactly once each, in the order AppendJSON writes them.
func ParseEffectLine(data []byte, m canonjson.Mode) (EffectLine, error) {
	node, err := canonjson.Parse(data)
	if err != nil {
		return EffectLine{}, err
	}
	if node.Kind != canonjson.NodeObject {
		return EffectLine{}, errors.New("not a JSON object")
	}
	members := node.Members
	str := func(i int, name string) (string, error) {
		if i >= len(members) || members[i].Key != name {
			return "", fmt.Errorf("member %d must be %q", i+1, name)
		}
		if members[i].Value.Kind != canonjson.NodeString {
			return "", fmt.Errorf("member %q must be a string", name)
		}
		return members[i].Value.Text, nil
	}
	var line EffectLine
	kind, err := str(0, "kind")
	if err != nil {
		return EffectLine{}, err
	}
	line.Kind = EffectKind(kind)
	if line.Kind != KindEffect && line.Kind != KindCompensation && line.Kind != KindFence {
		return EffectLine{}, fmt.Errorf("unknown kind %q", kind)
	}
	if line.Tool, err = str(1, "tool"); err != nil {
		return EffectLine{}, err
	}
	if line.OperationKey, err = str(2, "operation_key"); err != nil {
		return EffectLine{}, err
	}
	next := 3
	if line.Kind == KindFence {
		if len(members) != 4 || members[3].Key != "token" || members[3].Value.Kind != canonjson.NodeNumber {
			return EffectLine{}, errors.New(`a fence line must end with the number member "token"`)
		}
		t, err := strconv.ParseUint(members[3].Value.Text, 10, 64)
		if err != nil || t == 0 || strconv.FormatUint(t, 10) != members[3].Value.Text {
			return EffectLine{}, errors.New("a fence token must be a positive decimal integer")
		}
		line.Token = t
		return line, nil
	}
	if line.Kind == KindCompensation {
		if line.CompensationKey, err = str(3, "compensation_key"); err != nil {
			return EffectLine{}, err
		}
		next = 4
	}
	if next >= len(members) || members[next].Key != "value" {
		return EffectLine{}, fmt.Errorf("member %d must be %q", next+1, "value")
	}
	if len(members) != next+1 {
		return EffectLine{}, errors.New("unexpected member after \"value\"")
	}
	if line.Value, err = canonjson.FromNode(members[next].Value, m); err != nil {
		return EffectLine{}, err
	}
	return line, nil
}

type effectKey struct{ tool, operationKey string }

// EffectLog is the profile's effect record: every effect known to have
// happened, optionally mirrored line by line to a writer. It is safe for
// concurrent use.
type EffectLog struct {
	mu      sync.Mutex
	out     io.Writer
	effects map[effectKey]canonjson.Value
	fences  map[effectKey]uint64
	lines   []EffectLine
	buf     []byte
	// file is the log's file when it has one: other processes may append to it, so a fenced
	// call locks it, reads what they appended from read on, and writes at its end.
	file *os.File
	read int64
	mode canonjson.Mode
}

// NewEffectLog returns an effect record that starts with the given lines
// (earlier runs) and appends new lines to out. A nil out keeps the record in
// memory only. If out has a Sync() error method (an *os.File does), it is
// called after every line.
func NewEffectLog(out io.Writer, earlier []EffectLine) *EffectLog {
	l := &EffectLog{out: out, effects: make(map[effectKey]canonjson.Value), fences: make(map[effectKey]uint64)}
	for _, line := range earlier {
		l.remember(line)
	}
	return l
}

// OpenEffectLogFile reads the effect log at path (creating it if absent),
// cuts off a torn final line, and returns an EffectLog that appends to the
// file and syncs it after every line, plus the file for closing.
func OpenEffectLogFile(path string, m canonjson.Mode) (*EffectLog, *os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	lines, complete, err := ParseEffectLog(data, m)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if complete != len(data) {
		if err := f.Truncate(int64(complete)); err != nil {
			f.Close()
			return nil, nil, err
		}
	}
	if _, err := f.Seek(int64(complete), io.SeekStart); err != nil {
		f.Close()
		return nil, nil, err
	}
	l := NewEffectLog(f, lines)
	l.file, l.read, l.mode = f, int64(complete), m
	return l, f, nil
}

func (l *EffectLog) remember(line EffectLine) {
	l.lines = append(l.lines, line)
	switch k := (effectKey{line.Tool, line.OperationKey}); line.Kind {
	case KindEffect:
		l.effects[k] = line.Value
	case KindFence:
		l.fences[k] = max(l.fences[k], line.Token)
	}
}

// Append records line: it writes it to the output in one Write call followed
// by a newline, syncs, and only then adds it to the in-memory record.
func (l *EffectLog) Append(line EffectLine) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.write(line)
}

// ErrSuperseded is the refusal of a fenced call whose token is lower than the highest one
// the effect record holds for its operation key (PRF-035, STO-073).
var ErrSuperseded = errors.New("profile: a newer worker holds the operation key (superseded fencing token)")

// Fenced shows token for the operation key of tool to the effect record and, unless it is
// refused, appends lines (PRF-035): with the log's file locked against other processes it
// first reads the lines they appended; when a higher token is recorded for the key it returns
// ErrSuperseded and writes nothing; otherwise it records token with a fence line, when it is
// higher than the recorded one, and then appends lines, all before the lock is released.
func (l *EffectLog) Fenced(tool, operationKey string, token uint64, lines ...EffectLine) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.file != nil {
		unlock, err := lockFile(l.file)
		if err != nil {
			return err
		}
		defer unlock()
		if err := l.refresh(); err != nil {
			return err
		}
	}
	k := effectKey{tool, operationKey}
	if l.fences[k] > token {
		return ErrSuperseded
	}
	if l.fences[k] < token {
		lines = append([]EffectLine{{Kind: KindFence, Tool: tool, OperationKey: operationKey, Token: token}}, lines...)
	}
	if len(lines) == 0 {
		return nil
	}
	return l.write(lines...)
}

// refresh reads the complete lines appended to the file since the last read, by this
// process or another; a torn final line is left for later.
func (l *EffectLog) refresh() error {
	info, err := l.file.Stat()
	if err != nil {
		return err
	}
	if info.Size() <= l.read {
		return nil
	}
	data := make([]byte, min(info.Size()-l.read, maxRefreshBytes))
	n, err := l.file.ReadAt(data, l.read)
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	complete := bytes.LastIndexByte(data[:n], '\n') + 1
	lines, _, err := ParseEffectLog(data[:complete], l.mode)
	if err != nil {
		return err
	}
	l.read += int64(complete)
	for _, line := range lines {
		l.remember(line)
	}
	return nil
}

// maxRefreshBytes bounds what one refresh reads of lines other processes appended.
const maxRefreshBytes = 16 << 20

// write writes lines as Append does, all in one write call and one sync; with a file, at
// its end, past what other processes appended.
func (l *EffectLog) write(lines ...EffectLine) error {
	if l.file != nil {
		end, err := l.file.Seek(0, io.SeekEnd)
		if err != nil {
			return err
		}
		if end != l.read {
			// Another process appended lines this one has not read: they are read by the next
			// fenced call; only the offset of the next read is kept exact.
			if err := l.refresh(); err != nil {
				return err
			}
		}
	}
	if l.out != nil {
		l.buf = l.buf[:0]
		for _, line := range lines {
			l.buf = append(line.AppendJSON(l.buf), '\n')
		}
		if _, err := l.out.Write(l.buf); err != nil {
			return err
		}
		if s, ok := l.out.(interface{ Sync() error }); ok {
			if err := s.Sync(); err != nil {
				return err
			}
		}
		if l.file != nil {
			l.read += int64(len(l.buf))
		}
	}
	for _, line := range lines {
		l.remember(line)
	}
	return nil
}

// Effect returns the value recorded by the most recent effect line for tool
// and operation key, and whether there is one.
func (l *EffectLog) Effect(tool, operationKey string) (canonjson.Value, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	v, ok := l.effects[effectKey{tool, operationKey}]
	return v, ok
}

// Lines returns a copy of every line in the record, oldest first.
func (l *EffectLog) Lines() []EffectLine {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]EffectLine(nil), l.lines...)
}

// Effects returns the effect and compensation lines of the record, oldest first: every line but
// the fence lines, which record tokens, not effects (PRF-035).
func (l *EffectLog) Effects() []EffectLine {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []EffectLine
	for _, line := range l.lines {
		if line.Kind != KindFence {
			out = append(out, line)
		}
	}
	return out
}
