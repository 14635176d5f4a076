package fuzz

import (
	"bytes"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
)

// openTarget is a frame line a fresh receiver opens, with the receiver's
// role and starting incoming sequence.
type openTarget struct {
	line     []byte
	receiver protocol.Role
	next     uint64
}

// openTargets are the verified vector frames (key 32 x 0x07, session
// "session-1"); they open as they are.
func openTargets() []openTarget {
	var out []openTarget
	for i, s := range frameSeeds[:4] {
		t := openTarget{line: []byte(s), receiver: protocol.RoleWorker, next: 1}
		switch i {
		case 1, 3:
			t.next = 2
		case 2:
			t.receiver = protocol.RoleHost
		}
		out = append(out, t)
	}
	return out
}

func vectorKey() *protocol.SessionKey {
	k, err := protocol.NewSessionKey(bytes.Repeat([]byte{7}, protocol.SessionKeyBytes))
	if err != nil {
		panic(err)
	}
	return k
}

// receiver returns a fresh receiver for target.
func receiver(target openTarget) *protocol.Authenticator {
	a, err := protocol.NewAuthenticator("session-1", vectorKey(), target.receiver, canonjson.Preserve,
		protocol.WithSequences(1, target.next))
	if err != nil {
		panic(err)
	}
	return a
}

// opener opens lines for one target, reusing its receiver until an open
// succeeds (a failed open changes nothing, FRM-026).
type opener struct {
	target openTarget
	a      *protocol.Authenticator
}

func (o *opener) open(line []byte) (protocol.Frame, error) {
	if o.a == nil {
		o.a = receiver(o.target)
	}
	f, err := o.a.Open(line)
	if err == nil {
		o.a = nil
	}
	return f, err
}

// checkMutation fails unless a mutated line is either rejected with a
// protocol error kind or opens as exactly the original frame: same sequence,
// same tag and the same canonical message. Because the tag covers the
// canonical re-serialization, a mutation that does not change the decoded
// message (for example renaming a defaulted field so it is ignored and
// defaulted again) is accepted, as the reference accepts it (FRM-011); no
// mutation may yield a different accepted frame.
func checkMutation(t *testing.T, o *opener, original protocol.Frame, pos int, repl byte) {
	t.Helper()
	line := append([]byte(nil), o.target.line...)
	line[pos] = repl
	got, err := o.open(line)
	if err != nil {
		if _, ok := protocol.KindOf(err); !ok {
			t.Fatalf("byte %d -> %q: error outside the protocol kinds: %v", pos, repl, err)
		}
		if got.Message != nil {
			t.Fatalf("byte %d -> %q: failed open yielded a message", pos, repl)
		}
		return
	}
	if got.Sequence != original.Sequence || got.Tag != original.Tag ||
		!bytes.Equal(got.Message.AppendJSON(nil), original.Message.AppendJSON(nil)) {
		t.Fatalf("byte %d -> %q: a mutated line opened as a different frame:\n%s", pos, repl, line)
	}
}

// FuzzOpen mutates one byte of a frame line that opens (at a fuzzed
// position, with a fuzzed replacement) and checks that the result never opens
// as a different frame.
//
// Spec: FRM-010, FRM-011, FRM-014, FRM-017, FRM-025, FRM-029
func FuzzOpen(f *testing.F) {
	targets := append(openTargets(), openTargetSeeds(f)...)
	for i := range targets {
		for _, pos := range []uint{0, 13, 40, 100, 200, 300} {
			f.Add(uint8(i), pos, byte('x'))
		}
	}
	originals := make([]protocol.Frame, len(targets))
	for i, target := range targets {
		fr, err := receiver(target).Open(target.line)
		if err != nil {
			f.Fatalf("vector frame %d does not open: %v", i, err)
		}
		originals[i] = fr
	}
	f.Fuzz(func(t *testing.T, which uint8, pos uint, repl byte) {
		i := int(which) % len(targets)
		target := targets[i]
		p := int(pos % uint(len(target.line)))
		if target.line[p] == repl {
			return
		}
		checkMutation(t, &opener{target: target}, originals[i], p, repl)
	})
}

// Every position of every vector frame, with replacements that hit each
// lexical class (digits, hex letters, other letters, quotes, escapes,
// whitespace, structure, non-ASCII): no mutation opens as a different
// frame.
//
// Spec: FRM-011, FRM-025
func TestEverySingleBytePositionOfTheVectorFrames(t *testing.T) {
	for i, target := range openTargets() {
		original, err := receiver(target).Open(target.line)
		if err != nil {
			t.Fatalf("vector %d: %v", i, err)
		}
		o := &opener{target: target}
		for pos := range target.line {
			for _, repl := range []byte{'0', '7', 'a', 'f', 'g', 'Z', '"', '\\', ' ', '{', ']', ',', ':', 0x80, target.line[pos] ^ 1} {
				if target.line[pos] != repl {
					checkMutation(t, o, original, pos, repl)
				}
			}
		}
	}
}

// A single-byte mutation can leave the authenticated content unchanged:
// renaming the defaulted "max_compensations" member of anchor A1's grant makes
// it an ignored unknown member, the default 0 is restored, and the frame
// still opens with the same canonical message. This is the reference's
// behaviour (the tag covers the re-serialization), not a forgery.
//
// Spec: FRM-011
func TestMutationOfADefaultedFieldNameStillOpens(t *testing.T) {
	target := openTargets()[0]
	line := bytes.Replace(target.line, []byte(`"max_compensations"`), []byte(`"max_compensationz"`), 1)
	if bytes.Equal(line, target.line) || len(line) != len(target.line) {
		t.Fatal("mutation not applied")
	}
	got, err := receiver(target).Open(line)
	if err != nil {
		t.Fatalf("the reference accepts this frame: %v", err)
	}
	original, _ := receiver(target).Open(target.line)
	if !bytes.Equal(got.Message.AppendJSON(nil), original.Message.AppendJSON(nil)) {
		t.Fatal("the canonical message changed")
	}
}
