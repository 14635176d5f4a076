package fuzz

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/bootstrap"
	"github.com/splashv5/conform/impl/protocol"
)

// bootstrapVector is the reference bootstrap for session "session-1" and key
// 32 x 0xab (51 bytes).
func bootstrapVector() []byte {
	b, err := hex.DecodeString("53504c50424f4f540109" + "73657373696f6e2d31" + strings.Repeat("ab", 32))
	if err != nil {
		panic(err)
	}
	return b
}

// FuzzBootstrapRead checks the bootstrap reader on arbitrary streams: it
// never panics; it consumes exactly the bytes of the pieces it read (42 + L
// on success, and on failure exactly up to the end of the piece that failed,
// or the whole stream for an early end); a successful read re-encodes to the
// consumed bytes; and any session id and key built from the input round-trip
// through Write and Read.
//
// Spec: BOOT-001, BOOT-005, BOOT-006, BOOT-007, BOOT-008, BOOT-009, BOOT-010, BOOT-011, BOOT-012, ERR-017
func FuzzBootstrapRead(f *testing.F) {
	v := bootstrapVector()
	f.Add(v)
	f.Add(append(append([]byte(nil), v...), "{\"sequence\":1}\n"...))
	f.Add(v[:50])
	f.Add([]byte("SPLPBOOT\x02"))
	f.Add([]byte("SPLPBOOT\x01\x00"))
	f.Add([]byte("SPLPBOOT\x01\x81"))
	f.Add([]byte("SPLPBOOT\x01\x02\xff\xfe"))
	f.Add([]byte("SPLPBOOT\x01\x02AB"))
	f.Add(append([]byte("SPLPBOOT\x01\x01a"), make([]byte, 32)...))
	f.Add([]byte("splpboot"))
	f.Add([]byte{})
	addSeeds(f, bootstrapSeeds(f))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		b, err := bootstrap.Read(r)
		consumed := len(data) - r.Len()
		if err == nil {
			n := len(b.SessionID)
			if consumed != bootstrap.Size(n) || !protocol.IsToken(b.SessionID) {
				t.Fatalf("consumed %d bytes for a %d-byte id", consumed, n)
			}
			var out bytes.Buffer
			if err := bootstrap.Write(&out, b.SessionID, b.Key); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out.Bytes(), data[:consumed]) {
				t.Fatalf("re-encoding differs:\n%x\n%x", out.Bytes(), data[:consumed])
			}
		} else {
			var e *bootstrap.Error
			if !errors.As(err, &e) {
				t.Fatalf("untyped error %v", err)
			}
			if want := consumedBefore(e, data); consumed != want {
				t.Fatalf("%v: consumed %d bytes, want %d", err, consumed, want)
			}
		}
		roundTrip(t, data)
	})
}

// consumedBefore is the number of bytes a reader that checks each piece
// right after reading it has taken when it reports e.
func consumedBefore(e *bootstrap.Error, data []byte) int {
	switch {
	case e.Kind == bootstrap.ErrIO:
		return len(data) // only an early end: the stream is exhausted
	case e.Kind == bootstrap.ErrInvalidMagic:
		return 8
	case e.Kind == bootstrap.ErrUnsupportedVersion:
		return 9
	case e.Kind == bootstrap.ErrInvalidSessionIDLength:
		return 10
	case e.Kind == bootstrap.ErrInvalidSessionIDEncoding, errors.Is(e, protocol.ErrInvalidToken):
		return 10 + int(data[9])
	default: // WeakSessionKey
		return 42 + int(data[9])
	}
}

// roundTrip derives a session id and a key from data and checks Write then
// Read returns them, consuming exactly the written bytes.
func roundTrip(t *testing.T, data []byte) {
	if len(data) < 33 {
		return
	}
	key, err := protocol.NewSessionKey(data[:32])
	if err != nil {
		return // all zero
	}
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789._-"
	var id strings.Builder
	for _, c := range data[32:min(len(data), 32+128)] {
		id.WriteByte(alphabet[int(c)%len(alphabet)])
	}
	var buf bytes.Buffer
	if err := bootstrap.Write(&buf, id.String(), key); err != nil {
		t.Fatalf("Write(%q): %v", id.String(), err)
	}
	buf.WriteString("{\"next\":1}\n")
	b, err := bootstrap.Read(&buf)
	if err != nil || b.SessionID != id.String() || !b.Key.Equal(key) || buf.String() != "{\"next\":1}\n" {
		t.Fatalf("round trip of %q: %v", id.String(), err)
	}
}
