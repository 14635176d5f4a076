package worker

import (
	"errors"
	"io"

	"github.com/splashv5/conform/impl/jsonline"
)

// LineReader yields frame lines. ReadLine returns a line without its newline, valid until the
// next call, or an error: an *Error of kind ErrEndOfInput when the input ended cleanly at a
// line boundary, and of kind ErrFrame for any other read failure.
type LineReader interface {
	ReadLine() ([]byte, error)
}

// FrameReader reads frame lines with the bounded JSON-line rules and tells a clean end of
// input (at a line boundary) from a torn one.
type FrameReader struct {
	lines    *jsonline.Reader
	src      *countingReader
	consumed int64
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// NewFrameReader returns a FrameReader over src. When src is the buffered reader the
// bootstrap was read from, no byte it buffered is lost (WRK-090).
func NewFrameReader(src io.Reader) *FrameReader {
	c := &countingReader{r: src}
	return &FrameReader{lines: jsonline.NewReader(c), src: c}
}

// ReadLine returns the next frame line (see LineReader).
func (f *FrameReader) ReadLine() ([]byte, error) {
	line, err := f.lines.ReadLine()
	if err != nil {
		if errors.Is(err, jsonline.ErrUnexpectedEndOfStream) && f.src.n == f.consumed {
			return nil, &Error{Kind: ErrEndOfInput, Err: err}
		}
		return nil, &Error{Kind: ErrFrame, Err: err}
	}
	f.consumed += int64(len(line)) + 1
	return line, nil
}
