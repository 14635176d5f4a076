// Package jsonline is the newline-delimited transport for authenticated
// worker frames: one frame per line, each line at most MaxLineBytes bytes
// (excluding the newline), enforced before more than a bounded amount of
// input is buffered.
//
// A Reader or Writer is poisoned by its first error: every later call
// returns one ErrPoisoned error that wraps the first, because the two peers
// can no longer agree on frame boundaries.
package jsonline

import (
	"bytes"
	"io"
	"unicode/utf8"

	"github.com/splashv5/conform/impl/protocol"
)

// MaxLineBytes is the largest accepted line, excluding its newline: the
// protocol's wire frame limit (1 MiB).
const MaxLineBytes = protocol.MaxWireFrameBytes

// readBufferBytes is the fixed size of a Reader's read buffer.
const readBufferBytes = 64 << 10

// maxEmptyReads bounds consecutive (0, nil) reads before giving up, as
// bufio does.
const maxEmptyReads = 100

// Reader splits a byte stream into lines. It never holds more than
// MaxLineBytes+1 bytes of one line plus its fixed 64 KiB read buffer.
type Reader struct {
	src   io.Reader
	buf   []byte // fixed-size read buffer
	start int    // first unconsumed byte of buf
	end   int    // end of valid data in buf
	eof   bool   // src reported io.EOF
	line  []byte // accumulates a line that spans reads; cap ≤ MaxLineBytes+1
	err   error  // first error
	later error  // ErrPoisoned wrapping err, returned by every later call
}

// NewReader returns a Reader over src. The Reader reads ahead, so bytes after
// the current line may already have been taken from src.
func NewReader(src io.Reader) *Reader {
	return &Reader{src: src, buf: make([]byte, readBufferBytes)}
}

// Err returns the first error, which poisoned the Reader, or nil.
func (r *Reader) Err() error { return r.err }

// ReadLine returns the next line without its terminating newline. A carriage
// return before the newline is kept and counts toward the limit. The
// returned slice is only valid until the next call.
//
// Errors, checked in this order: an I/O failure (ErrIO); more than
// MaxLineBytes bytes before the newline (ErrProtocol wrapping
// WireFrameTooLarge, detected as soon as the limit is crossed, without
// waiting for the newline); end of
// input before the newline (ErrUnexpectedEndOfStream); a line that is not
// UTF-8 (ErrInvalidUTF8). After any error, every later call returns the
// same ErrPoisoned error without reading.
func (r *Reader) ReadLine() ([]byte, error) {
	if r.err != nil {
		return nil, r.later
	}
	line, err := r.readLine()
	if err != nil {
		r.err, r.later = err, &Error{Kind: ErrPoisoned, Err: err}
		r.line = nil
		return nil, err
	}
	return line, nil
}

func (r *Reader) readLine() ([]byte, error) {
	r.line = r.line[:0]
	for {
		if r.start == r.end {
			if err := r.fill(); err != nil {
				return nil, err
			}
		}
		avail := r.buf[r.start:r.end]
		if i := bytes.IndexByte(avail, '\n'); i >= 0 {
			if actual := len(r.line) + i; actual > MaxLineBytes {
				return nil, tooLarge(actual)
			}
			var line []byte
			if len(r.line) == 0 {
				line = avail[:i] // the whole line is in the read buffer
			} else {
				r.line = append(r.line, avail[:i]...)
				line = r.line
			}
			r.start += i + 1
			if !utf8.Valid(line) {
				return nil, &Error{Kind: ErrInvalidUTF8}
			}
			return line, nil
		}
		// No newline yet: keep at most MaxLineBytes+1 bytes, which is enough
		// to prove the line too large.
		take := min(len(avail), MaxLineBytes+1-len(r.line))
		r.grow(take)
		r.line = append(r.line, avail[:take]...)
		r.start += take
		if len(r.line) > MaxLineBytes {
			return nil, tooLarge(len(r.line))
		}
	}
}

// grow makes room for n more bytes in r.line without letting its capacity
// exceed MaxLineBytes+1.
func (r *Reader) grow(n int) {
	need := len(r.line) + n
	if need <= cap(r.line) {
		return
	}
	newCap := max(2*cap(r.line), need, readBufferBytes)
	newCap = min(newCap, MaxLineBytes+1)
	grown := make([]byte, len(r.line), newCap)
	copy(grown, r.line)
	r.line = grown
}

// fill reads more input into the empty read buffer.
func (r *Reader) fill() error {
	if r.eof {
		return &Error{Kind: ErrUnexpectedEndOfStream}
	}
	r.start, r.end = 0, 0
	for range maxEmptyReads {
		n, err := r.src.Read(r.buf)
		if n < 0 || n > len(r.buf) {
			return &Error{Kind: ErrIO, Err: io.ErrShortBuffer}
		}
		r.end = n
		if err == io.EOF {
			r.eof = true
			if n == 0 {
				return &Error{Kind: ErrUnexpectedEndOfStream}
			}
			return nil
		}
		if err != nil {
			// Bytes delivered with an error are dropped: the stream is
			// poisoned either way.
			return &Error{Kind: ErrIO, Err: err}
		}
		if n > 0 {
			return nil
		}
	}
	return &Error{Kind: ErrIO, Err: io.ErrNoProgress}
}

// Writer writes one line per frame and flushes after each.
type Writer struct {
	dst   io.Writer
	buf   []byte
	err   error // first error
	later error // ErrPoisoned wrapping err
}

// flusher is implemented by buffered writers such as *bufio.Writer.
type flusher interface{ Flush() error }

// NewWriter returns a Writer over dst. If dst has a Flush() error method, it
// is called after every line.
func NewWriter(dst io.Writer) *Writer { return &Writer{dst: dst} }

// Err returns the first error, which poisoned the Writer, or nil.
func (w *Writer) Err() error { return w.err }

// WriteLine writes line followed by one newline in a single Write call, then
// flushes. A line longer than MaxLineBytes (ErrProtocol wrapping
// WireFrameTooLarge) or one that contains a newline (ErrProtocol wrapping
// Serialization; an encoded frame never does) is refused before anything is
// written. Any error poisons the Writer: later calls return one
// ErrPoisoned error wrapping it and write nothing.
func (w *Writer) WriteLine(line []byte) error {
	if w.err != nil {
		return w.later
	}
	if err := w.writeLine(line); err != nil {
		w.err, w.later = err, &Error{Kind: ErrPoisoned, Err: err}
		return err
	}
	return nil
}

func (w *Writer) writeLine(line []byte) error {
	if len(line) > MaxLineBytes {
		return tooLarge(len(line))
	}
	if bytes.IndexByte(line, '\n') >= 0 {
		return &Error{Kind: ErrProtocol, Err: &protocol.Error{Kind: protocol.ErrSerialization, Message: "frame line contains a line feed"}}
	}
	w.buf = append(append(w.buf[:0], line...), '\n')
	n, err := w.dst.Write(w.buf)
	if err == nil && n != len(w.buf) {
		err = io.ErrShortWrite
	}
	if err != nil {
		return &Error{Kind: ErrIO, Err: err}
	}
	if f, ok := w.dst.(flusher); ok {
		if err := f.Flush(); err != nil {
			return &Error{Kind: ErrIO, Err: err}
		}
	}
	return nil
}
