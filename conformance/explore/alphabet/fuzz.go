package alphabet

import (
	"bytes"
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
		if len(secret) == 0 {
			continue
		}
		for _, form := range []struct {
			name string
			text []byte
		}{
			{"raw", secret},
			{"hex", []byte(hex.EncodeToString(secret))},
			{"base64", []byte(base64.StdEncoding.EncodeToString(secret))},
			{"base64url", []byte(base64.RawURLEncoding.EncodeToString(secret))},
		} {
			found := bytes.Contains(s.PortOutput, form.text)
			if form.name == "hex" { // hex in either case
				found = bytes.Contains(bytes.ToLower(s.PortOutput), form.text)
			}
			if found {
				problems = append(problems, fmt.Sprintf("secret %d appears in the port's output (%s)", i+1, form.name))
				break
			}
		}
	}
	return problems
}
