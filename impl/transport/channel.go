package transport

import (
	"io"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/jsonline"
	"github.com/splashv5/conform/impl/protocol"
)

// FrameChannel carries one ordered sequence of frames in each direction between a host and one
// worker. It moves frames only; authenticating them is the caller's job.
type FrameChannel interface {
	// Send writes one frame.
	Send(f protocol.Frame) error
	// Receive reads and decodes the next frame.
	Receive() (protocol.Frame, error)
}

// LineChannel is a FrameChannel that can also move frame lines as they are, for a host that
// seals its requests itself and opens the answers itself. Channel implements it.
type LineChannel interface {
	FrameChannel
	// SendLine writes one already sealed frame line.
	SendLine(line []byte) error
	// ReceiveLine reads the next frame line without decoding it.
	ReceiveLine() ([]byte, error)
}

// Channel is the JSON-line FrameChannel over a worker's output stream and input stream
// (TRN-001 to TRN-003). Each frame travels as its canonical line followed by one newline and a
// flush. A received line may hold at most 1 MiB before its newline, which is enforced while
// reading, before the line is decoded.
//
// The first failure of either direction poisons the whole channel, because the peers can no
// longer agree on frame boundaries: every later call returns a *jsonline.Error of kind
// jsonline.ErrPoisoned that wraps the first failure. A Channel is not safe for concurrent use.
type Channel struct {
	r    *jsonline.Reader
	w    *jsonline.Writer
	mode canonjson.Mode
	err  error // first failure
}

// NewChannel returns a channel that reads worker frames from r, decoding them in number mode
// mode (the Go reference host receives in canonjson.Preserve), and writes host frames to w.
func NewChannel(r io.Reader, w io.Writer, mode canonjson.Mode) *Channel {
	return &Channel{r: jsonline.NewReader(r), w: jsonline.NewWriter(w), mode: mode}
}

// Poisoned reports whether an earlier failure made the channel unusable.
func (c *Channel) Poisoned() bool { return c.err != nil }

// Send writes f as one line and flushes (TRN-001). Errors are *jsonline.Error values: the
// protocol error of encoding f (jsonline.ErrProtocol, for example WireFrameTooLarge), or an
// I/O failure (jsonline.ErrIO). Any error poisons the channel.
func (c *Channel) Send(f protocol.Frame) error {
	if c.err != nil {
		return c.poisoned()
	}
	line, err := protocol.EncodeFrame(f)
	if err != nil {
		return c.fail(&jsonline.Error{Kind: jsonline.ErrProtocol, Err: err})
	}
	if err := c.w.WriteLine(line); err != nil {
		return c.fail(err)
	}
	return nil
}

// Receive reads the next line and decodes it as a frame, without authenticating it (TRN-001,
// TRN-002). Errors are *jsonline.Error values, in the order the line is checked: an I/O
// failure, a line over 1 MiB (jsonline.ErrProtocol wrapping WireFrameTooLarge, reported
// without buffering more than the limit), end of input before a newline
// (jsonline.ErrUnexpectedEndOfStream), a line that is not UTF-8 (jsonline.ErrInvalidUTF8),
// then any frame decoding error (jsonline.ErrProtocol). Any error poisons the channel.
func (c *Channel) Receive() (protocol.Frame, error) {
	if c.err != nil {
		return protocol.Frame{}, c.poisoned()
	}
	line, err := c.r.ReadLine()
	if err != nil {
		return protocol.Frame{}, c.fail(err)
	}
	f, err := protocol.DecodeFrame(line, c.mode)
	if err != nil {
		return protocol.Frame{}, c.fail(&jsonline.Error{Kind: jsonline.ErrProtocol, Err: err})
	}
	return f, nil
}

// SendLine writes one already encoded frame line and flushes (TRN-098). The line is not
// re-encoded, so its bytes are exactly those that were sealed. Errors and poisoning are those of
// Send: a line over 1 MiB or one holding a newline is refused (jsonline.ErrProtocol) before
// anything is written.
func (c *Channel) SendLine(line []byte) error {
	if c.err != nil {
		return c.poisoned()
	}
	if err := c.w.WriteLine(line); err != nil {
		return c.fail(err)
	}
	return nil
}

// ReceiveLine reads the next line, at most 1 MiB before its newline and valid UTF-8, and
// returns a copy of it without decoding it (TRN-098). Its errors are those of Receive before
// decoding; any error poisons the channel.
func (c *Channel) ReceiveLine() ([]byte, error) {
	if c.err != nil {
		return nil, c.poisoned()
	}
	line, err := c.r.ReadLine()
	if err != nil {
		return nil, c.fail(err)
	}
	return append([]byte(nil), line...), nil
}

func (c *Channel) fail(err error) error {
	c.err = err
	return err
}

func (c *Channel) poisoned() error {
	return &jsonline.Error{Kind: jsonline.ErrPoisoned, Err: c.err}
}
