package transport_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/jsonline"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/transport"
)

// recordingWriter records every Write and Flush call.
type recordingWriter struct {
	writes  [][]byte
	flushes int
	err     error
}

func (w *recordingWriter) Write(p []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	w.writes = append(w.writes, bytes.Clone(p))
	return len(p), nil
}

func (w *recordingWriter) Flush() error { w.flushes++; return nil }

// countingReader counts the bytes and calls read from r.
type countingReader struct {
	r     io.Reader
	n     int
	calls int
}

func (c *countingReader) Read(p []byte) (int, error) {
	c.calls++
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// endless yields 'x' forever.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

func jsonlineKind(t *testing.T, err error, k jsonline.ErrorKind) {
	t.Helper()
	var le *jsonline.Error
	if !errors.As(err, &le) || le.Kind != k {
		t.Fatalf("error %v, want jsonline kind %s", err, k)
	}
}

// Spec: TRN-001, FRM-031
// Sending writes the canonical frame line and one newline, then flushes.
func TestChannelSendWritesOneLine(t *testing.T) {
	host, worker := authPair(t, testSession)
	f, line := seal(t, host, protocol.InvokeMessage{Invocation: textInvocation(t, "r1", "hello")})
	w := &recordingWriter{}
	ch := transport.NewChannel(strings.NewReader(""), w, canonjson.Preserve)
	if err := ch.Send(f); err != nil {
		t.Fatal(err)
	}
	if len(w.writes) != 1 || !bytes.Equal(w.writes[0], append(bytes.Clone(line), '\n')) || w.flushes != 1 {
		t.Fatalf("writes %q, flushes %d", w.writes, w.flushes)
	}
	if _, err := worker.Open(line); err != nil {
		t.Fatal(err)
	}
}

// Spec: TRN-001, TRN-002, FRM-035
// Receiving decodes a frame without authenticating it; a carriage return before the newline is
// accepted.
func TestChannelReceiveDecodesWithoutOpening(t *testing.T) {
	host, worker := authPair(t, testSession)
	_, line := seal(t, worker, textResult(t, "r1", "out"))
	tampered := bytes.Replace(line, []byte(`"out"`), []byte(`"OUT"`), 1)
	input := string(line) + "\r\n" + string(tampered) + "\n"
	ch := transport.NewChannel(strings.NewReader(input), io.Discard, canonjson.Preserve)
	f, err := ch.Receive()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := host.OpenFrame(f); err != nil {
		t.Fatalf("the frame received with CR does not open: %v", err)
	}
	// The channel hands back a frame whose tag does not match; opening is the caller's job.
	g, err := ch.Receive()
	if err != nil {
		t.Fatalf("a tampered but well-formed frame must decode: %v", err)
	}
	if _, err := host.OpenFrame(g); !errors.Is(err, protocol.ErrInvalidAuthenticationTag) {
		t.Fatalf("open tampered: %v", err)
	}
}

// Spec: TRN-001, FRM-032, FRM-033, FRM-034, FRM-037
// Receive errors in order: size before decoding (a line of exactly 1 MiB reaches the decoder,
// one byte more does not), end of stream, UTF-8, decoding.
func TestChannelReceiveErrors(t *testing.T) {
	limit := jsonline.MaxLineBytes
	cases := map[string]struct {
		input string
		kind  jsonline.ErrorKind
		inner protocol.ErrorKind
	}{
		"exactly the limit":   {strings.Repeat("x", limit) + "\n", jsonline.ErrProtocol, protocol.ErrSerialization},
		"one over the limit":  {strings.Repeat("x", limit+1) + "\n", jsonline.ErrProtocol, protocol.ErrWireFrameTooLarge},
		"over, invalid utf-8": {strings.Repeat("\xff", limit+1) + "\n", jsonline.ErrProtocol, protocol.ErrWireFrameTooLarge},
		"partial final line":  {`{"sequence":1`, jsonline.ErrUnexpectedEndOfStream, 0},
		"clean end":           {"", jsonline.ErrUnexpectedEndOfStream, 0},
		"invalid utf-8":       {"{\xff}\n", jsonline.ErrInvalidUTF8, 0},
		"empty line":          {"\n", jsonline.ErrProtocol, protocol.ErrSerialization},
		"not a frame":         {`{"sequence":0}` + "\n", jsonline.ErrProtocol, protocol.ErrSerialization},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			ch := transport.NewChannel(strings.NewReader(c.input), io.Discard, canonjson.Preserve)
			_, err := ch.Receive()
			jsonlineKind(t, err, c.kind)
			if c.inner != 0 {
				wantProtocolKind(t, err, c.inner)
			}
			if !ch.Poisoned() {
				t.Fatal("a failed receive did not poison the channel")
			}
		})
	}
}

// Spec: TRN-001, FRM-032
// An over-long line is refused while streaming, without reading to its end.
func TestChannelOverlongLineIsBounded(t *testing.T) {
	src := &countingReader{r: endless{}}
	ch := transport.NewChannel(src, io.Discard, canonjson.Preserve)
	_, err := ch.Receive()
	wantProtocolKind(t, err, protocol.ErrWireFrameTooLarge)
	// The reader may hold the limit plus one byte and one read buffer, no more.
	if max := jsonline.MaxLineBytes + 1 + 64<<10; src.n > max {
		t.Fatalf("read %d bytes of an endless line, want at most %d", src.n, max)
	}
}

// Spec: TRN-003, FRM-036
// A failed receive poisons sending, and a failed send poisons receiving; a poisoned channel
// reads and writes nothing.
func TestChannelPoisonsBothDirections(t *testing.T) {
	host, worker := authPair(t, testSession)
	f, _ := seal(t, host, protocol.InvokeMessage{Invocation: textInvocation(t, "r1", "x")})
	_, reply := seal(t, worker, textResult(t, "r1", "out"))

	t.Run("receive poisons send", func(t *testing.T) {
		w := &recordingWriter{}
		ch := transport.NewChannel(strings.NewReader("\xff\n"), w, canonjson.Preserve)
		if _, err := ch.Receive(); err == nil {
			t.Fatal("invalid line accepted")
		}
		err := ch.Send(f)
		jsonlineKind(t, err, jsonline.ErrPoisoned)
		if !errors.Is(err, jsonline.ErrInvalidUTF8) || len(w.writes) != 0 {
			t.Fatalf("poisoned send: %v, writes %q", err, w.writes)
		}
	})
	t.Run("send poisons receive", func(t *testing.T) {
		src := &countingReader{r: bytes.NewReader(append(reply, '\n'))}
		ch := transport.NewChannel(src, &recordingWriter{err: io.ErrClosedPipe}, canonjson.Preserve)
		err := ch.Send(f)
		jsonlineKind(t, err, jsonline.ErrIO)
		if !errors.Is(err, io.ErrClosedPipe) {
			t.Fatalf("send: %v", err)
		}
		_, err = ch.Receive()
		jsonlineKind(t, err, jsonline.ErrPoisoned)
		if src.calls != 0 {
			t.Fatalf("a poisoned channel read %d times", src.calls)
		}
	})
	t.Run("unencodable frame", func(t *testing.T) {
		w := &recordingWriter{}
		ch := transport.NewChannel(strings.NewReader(""), w, canonjson.Preserve)
		big := protocol.Frame{Sequence: 1, Message: textResult(t, "r1", strings.Repeat("y", jsonline.MaxLineBytes)), Tag: f.Tag}
		err := ch.Send(big)
		jsonlineKind(t, err, jsonline.ErrProtocol)
		if len(w.writes) != 0 || !ch.Poisoned() {
			t.Fatalf("writes %d, poisoned %v", len(w.writes), ch.Poisoned())
		}
	})
}

// fakeChannel is a scripted FrameChannel.
type fakeChannel struct {
	sent    []protocol.Frame
	sendErr error
	replies []func() (protocol.Frame, error)
}

func (c *fakeChannel) Send(f protocol.Frame) error {
	if c.sendErr != nil {
		return c.sendErr
	}
	c.sent = append(c.sent, f)
	return nil
}

func (c *fakeChannel) Receive() (protocol.Frame, error) {
	if len(c.replies) == 0 {
		return protocol.Frame{}, &jsonline.Error{Kind: jsonline.ErrUnexpectedEndOfStream}
	}
	r := c.replies[0]
	c.replies = c.replies[1:]
	return r()
}

func (c *fakeChannel) reply(f protocol.Frame) {
	c.replies = append(c.replies, func() (protocol.Frame, error) { return f, nil })
}

// Spec: TRN-010, TRN-011
// SendOpenSession requires the host role and the manifest's session and sends open_session as
// sequence 1; the transport requires a host authenticator.
func TestSendOpenSession(t *testing.T) {
	host, worker := authPair(t, testSession)
	ch := &fakeChannel{}
	wantKind(t, transport.SendOpenSession(worker, ch, testManifest(t)), transport.ErrRequiresHostAuthenticator)
	other, _ := authPair(t, "session-2")
	wantKind(t, transport.SendOpenSession(other, ch, testManifest(t)), transport.ErrSessionMismatch)
	if len(ch.sent) != 0 {
		t.Fatal("a refused open sent a frame")
	}
	if err := transport.SendOpenSession(host, ch, testManifest(t)); err != nil {
		t.Fatal(err)
	}
	if len(ch.sent) != 1 || ch.sent[0].Sequence != 1 || ch.sent[0].Message.Type() != protocol.TypeOpenSession {
		t.Fatalf("sent %+v", ch.sent)
	}
	if _, err := worker.OpenFrame(ch.sent[0]); err != nil {
		t.Fatal(err)
	}
	_, err := transport.NewFrameTransport(worker, ch)
	wantKind(t, err, transport.ErrRequiresHostAuthenticator)
}

// frameFixture is a FrameTransport over a fake channel after open_session.
func frameFixture(t *testing.T) (*transport.FrameTransport, *fakeChannel, *protocol.Authenticator) {
	t.Helper()
	host, worker := authPair(t, testSession)
	ch := &fakeChannel{}
	if err := transport.SendOpenSession(host, ch, testManifest(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := worker.OpenFrame(ch.sent[0]); err != nil {
		t.Fatal(err)
	}
	ch.sent = nil
	tr, err := transport.NewFrameTransport(host, ch)
	if err != nil {
		t.Fatal(err)
	}
	return tr, ch, worker
}

// Spec: TRN-012, TRN-015
// Healthy: a dispatch sends exactly one invoke, and returns the opened result; the transport
// stays healthy.
func TestFrameTransportHealthy(t *testing.T) {
	tr, ch, worker := frameFixture(t)
	for i, id := range []string{"r1", "r2"} {
		f, _ := seal(t, worker, textResult(t, id, "out-"+id))
		ch.reply(f)
		res, err := tr.Dispatch(textInvocation(t, id, "in"), testDeadline)
		if err != nil || res.RequestID != id || res.Payload.Text != "out-"+id {
			t.Fatalf("dispatch %s: %+v, %v", id, res, err)
		}
		if len(ch.sent) != i+1 || ch.sent[i].Message.Type() != protocol.TypeInvoke || tr.Poisoned() {
			t.Fatalf("sent %d frames, poisoned %v", len(ch.sent), tr.Poisoned())
		}
		if _, err := worker.OpenFrame(ch.sent[i]); err != nil {
			t.Fatal(err)
		}
	}
}

// Spec: TRN-012
// A seal failure is Protocol, sends nothing and does not poison; the next dispatch uses the
// sequence the failed one did not consume.
func TestFrameTransportSealFailureDoesNotPoison(t *testing.T) {
	tr, ch, worker := frameFixture(t)
	inv, _ := protocol.NewToolInvocation("session-2", "r1", toolText, protocol.TextPayload("x"))
	_, err := tr.Dispatch(inv, testDeadline)
	wantKind(t, err, transport.ErrProtocol)
	wantProtocolKind(t, err, protocol.ErrUnknownSession)
	if tr.Poisoned() || len(ch.sent) != 0 {
		t.Fatalf("poisoned %v, sent %d", tr.Poisoned(), len(ch.sent))
	}
	f, _ := seal(t, worker, textResult(t, "r1", "out"))
	ch.reply(f)
	if _, err := tr.Dispatch(textInvocation(t, "r1", "x"), testDeadline); err != nil {
		t.Fatal(err)
	}
	if _, err := worker.OpenFrame(ch.sent[0]); err != nil || ch.sent[0].Sequence != 2 {
		t.Fatalf("sequence %d: %v", ch.sent[0].Sequence, err)
	}
}

// Spec: TRN-013, TRN-014
// Healthy → Poisoned: a send failure, a receive failure, an answer that does not open, and an
// answer of another kind each poison; so does Discard. A poisoned transport sends nothing.
func TestFrameTransportPoisoning(t *testing.T) {
	cases := map[string]struct {
		setup func(t *testing.T, ch *fakeChannel, worker *protocol.Authenticator)
		kind  transport.ErrorKind
	}{
		"send": {func(t *testing.T, ch *fakeChannel, _ *protocol.Authenticator) {
			ch.sendErr = &jsonline.Error{Kind: jsonline.ErrIO, Err: io.ErrClosedPipe}
		}, transport.ErrChannel},
		"receive": {func(t *testing.T, ch *fakeChannel, _ *protocol.Authenticator) {}, transport.ErrChannel},
		"open": {func(t *testing.T, ch *fakeChannel, worker *protocol.Authenticator) {
			f, _ := seal(t, worker, textResult(t, "r1", "out"))
			f.Tag[5] ^= 0x10
			ch.reply(f)
		}, transport.ErrProtocol},
		"kind": {func(t *testing.T, ch *fakeChannel, worker *protocol.Authenticator) {
			f, _ := seal(t, worker, cancellationResult(t, "c1", "r1", toolText, protocol.OutcomeTooLate))
			ch.reply(f)
		}, transport.ErrUnexpectedResponse},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			tr, ch, worker := frameFixture(t)
			c.setup(t, ch, worker)
			_, err := tr.Dispatch(textInvocation(t, "r1", "x"), testDeadline)
			wantKind(t, err, c.kind)
			if !tr.Poisoned() {
				t.Fatal("not poisoned")
			}
			ch.sendErr = nil
			sent := len(ch.sent)
			_, err = tr.Dispatch(textInvocation(t, "r2", "x"), testDeadline)
			wantKind(t, err, transport.ErrPoisoned)
			if len(ch.sent) != sent {
				t.Fatal("a poisoned transport sent a frame")
			}
		})
	}
	t.Run("discard", func(t *testing.T) {
		tr, ch, _ := frameFixture(t)
		tr.Discard()
		_, err := tr.Dispatch(textInvocation(t, "r1", "x"), testDeadline)
		wantKind(t, err, transport.ErrPoisoned)
		if len(ch.sent) != 0 {
			t.Fatal("sent after discard")
		}
	})
}
