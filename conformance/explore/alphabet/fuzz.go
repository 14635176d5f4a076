package alphabet

import (
	"bytes"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"fmt"

	"github.com/splashv5/conform/impl/protocol"
)

// MutatedStep is what the reference worker and a port did with the same mutated frame, in
// sessions driven the same way up to it.
type MutatedStep struct {
	// Reference and Port are the abstract outputs of the step.
	Reference, Port Output
	// PortOutput is every byte the port wrote during the step, standard output and standard
	// error alike.
	PortOutput []byte
}

// JudgeMutated returns the problems of a port's answer to a mutated frame (EXP-011): it must
// refuse, with a failure exit, a frame the reference refuses; it must not crash or hang; no
// line it writes may exceed the frame limit; and no secret may appear in its output, raw, in
// hex or in base64. A problem never quotes a secret. No problem means the step passes.
func JudgeMutated(s MutatedStep, secrets ...[]byte) []string {
	var problems []string
	refused := s.Reference.Answers == "" && s.Reference.Exit > 0
	if refused && !(s.Port.Answers == "" && s.Port.Exit > 0) {
		problems = append(problems, fmt.Sprintf("the reference refuses this frame (%s); the port answered %s", s.Reference, s.Port))
	}
	switch s.Port.Exit {
	case Killed:
		problems = append(problems, "the port ended without an exit status (a crash)")
	case Hung:
		problems = append(problems, "the port neither answered nor ended within the step's bound")
	}
	for _, line := range bytes.Split(s.PortOutput, []byte{'\n'}) {
		if len(line) > protocol.MaxWireFrameBytes {
			problems = append(problems, fmt.Sprintf("the port wrote a line of %d bytes, over the %d-byte frame limit", len(line), protocol.MaxWireFrameBytes))
			break
		}
	}
	for i, secret := range secrets {
		if form := LeakForm(s.PortOutput, secret); form != "" {
			problems = append(problems, fmt.Sprintf("secret %d appears in the port's output (%s)", i+1, form))
		}
	}
	return problems
}

// LeakForm names the form in which secret appears in out, or returns "": raw, hexadecimal in
// either case, a Go byte list, or base64 (standard or URL alphabet) or base32 at any byte
// alignment (the secret encoded after other bytes: only the characters that depend on the
// secret's bytes alone are looked for).
func LeakForm(out, secret []byte) string {
	if len(secret) == 0 {
		return ""
	}
	if bytes.Contains(out, secret) {
		return "raw"
	}
	if bytes.Contains(bytes.ToLower(out), []byte(hex.EncodeToString(secret))) {
		return "hex"
	}
	if bytes.Contains(out, []byte(fmt.Sprint(secret))) {
		return "byte list"
	}
	for _, e := range []struct {
		name       string
		enc        func([]byte) string
		block, per int // bytes per block, characters per block
	}{
		{"base64", base64.StdEncoding.EncodeToString, 3, 4},
		{"base64url", base64.RawURLEncoding.EncodeToString, 3, 4},
		{"base32", base32.StdEncoding.EncodeToString, 5, 8},
	} {
		for shift := 0; shift < e.block; shift++ {
			buf := append(make([]byte, shift), secret...)
			text := e.enc(buf)
			// Characters from the first block boundary after the shift to the last full block
			// of the secret depend on the secret's bytes only.
			from := (shift + e.block - 1) / e.block * e.per
			to := (len(buf) / e.block) * e.per
			if shift == 0 {
				from = 0
			}
			if to-from < 16 {
				continue
			}
			if bytes.Contains(out, []byte(text[from:to])) {
				return e.name
			}
		}
	}
	return ""
}
