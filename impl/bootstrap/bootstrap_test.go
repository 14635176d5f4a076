package bootstrap

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/jsonline"
	"github.com/splashv5/conform/impl/protocol"
)

func key(t *testing.T, b byte) *protocol.SessionKey {
	t.Helper()
	k, err := protocol.NewSessionKey(bytes.Repeat([]byte{b}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// vector9 is the reference bootstrap for session "session-1" and key 32 x 0xab.
func vector9(t *testing.T) []byte {
	t.Helper()
	b, err := hex.DecodeString("53504c50424f4f54" + "01" + "09" + "73657373696f6e2d31" + strings.Repeat("ab", 32))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type flushCounter struct {
	bytes.Buffer
	writes, flushes int
}

func (f *flushCounter) Write(p []byte) (int, error) { f.writes++; return f.Buffer.Write(p) }
func (f *flushCounter) Flush() error                { f.flushes++; return nil }

// Spec: BOOT-001, BOOT-002, BOOT-004
func TestWriteProducesTheReferenceBytes(t *testing.T) {
	var out flushCounter
	if err := Write(&out, "session-1", key(t, 0xab)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), vector9(t)) || out.Len() != 51 || Size(9) != 51 {
		t.Fatalf("wrote %x", out.Bytes())
	}
	if out.writes != 1 || out.flushes != 1 {
		t.Fatalf("%d writes, %d flushes", out.writes, out.flushes)
	}
}

// Spec: BOOT-003
func TestWriteRefusesInvalidInputsAndWritesNothing(t *testing.T) {
	closed := key(t, 1)
	closed.Close()
	for _, tc := range []struct {
		name    string
		session string
		key     *protocol.SessionKey
		want    error
		wrapped bool // reported as ErrProtocol wrapping want, not as want alone
	}{
		{"uppercase id", "Session", key(t, 1), protocol.ErrInvalidToken, false},
		{"empty id", "", key(t, 1), protocol.ErrInvalidToken, false},
		{"129-byte id", strings.Repeat("a", 129), key(t, 1), protocol.ErrInvalidToken, false},
		{"nil key", "s", nil, protocol.ErrWeakSessionKey, true},
		{"closed key", "s", closed, protocol.ErrWeakSessionKey, true},
	} {
		var out bytes.Buffer
		err := Write(&out, tc.session, tc.key)
		if errors.Is(err, ErrProtocol) != tc.wrapped || !errors.Is(err, tc.want) || out.Len() != 0 {
			t.Fatalf("%s: error %v, wrote %d bytes", tc.name, err, out.Len())
		}
	}
}

type brokenWriter struct{ n int }

func (b brokenWriter) Write(p []byte) (int, error) { return b.n, io.ErrClosedPipe }

type brokenFlusher struct{ bytes.Buffer }

func (*brokenFlusher) Flush() error { return io.ErrClosedPipe }

// Spec: BOOT-004, BOOT-015
func TestWriteReportsIOErrors(t *testing.T) {
	for _, w := range []io.Writer{brokenWriter{0}, brokenWriter{10}, &brokenFlusher{}} {
		err := Write(w, "session-1", key(t, 0xab))
		if !errors.Is(err, ErrIO) || !errors.Is(err, io.ErrClosedPipe) {
			t.Fatalf("%T: %v", w, err)
		}
		if strings.Contains(strings.ToLower(err.Error()), "abab") {
			t.Fatalf("error leaks the key: %v", err)
		}
	}
}

// Spec: BOOT-001, BOOT-012, BOOT-018
func TestReadVectorAndBuildTheWorkerAuthenticator(t *testing.T) {
	b, err := Read(bytes.NewReader(vector9(t)))
	if err != nil {
		t.Fatal(err)
	}
	if b.SessionID != "session-1" || !b.Key.Equal(key(t, 0xab)) {
		t.Fatalf("decoded %v", b)
	}
	worker, err := b.WorkerAuthenticator(canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	if worker.Role() != protocol.RoleWorker || worker.SessionID() != "session-1" || worker.NextIncoming() != 1 {
		t.Fatalf("authenticator %v", worker)
	}
}

// The bootstrap and the JSON frames share one buffered stream: Read consumes
// exactly 42+L bytes and the first frame line is intact afterwards.
//
// Spec: BOOT-012, BOOT-013, BOOT-018
func TestReadLeavesTheFollowingFramesIntact(t *testing.T) {
	k := key(t, 0x07)
	host, err := protocol.NewAuthenticator("session-1", k, protocol.RoleHost, canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := protocol.NewCapabilityManifest("session-1", []protocol.CapabilityGrant{protocol.TextGrant("text.echo")})
	if err != nil {
		t.Fatal(err)
	}
	_, line, err := host.Seal(protocol.OpenSessionMessage{Manifest: manifest})
	if err != nil {
		t.Fatal(err)
	}
	var stream bytes.Buffer
	if err := Write(&stream, "session-1", k); err != nil {
		t.Fatal(err)
	}
	if err := jsonline.NewWriter(&stream).WriteLine(line); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"bufio", "one byte at a time", "counting"} {
		src := bytes.NewReader(stream.Bytes())
		var br io.Reader
		switch name {
		case "bufio":
			br = bufio.NewReaderSize(src, 16) // smaller than the preamble
		case "one byte at a time":
			br = iotest.OneByteReader(src)
		case "counting":
			br = src
		}
		b, err := Read(br)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if name == "counting" && src.Len() != len(line)+1 {
			t.Fatalf("Read consumed %d bytes, want %d", stream.Len()-src.Len(), Size(len("session-1")))
		}
		worker, err := b.WorkerAuthenticator(canonjson.Preserve)
		if err != nil {
			t.Fatal(err)
		}
		got, err := jsonline.NewReader(br).ReadLine()
		if err != nil || !bytes.Equal(got, line) {
			t.Fatalf("%s: first frame line %q (%v)", name, got, err)
		}
		if f, err := worker.Open(got); err != nil || f.Message.Type() != protocol.TypeOpenSession {
			t.Fatalf("%s: worker cannot open the first frame: %v", name, err)
		}
	}
}

// errAfter returns data, then err instead of io.EOF.
type errAfter struct {
	data []byte
	err  error
}

func (e *errAfter) Read(p []byte) (int, error) {
	if len(e.data) == 0 {
		return 0, e.err
	}
	n := copy(p, e.data)
	e.data = e.data[n:]
	return n, nil
}

// Spec: BOOT-005, BOOT-006, BOOT-007, BOOT-008, BOOT-009, BOOT-010, BOOT-011, BOOT-023, ERR-002
func TestReadChecksEachPieceInOrder(t *testing.T) {
	valid := vector9(t)
	with := func(off int, b ...byte) []byte {
		out := append([]byte(nil), valid...)
		copy(out[off:], b)
		return out
	}
	zeroKey := append(append([]byte(nil), valid[:19]...), make([]byte, 32)...)
	longID := append(append([]byte("SPLPBOOT\x01\x80"), strings.Repeat("a", 128)...), bytes.Repeat([]byte{1}, 32)...)
	cases := []struct {
		name  string
		input []byte
		kind  ErrorKind
		inner error // a protocol kind or io error the error must also match
	}{
		{"empty", nil, ErrIO, io.ErrUnexpectedEOF},
		{"short magic", valid[:5], ErrIO, io.ErrUnexpectedEOF},
		{"wrong magic", with(0, 's'), ErrInvalidMagic, nil},
		{"wrong magic, short", []byte("SPLPBOOX"), ErrInvalidMagic, nil},
		{"no version", valid[:8], ErrIO, io.ErrUnexpectedEOF},
		{"version 2", with(8, 2), ErrUnsupportedVersion, nil},
		{"version 0, stream ends", append(valid[:8:8], 0), ErrUnsupportedVersion, nil},
		{"no length", valid[:9], ErrIO, io.ErrUnexpectedEOF},
		{"length 0", with(9, 0), ErrInvalidSessionIDLength, nil},
		{"length 129, nothing after", append(valid[:9:9], 129), ErrInvalidSessionIDLength, nil},
		{"short id", valid[:12], ErrIO, io.ErrUnexpectedEOF},
		{"invalid UTF-8 id", with(10, 0xff), ErrInvalidSessionIDEncoding, nil},
		{"non-token id", with(10, 'S'), ErrProtocol, protocol.ErrInvalidToken},
		{"non-token id before short key", with(10, 'S')[:25], ErrProtocol, protocol.ErrInvalidToken},
		{"UTF-8 but not a token", with(10, 0xc3, 0xa9), ErrProtocol, protocol.ErrInvalidToken},
		{"short key", valid[:50], ErrIO, io.ErrUnexpectedEOF},
		{"zero key", zeroKey, ErrProtocol, protocol.ErrWeakSessionKey},
	}
	for _, tc := range cases {
		_, err := Read(bytes.NewReader(tc.input))
		if !errors.Is(err, tc.kind) || tc.inner != nil && !errors.Is(err, tc.inner) {
			t.Fatalf("%s: error %v, want %v / %v", tc.name, err, tc.kind, tc.inner)
		}
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("%s: not a *Error", tc.name)
		}
		switch tc.kind {
		case ErrUnsupportedVersion:
			if e.Version != tc.input[8] {
				t.Fatalf("%s: version %d", tc.name, e.Version)
			}
		case ErrInvalidSessionIDLength:
			if e.Actual != int(tc.input[9]) || e.Maximum != 128 {
				t.Fatalf("%s: actual %d maximum %d", tc.name, e.Actual, e.Maximum)
			}
		}
	}
	// The longest id is accepted.
	b, err := Read(bytes.NewReader(longID))
	if err != nil || len(b.SessionID) != 128 {
		t.Fatalf("128-byte id: %v", err)
	}
	// An InvalidToken error names the session id field.
	_, err = Read(bytes.NewReader(with(10, 'S')))
	var pe *protocol.Error
	if !errors.As(err, &pe) || pe.Field != "session id" || pe.Value != "Session-1" {
		t.Fatalf("token error %v", err)
	}
}

// Spec: BOOT-015
func TestReadReportsOtherIOErrorsAsIO(t *testing.T) {
	boom := errors.New("device gone")
	for _, cut := range []int{0, 4, 8, 9, 15, 30} {
		_, err := Read(&errAfter{data: vector9(t)[:cut], err: boom})
		if !errors.Is(err, ErrIO) || !errors.Is(err, boom) || errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("cut %d: %v", cut, err)
		}
	}
}

// Spec: BOOT-014
func TestReadNeverReadsPastThePreamble(t *testing.T) {
	// A reader that fails the test if asked for more than the preamble:
	// it serves the preamble and then blocks (here: fails) on any further
	// read.
	r := &strictReader{data: vector9(t)}
	if _, err := Read(r); err != nil {
		t.Fatal(err)
	}
	if r.overread {
		t.Fatal("Read asked for bytes beyond the preamble")
	}
	if allocs := testing.AllocsPerRun(20, func() {
		if _, err := Read(bytes.NewReader(vector9(t))); err != nil {
			t.Fatal(err)
		}
	}); allocs > 8 {
		t.Fatalf("Read allocates %.0f times", allocs)
	}
}

type strictReader struct {
	data     []byte
	overread bool
}

func (s *strictReader) Read(p []byte) (int, error) {
	if len(p) > len(s.data) {
		s.overread = true
	}
	if len(s.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.data)
	s.data = s.data[n:]
	return n, nil
}

// Spec: BOOT-021, ERR-014
func TestBootstrapFormattingAndErrorsHideTheKey(t *testing.T) {
	b, err := Read(bytes.NewReader(vector9(t)))
	if err != nil {
		t.Fatal(err)
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%x", "%q"} {
		for _, v := range []any{b, &b} {
			out := fmt.Sprintf(verb, v)
			if strings.Contains(strings.ToLower(out), "abab") || strings.Contains(out, "171") || strings.Contains(out, "\xab") {
				t.Fatalf("%s leaks: %s", verb, out)
			}
			if !strings.Contains(out, "session-1") && verb != "%x" {
				t.Fatalf("%s hides the session id: %s", verb, out)
			}
		}
	}
	zeroKey := append(vector9(t)[:19:19], make([]byte, 32)...)
	_, err = Read(bytes.NewReader(zeroKey))
	if msg := err.Error(); strings.Contains(msg, "0000") {
		t.Fatalf("error echoes key bytes: %s", msg)
	}
}

func TestErrorKindNames(t *testing.T) {
	want := map[ErrorKind]string{ErrIO: "Io", ErrInvalidMagic: "InvalidMagic", ErrUnsupportedVersion: "UnsupportedVersion",
		ErrInvalidSessionIDLength: "InvalidSessionIdLength", ErrInvalidSessionIDEncoding: "InvalidSessionIdEncoding", ErrProtocol: "Protocol"}
	for k, name := range want {
		if k.String() != name {
			t.Fatalf("%d: %q", k, k.String())
		}
	}
	// The bootstrap UnsupportedVersion is not the protocol one.
	err := &Error{Kind: ErrUnsupportedVersion, Version: 2}
	if errors.Is(err, protocol.ErrUnsupportedVersion) || err.Error() != "bootstrap: unsupported private worker bootstrap version: 2" {
		t.Fatalf("%v", err)
	}
}

// Round trip over every id length and a spread of keys.
func TestWriteReadRoundTrip(t *testing.T) {
	for n := 1; n <= MaxSessionIDBytes; n++ {
		id := strings.Repeat("x", n-1) + "9"
		k := key(t, byte(n))
		var buf bytes.Buffer
		if err := Write(&buf, id, k); err != nil {
			t.Fatal(err)
		}
		if buf.Len() != Size(n) {
			t.Fatalf("len %d: %d bytes", n, buf.Len())
		}
		b, err := Read(&buf)
		if err != nil || b.SessionID != id || !b.Key.Equal(k) || buf.Len() != 0 {
			t.Fatalf("len %d: %v", n, err)
		}
	}
}
