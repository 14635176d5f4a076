package replay

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"io/fs"

	"github.com/splashv5/conform/impl/bootstrap"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/vectors/vectorfmt"
)

// input returns the bytes of a test's input, given as text or as hex.
func input(t *vectorfmt.Text, h *string) ([]byte, error) {
	switch {
	case t != nil && h == nil:
		return []byte(*t), nil
	case t == nil && h != nil:
		return hex.DecodeString(*h)
	}
	return nil, fmt.Errorf("exactly one of input and input_hex must be present")
}

func replayCanonicalJSON(fsys fs.FS, fr *fileRun) error {
	var doc vectorfmt.CanonicalJSON
	if err := vectorfmt.Load(fsys, vectorfmt.CanonicalJSONFile, &doc); err != nil {
		return err
	}
	return replayGroups(fr, doc.TestGroups, func(g *vectorfmt.CanonicalJSONGroup) ([]vectorfmt.CanonicalJSONTest, func(*vectorfmt.CanonicalJSONTest) (*vectorfmt.Case, []string), error) {
		mode, err := canonjson.ParseMode(g.Mode)
		if err != nil {
			return nil, nil, err
		}
		if g.Type != vectorfmt.CanonicalValueType && g.Type != vectorfmt.CanonicalPayloadType {
			return nil, nil, fmt.Errorf("unknown group type %q", g.Type)
		}
		return g.Tests, func(t *vectorfmt.CanonicalJSONTest) (*vectorfmt.Case, []string) {
			return &t.Case, checkCanonical(g.Type, mode, t)
		}, nil
	})
}

func checkCanonical(typ string, mode canonjson.Mode, t *vectorfmt.CanonicalJSONTest) []string {
	in, err := input(t.Input, t.InputHex)
	if err != nil {
		return []string{err.Error()}
	}
	v, err := canonjson.ParseValue(in, mode)
	if err == nil && typ == vectorfmt.CanonicalPayloadType {
		_, err = protocol.JSONPayload(v).ValidateFor(protocol.FormatJSON)
	}
	if p, done := judge(&t.Case, err); done {
		return p
	}
	return compare("output", textOf(t.Output), string(v.JSON()))
}

func replayMessages(fsys fs.FS, fr *fileRun) error {
	var doc vectorfmt.Messages
	if err := vectorfmt.Load(fsys, vectorfmt.MessagesFile, &doc); err != nil {
		return err
	}
	return replayGroups(fr, doc.TestGroups, func(g *vectorfmt.MessageGroup) ([]vectorfmt.MessageTest, func(*vectorfmt.MessageTest) (*vectorfmt.Case, []string), error) {
		mode, err := canonjson.ParseMode(g.Mode)
		if err != nil {
			return nil, nil, err
		}
		return g.Tests, func(t *vectorfmt.MessageTest) (*vectorfmt.Case, []string) {
			return &t.Case, checkMessage(mode, t)
		}, nil
	})
}

func checkMessage(mode canonjson.Mode, t *vectorfmt.MessageTest) []string {
	in, err := input(t.Input, t.InputHex)
	if err != nil {
		return []string{err.Error()}
	}
	m, err := protocol.DecodeMessage(in, mode)
	if p, done := judge(&t.Case, err); done {
		return p
	}
	p := compare("output", textOf(t.Output), string(m.AppendJSON(nil)))
	p = append(p, compare("message_type", t.MessageType, string(m.Type()))...)
	return append(p, compare("session_id", t.SessionID, m.SessionID())...)
}

// newAuthenticator builds a fresh authenticator for a group, optionally starting both
// counters at start.
func newAuthenticator(keyHex, sessionID, role string, mode canonjson.Mode, start *uint64) (*protocol.Authenticator, protocol.Role, error) {
	raw, err := hex.DecodeString(keyHex)
	if err != nil {
		return nil, 0, err
	}
	key, err := protocol.NewSessionKey(raw)
	if err != nil {
		return nil, 0, err
	}
	defer key.Close()
	r, ok := protocol.ParseRole(role)
	if !ok {
		return nil, 0, fmt.Errorf("unknown role %q", role)
	}
	var opts []protocol.AuthenticatorOption
	if start != nil {
		opts = append(opts, protocol.WithSequences(*start, *start))
	}
	a, err := protocol.NewAuthenticator(sessionID, key, r, mode, opts...)
	return a, r, err
}

// stepErrors checks that a multi-step test's result and error agree with its steps.
func stepErrors(c *vectorfmt.Case, errs []string) []string {
	first := ""
	for _, e := range errs {
		if e != "" {
			first = e
			break
		}
	}
	if (first == "") != (c.Result == vectorfmt.Valid) || first != c.Error {
		return []string{fmt.Sprintf("test result %q/%q does not match its steps (first error %q)", c.Result, c.Error, first)}
	}
	return nil
}

func replayFramesSeal(fsys fs.FS, fr *fileRun) error {
	var doc vectorfmt.FramesSeal
	if err := vectorfmt.Load(fsys, vectorfmt.FramesSealFile, &doc); err != nil {
		return err
	}
	return replayGroups(fr, doc.TestGroups, func(g *vectorfmt.FrameSealGroup) ([]vectorfmt.SealTest, func(*vectorfmt.SealTest) (*vectorfmt.Case, []string), error) {
		mode, err := canonjson.ParseMode(g.Mode)
		if err != nil {
			return nil, nil, err
		}
		return g.Tests, func(t *vectorfmt.SealTest) (*vectorfmt.Case, []string) {
			return &t.Case, checkSeal(g, mode, t)
		}, nil
	})
}

func checkSeal(g *vectorfmt.FrameSealGroup, mode canonjson.Mode, t *vectorfmt.SealTest) []string {
	if len(t.Messages) != len(t.Results) {
		return []string{"messages and results differ in length"}
	}
	a, role, err := newAuthenticator(g.KeyHex, g.SessionID, g.Role, mode, t.StartSequence)
	if err != nil {
		return []string{"building the sealer: " + err.Error()}
	}
	defer a.Close()
	for i, line := range t.Received {
		if _, err := a.Open([]byte(textOf(&line))); err != nil {
			return []string{fmt.Sprintf("received frame %d does not open: %v", i+1, err)}
		}
	}
	var problems []string
	var errs []string
	for i, raw := range t.Messages {
		want := t.Results[i]
		errs = append(errs, want.Error)
		step := fmt.Sprintf("message %d", i+1)
		m, err := protocol.DecodeMessage([]byte(raw), mode)
		var f protocol.Frame
		var line []byte
		if err == nil {
			f, line, err = a.Seal(m)
		}
		if want.Error != "" || err != nil {
			problems = append(problems, stepOutcome(step, want.Error, "got a frame", err)...)
			continue
		}
		if f.Sequence != want.Sequence {
			problems = append(problems, fmt.Sprintf("%s: sequence %d, want %d", step, f.Sequence, want.Sequence))
		}
		problems = append(problems, compare(step+" tag", want.Tag, hex.EncodeToString(f.Tag[:]))...)
		problems = append(problems, compare(step+" line", textOf(want.Line), string(line))...)
		problems = append(problems, compare(step+" tag_input", textOf(want.TagInput), string(protocol.TagInput(g.SessionID, role, f.Sequence, f.Message)))...)
	}
	return append(problems, stepErrors(&t.Case, errs)...)
}

func replayFramesOpen(fsys fs.FS, fr *fileRun) error {
	var doc vectorfmt.FramesOpen
	if err := vectorfmt.Load(fsys, vectorfmt.FramesOpenFile, &doc); err != nil {
		return err
	}
	return replayGroups(fr, doc.TestGroups, func(g *vectorfmt.FrameOpenGroup) ([]vectorfmt.OpenTest, func(*vectorfmt.OpenTest) (*vectorfmt.Case, []string), error) {
		mode, err := canonjson.ParseMode(g.Mode)
		if err != nil {
			return nil, nil, err
		}
		return g.Tests, func(t *vectorfmt.OpenTest) (*vectorfmt.Case, []string) {
			return &t.Case, checkOpen(g, mode, t)
		}, nil
	})
}

func checkOpen(g *vectorfmt.FrameOpenGroup, mode canonjson.Mode, t *vectorfmt.OpenTest) []string {
	var lines [][]byte
	switch {
	case t.Lines != nil && t.LinesHex == nil:
		for _, l := range t.Lines {
			lines = append(lines, []byte(l))
		}
	case t.Lines == nil && t.LinesHex != nil:
		for _, h := range t.LinesHex {
			b, err := hex.DecodeString(h)
			if err != nil {
				return []string{err.Error()}
			}
			lines = append(lines, b)
		}
	default:
		return []string{"exactly one of lines and lines_hex must be present"}
	}
	if len(lines) != len(t.Results) {
		return []string{"lines and results differ in length"}
	}
	a, _, err := newAuthenticator(g.KeyHex, g.SessionID, g.Role, mode, t.StartSequence)
	if err != nil {
		return []string{"building the opener: " + err.Error()}
	}
	defer a.Close()
	var problems, errs []string
	for i, line := range lines {
		want := t.Results[i]
		errs = append(errs, want.Error)
		step := fmt.Sprintf("line %d", i+1)
		f, err := a.Open(line)
		if want.Error != "" || err != nil {
			problems = append(problems, stepOutcome(step, want.Error, "the frame opened", err)...)
			continue
		}
		if f.Sequence != want.Sequence {
			problems = append(problems, fmt.Sprintf("%s: sequence %d, want %d", step, f.Sequence, want.Sequence))
		}
		problems = append(problems, compare(step+" message", textOf(want.Message), string(f.Message.AppendJSON(nil)))...)
		problems = append(problems, compare(step+" message_type", want.MessageType, string(f.Message.Type()))...)
	}
	return append(problems, stepErrors(&t.Case, errs)...)
}

func replayBootstrap(fsys fs.FS, fr *fileRun) error {
	var doc vectorfmt.Bootstrap
	if err := vectorfmt.Load(fsys, vectorfmt.BootstrapFile, &doc); err != nil {
		return err
	}
	return replayGroups(fr, doc.TestGroups, func(g *vectorfmt.BootstrapGroup) ([]vectorfmt.BootstrapTest, func(*vectorfmt.BootstrapTest) (*vectorfmt.Case, []string), error) {
		var check func(*vectorfmt.BootstrapTest) []string
		switch g.Type {
		case vectorfmt.BootstrapReadType:
			check = checkBootstrapRead
		case vectorfmt.BootstrapWriteType:
			check = checkBootstrapWrite
		default:
			return nil, nil, fmt.Errorf("unknown group type %q", g.Type)
		}
		return g.Tests, func(t *vectorfmt.BootstrapTest) (*vectorfmt.Case, []string) {
			return &t.Case, check(t)
		}, nil
	})
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func checkBootstrapRead(t *vectorfmt.BootstrapTest) []string {
	in, err := hex.DecodeString(str(t.InputHex))
	if err != nil {
		return []string{err.Error()}
	}
	r := bytes.NewReader(in)
	bs, err := bootstrap.Read(r)
	if t.Result == vectorfmt.Invalid {
		p := expectError(&t.Case, err)
		if err != nil {
			p = append(p, compare("wrapped_error", t.WrappedError, WrappedKindName(err))...)
		}
		return p
	}
	if err != nil {
		return unexpected(err)
	}
	defer bs.Key.Close()
	key, err := bs.Key.ExposeSecret()
	if err != nil {
		return unexpected(err)
	}
	p := compare("session_id", str(t.SessionID), bs.SessionID)
	p = append(p, compare("key_hex", str(t.KeyHex), hex.EncodeToString(key[:]))...)
	if t.Consumed == nil || *t.Consumed != len(in)-r.Len() {
		p = append(p, fmt.Sprintf("consumed %d bytes, want %v", len(in)-r.Len(), t.Consumed))
	}
	return p
}

func checkBootstrapWrite(t *vectorfmt.BootstrapTest) []string {
	raw, err := hex.DecodeString(str(t.KeyHex))
	if err != nil {
		return []string{err.Error()}
	}
	var buf bytes.Buffer
	key, err := protocol.NewSessionKey(raw)
	if err == nil {
		err = bootstrap.Write(&buf, str(t.SessionID), key)
		key.Close()
	}
	if t.Result == vectorfmt.Invalid {
		p := expectError(&t.Case, err)
		if err != nil {
			p = append(p, compare("wrapped_error", t.WrappedError, wrappedProtocolKind(err))...)
		}
		return p
	}
	if err != nil {
		return unexpected(err)
	}
	return compare("output_hex", str(t.OutputHex), hex.EncodeToString(buf.Bytes()))
}

// wrappedProtocolKind names the protocol kind wrapped by a bootstrap Protocol error.
func wrappedProtocolKind(err error) string {
	if ErrorKindName(err) != "Protocol" {
		return ""
	}
	return WrappedKindName(err)
}

func replayManifests(fsys fs.FS, fr *fileRun) error {
	var doc vectorfmt.Manifests
	if err := vectorfmt.Load(fsys, vectorfmt.ManifestsFile, &doc); err != nil {
		return err
	}
	return replayGroups(fr, doc.TestGroups, func(g *vectorfmt.ManifestGroup) ([]vectorfmt.ManifestTest, func(*vectorfmt.ManifestTest) (*vectorfmt.Case, []string), error) {
		return g.Tests, func(t *vectorfmt.ManifestTest) (*vectorfmt.Case, []string) {
			return &t.Case, checkManifest(t)
		}, nil
	})
}

func checkManifest(t *vectorfmt.ManifestTest) []string {
	m, err := protocol.DecodeManifest([]byte(textOf(t.Input)))
	if err == nil {
		err = m.Validate()
	}
	if p, done := judge(&t.Case, err); done {
		return p
	}
	return compare("output", textOf(t.Output), string(m.AppendJSON(nil)))
}

func replayAttenuation(fsys fs.FS, fr *fileRun) error {
	var doc vectorfmt.Attenuation
	if err := vectorfmt.Load(fsys, vectorfmt.AttenuationFile, &doc); err != nil {
		return err
	}
	return replayGroups(fr, doc.TestGroups, func(g *vectorfmt.AttenuationGroup) ([]vectorfmt.AttenuationTest, func(*vectorfmt.AttenuationTest) (*vectorfmt.Case, []string), error) {
		var attenuate func(t *vectorfmt.AttenuationTest) ([]byte, error)
		switch g.Type {
		case vectorfmt.GrantAttenuateType:
			attenuate = func(t *vectorfmt.AttenuationTest) ([]byte, error) {
				return attenuateGrant([]byte(textOf(t.Grant)), []byte(textOf(t.Attenuation)))
			}
		case vectorfmt.ManifestAttenuateType:
			attenuate = func(t *vectorfmt.AttenuationTest) ([]byte, error) {
				return attenuateManifest([]byte(textOf(t.Manifest)), []byte(textOf(t.Attenuation)))
			}
		default:
			return nil, nil, fmt.Errorf("unknown group type %q", g.Type)
		}
		return g.Tests, func(t *vectorfmt.AttenuationTest) (*vectorfmt.Case, []string) {
			out, err := attenuate(t)
			if p, done := judge(&t.Case, err); done {
				return &t.Case, p
			}
			return &t.Case, compare("output", textOf(t.Output), string(out))
		}, nil
	})
}

func attenuateGrant(grant, att []byte) ([]byte, error) {
	g, err := protocol.DecodeCapabilityGrant(grant)
	if err != nil {
		return nil, err
	}
	a, err := protocol.DecodeGrantAttenuation(att)
	if err != nil {
		return nil, err
	}
	r, err := g.Attenuate(a)
	if err != nil {
		return nil, err
	}
	return r.AppendJSON(nil), nil
}

func attenuateManifest(manifest, att []byte) ([]byte, error) {
	m, err := protocol.DecodeManifest(manifest)
	if err != nil {
		return nil, err
	}
	a, err := protocol.DecodeManifestAttenuation(att)
	if err != nil {
		return nil, err
	}
	r, err := m.Attenuate(a)
	if err != nil {
		return nil, err
	}
	return r.AppendJSON(nil), nil
}

func replayFingerprints(fsys fs.FS, fr *fileRun) error {
	var doc vectorfmt.Fingerprints
	if err := vectorfmt.Load(fsys, vectorfmt.FingerprintsFile, &doc); err != nil {
		return err
	}
	return replayGroups(fr, doc.TestGroups, func(g *vectorfmt.FingerprintGroup) ([]vectorfmt.FingerprintTest, func(*vectorfmt.FingerprintTest) (*vectorfmt.Case, []string), error) {
		var check func(*vectorfmt.FingerprintTest) []string
		switch g.Type {
		case vectorfmt.CanonicalInputType:
			mode, err := canonjson.ParseMode(g.Mode)
			if err != nil {
				return nil, nil, err
			}
			check = func(t *vectorfmt.FingerprintTest) []string { return checkCanonicalInput(mode, t) }
		case vectorfmt.GrantFingerprintType:
			check = checkGrantFingerprint
		default:
			return nil, nil, fmt.Errorf("unknown group type %q", g.Type)
		}
		return g.Tests, func(t *vectorfmt.FingerprintTest) (*vectorfmt.Case, []string) {
			return &t.Case, check(t)
		}, nil
	})
}

func checkCanonicalInput(mode canonjson.Mode, t *vectorfmt.FingerprintTest) []string {
	p, err := protocol.DecodeToolPayload([]byte(textOf(t.Payload)), mode)
	var b []byte
	var fp string
	if err == nil {
		b, err = protocol.CanonicalOperationInputBytes(p)
	}
	if err == nil {
		fp, err = protocol.OperationInputFingerprint(p)
	}
	if p, done := judge(&t.Case, err); done {
		return p
	}
	return append(compare("canonical_hex", str(t.CanonicalHex), hex.EncodeToString(b)), compare("fingerprint", str(t.Fingerprint), fp)...)
}

func checkGrantFingerprint(t *vectorfmt.FingerprintTest) []string {
	g, err := protocol.DecodeCapabilityGrant([]byte(textOf(t.Grant)))
	var fp string
	if err == nil {
		fp, err = g.CompensationFingerprint()
	}
	if p, done := judge(&t.Case, err); done {
		return p
	}
	return compare("fingerprint", str(t.Fingerprint), fp)
}
