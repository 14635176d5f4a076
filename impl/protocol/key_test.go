package protocol

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// Spec: FRM-038, FRM-039, ERR-015
func TestNewSessionKeyChecksLengthBeforeWeakness(t *testing.T) {
	for _, n := range []int{0, 1, 31, 33, 64} {
		_, err := NewSessionKey(make([]byte, n)) // all zero, but the length fails first
		var pe *Error
		if !errors.As(err, &pe) || pe.Kind != ErrInvalidSessionKeyLength || pe.Actual != uint64(n) || pe.Expected != 32 {
			t.Fatalf("len %d: error %v", n, err)
		}
	}
	_, err := NewSessionKey(make([]byte, 32))
	var pe *Error
	if !errors.As(err, &pe) || pe.Kind != ErrWeakSessionKey {
		t.Fatalf("zero key: %v", err)
	}
	if strings.Contains(pe.Error(), "00") {
		t.Fatalf("weak-key error echoes key bytes: %q", pe.Error())
	}
	last := make([]byte, 32)
	last[31] = 1
	k, err := NewSessionKey(last)
	if err != nil {
		t.Fatal(err)
	}
	// The key copies its input.
	last[31] = 2
	if secret, _ := k.ExposeSecret(); secret[31] != 1 {
		t.Fatal("key aliases the caller's slice")
	}
}

// Spec: FRM-040, ERR-014
func TestSessionKeyFormattingIsRedacted(t *testing.T) {
	k, err := NewSessionKey(bytes.Repeat([]byte{0xab}, 32))
	if err != nil {
		t.Fatal(err)
	}
	type holder struct {
		Key  *SessionKey
		Copy SessionKey
	}
	values := []any{k, *k, holder{k, *k}, []*SessionKey{k}, map[string]*SessionKey{"k": k}}
	verbs := []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%T %v", "%10.3v", "%-v"}
	for _, v := range values {
		for _, verb := range verbs {
			out := fmt.Sprintf(verb, v)
			if strings.Contains(strings.ToLower(out), "ab") && !strings.Contains(out, "SessionKey") ||
				strings.Contains(strings.ToLower(out), "abab") || strings.Contains(out, "171") || strings.Contains(out, "\xab") {
				t.Fatalf("%s of %T leaks: %s", verb, v, out)
			}
		}
	}
	if got := fmt.Sprint(k); got != "SessionKey([redacted])" {
		t.Fatalf("Sprint = %q", got)
	}
	if got := fmt.Sprintf("%#v", *k); got != "SessionKey([redacted])" {
		t.Fatalf("%%#v = %q", got)
	}
}

// Spec: FRM-041
func TestGenerateSessionKey(t *testing.T) {
	a, err := GenerateSessionKey()
	if err != nil {
		t.Fatal(err)
	}
	b, err := GenerateSessionKey()
	if err != nil {
		t.Fatal(err)
	}
	if !a.usable() || !b.usable() || a.Equal(b) {
		t.Fatal("two generated keys are equal or unusable")
	}
	if !a.Equal(a) {
		t.Fatal("a key does not equal itself")
	}
	// A failing source is reported; an all-zero source never yields a key.
	if _, err := generateSessionKey(iotest.ErrReader(io.ErrClosedPipe)); !errors.Is(err, io.ErrClosedPipe) {
		t.Fatalf("failing source: %v", err)
	}
	zeros := bytes.NewReader(make([]byte, 1024))
	if _, err := generateSessionKey(zeros); !errors.Is(err, ErrWeakSessionKey) {
		t.Fatalf("zero source: %v", err)
	}
	// A zero first draw is retried.
	retry := io.MultiReader(bytes.NewReader(make([]byte, 32)), bytes.NewReader(bytes.Repeat([]byte{5}, 32)))
	k, err := generateSessionKey(retry)
	if err != nil || k.b[0] != 5 {
		t.Fatalf("retry: %v", err)
	}
}

// Spec: FRM-042
func TestSessionKeyClose(t *testing.T) {
	k, err := NewSessionKey(bytes.Repeat([]byte{9}, 32))
	if err != nil {
		t.Fatal(err)
	}
	if err := k.Close(); err != nil {
		t.Fatal(err)
	}
	if k.b != ([32]byte{}) {
		t.Fatal("Close left key bytes")
	}
	if _, err := k.ExposeSecret(); !errors.Is(err, ErrWeakSessionKey) {
		t.Fatalf("ExposeSecret after Close: %v", err)
	}
	if k.Equal(k) {
		t.Fatal("a closed key equals something")
	}
	_ = k.Close() // idempotent
	var nilKey *SessionKey
	if err := nilKey.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := nilKey.ExposeSecret(); !errors.Is(err, ErrWeakSessionKey) {
		t.Fatal("nil key exposed")
	}
	if _, err := ComputeTag(nilKey, "s", RoleHost, 1, CloseSessionMessage{ProtocolVersion: 5, Session: "s"}); !errors.Is(err, ErrWeakSessionKey) {
		t.Fatal("ComputeTag with a nil key")
	}
}

func TestRoles(t *testing.T) {
	if RoleHost.String() != "host" || RoleWorker.String() != "worker" || Role(0).String() != "Role(0)" {
		t.Fatal("role names")
	}
	if RoleHost.Peer() != RoleWorker || RoleWorker.Peer() != RoleHost || Role(9).Peer() != Role(9) {
		t.Fatal("peers")
	}
	for _, r := range []Role{RoleHost, RoleWorker} {
		if got, ok := ParseRole(r.String()); !ok || got != r || !r.Valid() {
			t.Fatalf("ParseRole(%q)", r)
		}
	}
	if _, ok := ParseRole("Host"); ok || Role(3).Valid() {
		t.Fatal("accepted a bad role")
	}
}

func TestCheckPortableJSONScanner(t *testing.T) {
	for _, tc := range []struct {
		json string
		bad  string
	}{
		{`{"a":"1.50","b":[1,2]}`, ""},
		{`{"a":"\"1.50","b":1.50}`, "1.50"},
		{`{"a":"x\\","b":1e+16}`, ""},   // zmij and Preserve both write 1e+16
		{`{"a":"x\\\"1.50","b":0}`, ""}, // escaped quote keeps the string open
		{`[-0.0,-42,18446744073709551615,-9223372036854775808]`, ""},
		{`[100000000000000000000]`, "100000000000000000000"},
		{`[-9223372036854775809]`, "-9223372036854775809"},
		{`[1e2]`, "1e2"},
		{`[1e+2]`, "1e+2"}, // Lossy writes 100.0
		{`{"k":-0}`, "-0"},
	} {
		err := checkPortableJSON([]byte(tc.json))
		var npe *NonPortableNumberError
		switch {
		case tc.bad == "" && err != nil:
			t.Fatalf("%s: %v", tc.json, err)
		case tc.bad != "" && (!errors.As(err, &npe) || npe.Token != tc.bad):
			t.Fatalf("%s: error %v, want token %s", tc.json, err, tc.bad)
		}
	}
	long := &NonPortableNumberError{Kind: ErrNonPortableNumber, Token: strings.Repeat("9", 500)}
	if len(long.Error()) > 250 {
		t.Fatal("error message does not bound the echoed token")
	}
}
