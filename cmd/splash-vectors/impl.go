package main

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"github.com/splashv5/conform/impl/bootstrap"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
)

// This file is the generator's only contact with the implementation: each function runs one
// operation and reports what happened, for comparison with the case tables.

// kindName names the error kind of err as the vectors spell it.
func kindName(err error) string {
	var be *bootstrap.Error
	if errors.As(err, &be) {
		return be.Kind.String()
	}
	if k, ok := protocol.KindOf(err); ok {
		return k.String()
	}
	if errors.Is(err, protocol.ErrNonPortableNumber) {
		return protocol.ErrNonPortableNumber.String()
	}
	if errors.Is(err, canonjson.ErrSyntax) {
		return "Serialization"
	}
	return fmt.Sprintf("Unclassified(%v)", err)
}

func implCanonicalPayload(input []byte, m canonjson.Mode) outcome {
	v, err := canonjson.ParseValue(input, m)
	if err != nil {
		return outcome{err: canonjsonKind(err)}
	}
	if _, err := protocol.JSONPayload(v).ValidateFor(protocol.FormatJSON); err != nil {
		return outcome{err: kindName(err)}
	}
	return outcome{out: string(v.JSON())}
}

// implMessage decodes a message and reports its canonical form, type and session.
func implMessage(input []byte, m canonjson.Mode) (outcome, string, string) {
	msg, err := protocol.DecodeMessage(input, m)
	if err != nil {
		return outcome{err: kindName(err)}, "", ""
	}
	return outcome{out: string(msg.AppendJSON(nil))}, string(msg.Type()), msg.SessionID()
}

func newAuth(key [32]byte, sessionID, role string, m canonjson.Mode, start uint64, opts ...protocol.AuthenticatorOption) (*protocol.Authenticator, error) {
	k, err := protocol.NewSessionKey(key[:])
	if err != nil {
		return nil, err
	}
	defer k.Close()
	r, ok := protocol.ParseRole(role)
	if !ok {
		return nil, fmt.Errorf("bad role %q", role)
	}
	if start != 0 {
		opts = append(opts, protocol.WithSequences(start, start))
	}
	return protocol.NewAuthenticator(sessionID, k, r, m, opts...)
}

// implOpen opens lines in order with one fresh opener.
func implOpen(key [32]byte, sessionID, role string, m canonjson.Mode, start uint64, lines []string) ([]openStep, error) {
	a, err := newAuth(key, sessionID, role, m, start)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	var steps []openStep
	for _, l := range lines {
		f, err := a.Open([]byte(l))
		if err != nil {
			steps = append(steps, rejected(kindName(err)))
			continue
		}
		steps = append(steps, opened(f.Sequence, string(f.Message.AppendJSON(nil))))
	}
	return steps, nil
}

// sealStep is the implementation's result of sealing one message.
type sealStep struct {
	err      string
	seq      uint64
	tagInput string
	tag      string
	line     string
}

// implSeal decodes and seals messages in order with one fresh sealer.
func implSeal(key [32]byte, sessionID, role string, m canonjson.Mode, start uint64, msgs []string) ([]sealStep, error) {
	a, err := newAuth(key, sessionID, role, m, start)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	r, _ := protocol.ParseRole(role)
	var steps []sealStep
	for _, raw := range msgs {
		msg, err := protocol.DecodeMessage([]byte(raw), m)
		if err != nil {
			steps = append(steps, sealStep{err: kindName(err)})
			continue
		}
		f, line, err := a.Seal(msg)
		if err != nil {
			steps = append(steps, sealStep{err: kindName(err)})
			continue
		}
		steps = append(steps, sealStep{
			seq:      f.Sequence,
			tagInput: string(protocol.TagInput(sessionID, r, f.Sequence, f.Message)),
			tag:      string(protocol.AppendHex(nil, f.Tag[:])),
			line:     string(line),
		})
	}
	return steps, nil
}

// implBootstrapRead reads a bootstrap and reports the session, key and consumed count.
func implBootstrapRead(input []byte) (sid string, key []byte, consumed int, kind, wrapped string) {
	r := bytes.NewReader(input)
	bs, err := bootstrap.Read(r)
	if err != nil {
		kind = kindName(err)
		if errors.Is(err, io.ErrUnexpectedEOF) {
			wrapped = "UnexpectedEof"
		} else if k, ok := protocol.KindOf(err); ok {
			wrapped = k.String()
		}
		return "", nil, 0, kind, wrapped
	}
	defer bs.Key.Close()
	raw, err := bs.Key.ExposeSecret()
	if err != nil {
		return "", nil, 0, kindName(err), ""
	}
	return bs.SessionID, raw[:], len(input) - r.Len(), "", ""
}

// implBootstrapWrite writes a bootstrap for the session and raw key.
func implBootstrapWrite(sid string, key []byte) (out []byte, kind, wrapped string) {
	k, err := protocol.NewSessionKey(key)
	if err != nil {
		return nil, kindName(err), ""
	}
	defer k.Close()
	var buf bytes.Buffer
	if err := bootstrap.Write(&buf, sid, k); err != nil {
		kind = kindName(err)
		if pk, ok := protocol.KindOf(err); ok && kind == "Protocol" {
			wrapped = pk.String()
		}
		return nil, kind, wrapped
	}
	return buf.Bytes(), "", ""
}

func implManifest(input []byte) outcome {
	m, err := protocol.DecodeManifest(input)
	if err != nil {
		return outcome{err: kindName(err)}
	}
	if err := m.Validate(); err != nil {
		return outcome{err: kindName(err)}
	}
	return outcome{out: string(m.AppendJSON(nil))}
}

func implGrantAttenuate(parent, att []byte) outcome {
	g, err := protocol.DecodeCapabilityGrant(parent)
	if err != nil {
		return outcome{err: kindName(err)}
	}
	a, err := protocol.DecodeGrantAttenuation(att)
	if err != nil {
		return outcome{err: kindName(err)}
	}
	r, err := g.Attenuate(a)
	if err != nil {
		return outcome{err: kindName(err)}
	}
	return outcome{out: string(r.AppendJSON(nil))}
}

func implManifestAttenuate(parent, att []byte) outcome {
	m, err := protocol.DecodeManifest(parent)
	if err != nil {
		return outcome{err: kindName(err)}
	}
	a, err := protocol.DecodeManifestAttenuation(att)
	if err != nil {
		return outcome{err: kindName(err)}
	}
	r, err := m.Attenuate(a)
	if err != nil {
		return outcome{err: kindName(err)}
	}
	return outcome{out: string(r.AppendJSON(nil))}
}

// implCanonicalInput returns the canonical input bytes (hex) and fingerprint of a payload.
func implCanonicalInput(payload []byte, m canonjson.Mode) (canonicalHex, fp, kind string) {
	p, err := protocol.DecodeToolPayload(payload, m)
	if err != nil {
		return "", "", kindName(err)
	}
	b, err := protocol.CanonicalOperationInputBytes(p)
	if err != nil {
		return "", "", kindName(err)
	}
	f, err := protocol.OperationInputFingerprint(p)
	if err != nil {
		return "", "", kindName(err)
	}
	return hex.EncodeToString(b), f, ""
}

// implGrantFingerprint returns the compensation fingerprint and canonical form of a grant.
func implGrantFingerprint(grant []byte) (fp, canonical, kind string) {
	g, err := protocol.DecodeCapabilityGrant(grant)
	if err != nil {
		return "", "", kindName(err)
	}
	f, err := g.CompensationFingerprint()
	if err != nil {
		return "", "", kindName(err)
	}
	return f, string(g.AppendJSON(nil)), ""
}
