package jsonline

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/splashv5/conform/impl/protocol"
	"pgregory.net/rapid"
)

func readAll(t *testing.T, r *Reader) ([]string, error) {
	t.Helper()
	var lines []string
	for {
		line, err := r.ReadLine()
		if err != nil {
			return lines, err
		}
		lines = append(lines, string(line))
	}
}

func wantKind(t *testing.T, err error, kind ErrorKind) *Error {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("error = %v, want kind %v", err, kind)
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v is not a *Error", err)
	}
	return e
}

// wantTooLarge checks for Protocol(WireFrameTooLarge{actual, 1 MiB}).
func wantTooLarge(t *testing.T, err error, actual int) {
	t.Helper()
	wantKind(t, err, ErrProtocol)
	var pe *protocol.Error
	if !errors.As(err, &pe) || pe.Kind != protocol.ErrWireFrameTooLarge || !errors.Is(err, protocol.ErrWireFrameTooLarge) {
		t.Fatalf("error %v does not wrap WireFrameTooLarge", err)
	}
	if pe.Actual != uint64(actual) || pe.Maximum != MaxLineBytes {
		t.Fatalf("actual %d maximum %d, want %d %d", pe.Actual, pe.Maximum, actual, MaxLineBytes)
	}
}

// wantPoisoned checks that later is the poisoned error wrapping first.
func wantPoisoned(t *testing.T, later, first error) {
	t.Helper()
	e := wantKind(t, later, ErrPoisoned)
	if e.Err != first {
		t.Fatalf("poisoned error wraps %v, want %v", e.Err, first)
	}
	var firstErr *Error
	if errors.As(first, &firstErr) && !errors.Is(later, firstErr.Kind) {
		t.Fatalf("poisoned error does not match the first kind %v", firstErr.Kind)
	}
}

// Spec: FRM-034, FRM-035, FRM-037 (an empty line is returned, not skipped).
func TestReaderSplitsLinesAndKeepsCarriageReturn(t *testing.T) {
	in := "{\"a\":1}\n\n{\"b\":2}\r\n é \n"
	r := NewReader(strings.NewReader(in))
	lines, err := readAll(t, r)
	want := []string{`{"a":1}`, "", "{\"b\":2}\r", " é "}
	if strings.Join(lines, "|") != strings.Join(want, "|") || len(lines) != len(want) {
		t.Fatalf("lines = %q, want %q", lines, want)
	}
	// A clean end of input between lines is still an unexpected end of
	// stream, as in the reference transport.
	wantKind(t, err, ErrUnexpectedEndOfStream)
}

func TestReaderOneByteAtATime(t *testing.T) {
	in := "first\nsecond line\r\n"
	r := NewReader(iotest.OneByteReader(strings.NewReader(in)))
	lines, err := readAll(t, r)
	if len(lines) != 2 || lines[0] != "first" || lines[1] != "second line\r" {
		t.Fatalf("lines = %q", lines)
	}
	wantKind(t, err, ErrUnexpectedEndOfStream)
}

func TestReaderDataWithEOF(t *testing.T) {
	r := NewReader(iotest.DataErrReader(strings.NewReader("a\nb\n")))
	lines, err := readAll(t, r)
	if len(lines) != 2 || lines[0] != "a" || lines[1] != "b" {
		t.Fatalf("lines = %q", lines)
	}
	wantKind(t, err, ErrUnexpectedEndOfStream)
}

// Spec: FRM-034
func TestReaderEndOfStreamBeforeNewline(t *testing.T) {
	for _, in := range []string{"", "{\"partial\":", "x"} {
		r := NewReader(strings.NewReader(in))
		_, err := r.ReadLine()
		wantKind(t, err, ErrUnexpectedEndOfStream)
	}
}

// Spec: FRM-032, FRM-035
func TestReaderLineAtTheLimit(t *testing.T) {
	exact := bytes.Repeat([]byte{'a'}, MaxLineBytes)
	for _, name := range []string{"whole", "one-byte"} {
		var src io.Reader = bytes.NewReader(append(append([]byte{}, exact...), '\n'))
		if name == "one-byte" {
			src = iotest.HalfReader(src)
		}
		r := NewReader(src)
		line, err := r.ReadLine()
		if err != nil || len(line) != MaxLineBytes {
			t.Fatalf("%s: len %d err %v", name, len(line), err)
		}
	}
	// A carriage return counts toward the limit.
	withCR := append(append(append([]byte{}, exact...), '\r'), '\n')
	_, err := NewReader(bytes.NewReader(withCR)).ReadLine()
	wantTooLarge(t, err, MaxLineBytes+1)
}

// Spec: FRM-032
func TestReaderOversizedLineWithNewlineInBuffer(t *testing.T) {
	// The newline arrives in the same read as the crossing bytes: the
	// reported size is the full line length, as in the reference.
	line := bytes.Repeat([]byte{'b'}, MaxLineBytes+10)
	in := append(append(line, '\n'), "next\n"...)
	r := NewReader(bytes.NewReader(in))
	_, err := r.ReadLine()
	wantTooLarge(t, err, MaxLineBytes+10)
}

// Spec: FRM-032
func TestReaderOversizedUnterminatedLine(t *testing.T) {
	// MaxLineBytes+1 bytes and no newline: too large, not end of stream.
	r := NewReader(bytes.NewReader(bytes.Repeat([]byte{'x'}, MaxLineBytes+1)))
	_, err := r.ReadLine()
	wantTooLarge(t, err, MaxLineBytes+1)
}

// endless yields the same byte forever and counts what it handed out.
type endless struct {
	b     byte
	total int
}

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = e.b
	}
	e.total += len(p)
	return len(p), nil
}

// Spec: FRM-032, FRM-036
func TestReaderBoundsMemoryOnAnEndlessLine(t *testing.T) {
	src := &endless{b: '7'}
	r := NewReader(src)
	_, err := r.ReadLine()
	wantTooLarge(t, err, MaxLineBytes+1)
	// The decision is taken after at most the limit plus one read buffer.
	if src.total > MaxLineBytes+1+readBufferBytes {
		t.Fatalf("read %d bytes from an endless source", src.total)
	}
	if len(r.buf) != readBufferBytes {
		t.Fatalf("read buffer resized to %d", len(r.buf))
	}
	// The line buffer is released on error; check the bound while reading
	// through a fresh reader that stops just short of the limit.
	r2 := NewReader(io.MultiReader(io.LimitReader(&endless{b: 'y'}, MaxLineBytes), strings.NewReader("\n")))
	line, err2 := r2.ReadLine()
	if err2 != nil || len(line) != MaxLineBytes {
		t.Fatalf("len %d err %v", len(line), err2)
	}
	if cap(r2.line) > MaxLineBytes+1 {
		t.Fatalf("line buffer capacity %d exceeds limit+1", cap(r2.line))
	}
	// The poisoned reader does not touch the source again.
	before := src.total
	_, again := r.ReadLine()
	wantPoisoned(t, again, err)
	if src.total != before {
		t.Fatalf("poisoned reader read %d more bytes", src.total-before)
	}
}

// Spec: FRM-033, FRM-036
func TestReaderRejectsInvalidUTF8AndPoisons(t *testing.T) {
	r := NewReader(strings.NewReader("ok\n\xff\xfe\nnever\n"))
	if line, err := r.ReadLine(); err != nil || string(line) != "ok" {
		t.Fatalf("first line %q err %v", line, err)
	}
	_, err := r.ReadLine()
	wantKind(t, err, ErrInvalidUTF8)
	_, later := r.ReadLine()
	wantPoisoned(t, later, err)
	for range 3 {
		if _, again := r.ReadLine(); again != later {
			t.Fatalf("later call returned %v, want the same poisoned error", again)
		}
	}
	if r.Err() != err {
		t.Fatalf("Err() = %v", r.Err())
	}
}

// Spec: FRM-033
func TestReaderSizeIsCheckedBeforeUTF8(t *testing.T) {
	in := append(bytes.Repeat([]byte{0xff}, MaxLineBytes+1), '\n')
	_, err := NewReader(bytes.NewReader(in)).ReadLine()
	wantTooLarge(t, err, MaxLineBytes+1)
}

// Spec: FRM-036
func TestReaderWrapsIOErrors(t *testing.T) {
	boom := errors.New("pipe broke")
	r := NewReader(io.MultiReader(strings.NewReader("a\nb"), iotest.ErrReader(boom)))
	if line, err := r.ReadLine(); err != nil || string(line) != "a" {
		t.Fatalf("line %q err %v", line, err)
	}
	_, err := r.ReadLine()
	wantKind(t, err, ErrIO)
	if !errors.Is(err, boom) {
		t.Fatalf("cause lost: %v", err)
	}
	_, again := r.ReadLine()
	wantPoisoned(t, again, err)
}

type stuckReader struct{}

func (stuckReader) Read([]byte) (int, error) { return 0, nil }

func TestReaderGivesUpOnAReaderThatNeverProgresses(t *testing.T) {
	_, err := NewReader(stuckReader{}).ReadLine()
	wantKind(t, err, ErrIO)
	if !errors.Is(err, io.ErrNoProgress) {
		t.Fatalf("error = %v", err)
	}
}

func TestReaderLineIsOnlyValidUntilTheNextCall(t *testing.T) {
	r := NewReader(strings.NewReader("aaaa\nbbbb\n"))
	first, _ := r.ReadLine()
	kept := string(first)
	if _, err := r.ReadLine(); err != nil {
		t.Fatal(err)
	}
	if kept != "aaaa" {
		t.Fatalf("copy taken before the next call changed: %q", kept)
	}
}

type flushRecorder struct {
	bytes.Buffer
	flushes int
}

func (f *flushRecorder) Flush() error { f.flushes++; return nil }

// Spec: FRM-031
func TestWriterWritesLineNewlineAndFlushes(t *testing.T) {
	var out flushRecorder
	w := NewWriter(&out)
	if err := w.WriteLine([]byte(`{"sequence":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteLine([]byte("x\r")); err != nil {
		t.Fatal(err)
	}
	if out.String() != "{\"sequence\":1}\nx\r\n" || out.flushes != 2 {
		t.Fatalf("wrote %q with %d flushes", out.String(), out.flushes)
	}
	// Through a real bufio.Writer: the bytes reach the destination at once.
	var dst bytes.Buffer
	bw := bufio.NewWriterSize(&dst, 4096)
	if err := NewWriter(bw).WriteLine([]byte("abc")); err != nil || dst.String() != "abc\n" {
		t.Fatalf("bufio destination holds %q (err %v)", dst.String(), err)
	}
}

// Spec: FRM-031, FRM-036
func TestWriterRefusesBadLinesAndPoisons(t *testing.T) {
	var out bytes.Buffer
	w := NewWriter(&out)
	err := w.WriteLine([]byte("a\nb"))
	wantKind(t, err, ErrProtocol)
	if !errors.Is(err, protocol.ErrSerialization) {
		t.Fatalf("newline error %v does not wrap Serialization", err)
	}
	if out.Len() != 0 {
		t.Fatalf("wrote %q before refusing", out.String())
	}
	wantPoisoned(t, w.WriteLine([]byte("fine")), err)
	if out.Len() != 0 {
		t.Fatalf("poisoned writer wrote %q", out.String())
	}

	w2 := NewWriter(&out)
	err = w2.WriteLine(bytes.Repeat([]byte{'z'}, MaxLineBytes+1))
	wantTooLarge(t, err, MaxLineBytes+1)
	if out.Len() != 0 {
		t.Fatalf("wrote %d bytes", out.Len())
	}
	// Exactly at the limit is fine.
	if err := NewWriter(&out).WriteLine(bytes.Repeat([]byte{'z'}, MaxLineBytes)); err != nil {
		t.Fatal(err)
	}
}

type failingWriter struct{ err error }

func (f failingWriter) Write(p []byte) (int, error) { return 0, f.err }

// Spec: FRM-036
func TestWriterWrapsIOErrors(t *testing.T) {
	boom := errors.New("closed pipe")
	w := NewWriter(failingWriter{boom})
	err := w.WriteLine([]byte("x"))
	wantKind(t, err, ErrIO)
	if !errors.Is(err, boom) || w.Err() != err {
		t.Fatalf("error = %v", err)
	}
}

// Spec: ERR-003, ERR-009
func TestErrorsNameTheirKind(t *testing.T) {
	for k, name := range map[ErrorKind]string{
		ErrIO: "Io", ErrProtocol: "Protocol", ErrInvalidUTF8: "InvalidUtf8",
		ErrUnexpectedEndOfStream: "UnexpectedEndOfStream", ErrPoisoned: "Poisoned",
	} {
		if k.String() != name {
			t.Fatalf("%d.String() = %q, want %q", k, k.String(), name)
		}
	}
	e := tooLarge(5)
	if !strings.Contains(e.Error(), "WireFrameTooLarge") || errors.Is(e, ErrInvalidUTF8) {
		t.Fatalf("message = %q", e.Error())
	}
}

// Spec: FRM-031, FRM-032
//
// Property: any sequence of newline-free UTF-8 lines survives the writer and
// the reader, whatever the read sizes.
func TestWriterReaderRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		lines := rapid.SliceOf(rapid.StringMatching(`[^\n]{0,300}`)).Draw(t, "lines")
		var buf bytes.Buffer
		w := NewWriter(&buf)
		for _, l := range lines {
			if err := w.WriteLine([]byte(l)); err != nil {
				t.Fatalf("write %q: %v", l, err)
			}
		}
		var src io.Reader = &buf
		if rapid.Bool().Draw(t, "one-byte") {
			src = iotest.OneByteReader(src)
		}
		r := NewReader(src)
		for i, want := range lines {
			got, err := r.ReadLine()
			if err != nil || string(got) != want {
				t.Fatalf("line %d = %q (%v), want %q", i, got, err, want)
			}
		}
		if _, err := r.ReadLine(); !errors.Is(err, ErrUnexpectedEndOfStream) {
			t.Fatalf("after last line: %v", err)
		}
	})
}
