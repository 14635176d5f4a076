package profile

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"

	"lukechampine.com/blake3"

	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/worker"
)

// ToolSecretSign is the profile tool that uses a secret through the capability secret broker
// (PRF-028).
const ToolSecretSign = "conf.secret.sign"

// StubSecretID is the identifier of the profile's one secret binding: the tool
// conf.secret.sign may use the secret conf.secret.stub (PRF-028).
const StubSecretID = "conf.secret.stub"

// StubSecret is the value of the profile's stub secret: 32 public bytes, so that a runner
// can compute the tool's answer and look for the bytes wherever they must not appear. It
// protects nothing (PRF-028).
const StubSecret = "splash-conformance-stub-secret!!"

// Prefixes of the secret source's content (PRF-033).
const (
	// SourceValuePrefix starts a secret source whose rest is the value the provider returns.
	SourceValuePrefix = "value:"
	// SourceFailPrefix starts a secret source whose rest is the detail of the provider's
	// failure.
	SourceFailPrefix = "fail:"
)

// maxSourceBytes bounds what the provider reads of its source: the longer prefix and one
// byte more than the broker takes, so that a longer value is still too long.
const maxSourceBytes = len(SourceValuePrefix) + worker.MaxSecretBytes + 1

// stubProvider returns the profile's secret provider (PRF-028, PRF-033). It knows only
// StubSecretID. Without a source, or while the source file does not exist, it returns a
// fresh copy of StubSecret; otherwise it reads the file at each resolution and returns the
// bytes after SourceValuePrefix, whatever their length (the broker bounds them, SEC-005), or
// fails with an error holding the rest of any other content.
func stubProvider(source string) worker.SecretBytesFunc {
	return func(id string) ([]byte, error) {
		if id != StubSecretID {
			return nil, errors.New("profile: unknown secret")
		}
		if source == "" {
			return []byte(StubSecret), nil
		}
		f, err := os.Open(source)
		if errors.Is(err, fs.ErrNotExist) {
			return []byte(StubSecret), nil
		}
		if err != nil {
			return nil, err
		}
		defer f.Close()
		data, err := io.ReadAll(io.LimitReader(f, int64(maxSourceBytes)))
		if err != nil {
			clear(data)
			return nil, err
		}
		if value, ok := bytes.CutPrefix(data, []byte(SourceValuePrefix)); ok {
			return value, nil
		}
		detail, _ := bytes.CutPrefix(data, []byte(SourceFailPrefix))
		return nil, errors.New("profile: secret source failed: " + string(detail))
	}
}

// newStubBroker returns the profile's broker: the stub provider over source and the one
// binding of conf.secret.sign to conf.secret.stub.
func newStubBroker(source string) (*worker.SecretBroker, worker.SecretBinding, error) {
	binding, err := worker.NewSecretBinding(ToolSecretSign, StubSecretID)
	if err != nil {
		return nil, worker.SecretBinding{}, err
	}
	broker, err := worker.NewSecretBroker(stubProvider(source), binding)
	return broker, binding, err
}

// Sign returns the answer of conf.secret.sign for the text input: the lowercase hexadecimal
// keyed BLAKE3-256 hash of the input's bytes (PRF-029). The key is the secret when it is 32
// bytes long, as the stub secret is, and otherwise the BLAKE3-256 hash of the secret.
func Sign(secret []byte, input string) string {
	key := secret
	if len(key) != 32 {
		sum := blake3.Sum256(secret)
		key = sum[:]
	}
	h := blake3.New(32, key)
	_, _ = h.Write([]byte(input))
	return hex.EncodeToString(h.Sum(nil))
}

// secretSigner is conf.secret.sign (PRF-028 to PRF-030): read-only, no durable contract. It
// keeps its binding in trusted configuration and asks the broker with the grant the runtime
// gives it for the invocation; the input never chooses a secret.
type secretSigner struct {
	worker.Unimplemented
	broker  *worker.SecretBroker
	binding worker.SecretBinding
	effects *EffectLog
	leaks   secretLeaks // set only by the faulty build
}

// secretLeaks is how the faulty build (faults.go) makes the tool leak its secret; nil in the
// default build.
type secretLeaks interface {
	// leak does what the faulty tool does with the secret besides signing, and returns what
	// it appends to the answer.
	leak(secret []byte, effects *EffectLog) (answerSuffix string, err error)
}

func (*secretSigner) InvocationSafety() worker.InvocationSafety { return worker.ReadOnly }

func (s *secretSigner) Invoke(req protocol.ToolInvocation, grant protocol.CapabilityGrant) (protocol.ToolPayload, error) {
	if req.Payload.Format != protocol.FormatText {
		return protocol.ToolPayload{}, &worker.AdapterError{Kind: worker.AdapterFailed, Reason: "input is not text"}
	}
	var answer string
	err := s.broker.WithSecret(grant, s.binding, func(secret []byte) error {
		answer = Sign(secret, req.Payload.Text)
		if s.leaks != nil {
			suffix, err := s.leaks.leak(secret, s.effects)
			answer += suffix
			return err
		}
		return nil
	})
	if err != nil {
		// A broker error names its kind only (SEC-007), so it may be logged in full.
		var se *worker.SecretError
		if errors.As(err, &se) {
			return protocol.ToolPayload{}, &worker.AdapterError{Kind: worker.AdapterFailed, Reason: err.Error()}
		}
		return protocol.ToolPayload{}, &worker.AdapterError{Kind: worker.AdapterFailed, Reason: "signing failed"}
	}
	return protocol.TextPayload(answer), nil
}
