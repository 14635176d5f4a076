//go:build splashfaults

package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// The late-bootstrap-checks fault takes exactly one bootstrap's bytes, whatever they hold.
//
// Spec: WRK-090
func TestReadWholeBootstrap(t *testing.T) {
	key := bytes.Repeat([]byte{0}, 32) // all zero: not checked here
	in := bytes.NewReader(append(append([]byte("SPLPBOOX\x09\x05abcde"), key...), "after"...))
	got := readWholeBootstrap(in)
	if len(got) != 10+5+32 || !bytes.HasPrefix(got, []byte("SPLPBOOX\x09\x05abcde")) {
		t.Fatalf("read %q", got)
	}
	if rest, _ := io.ReadAll(in); string(rest) != "after" {
		t.Fatalf("left %q after the bootstrap", rest)
	}
	for _, short := range []string{"", "SPLPBOOT\x02", "SPLPBOOT\x01\x09sess"} {
		if got := readWholeBootstrap(strings.NewReader(short)); string(got) != short {
			t.Fatalf("short input %q read as %q", short, got)
		}
	}
}
