package replay

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"strconv"

	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/worker"
	"github.com/splashv5/conform/vectors/vectorfmt"
)

func replaySecrets(fsys fs.FS, fr *fileRun) error {
	var doc vectorfmt.Secrets
	if err := vectorfmt.Load(fsys, vectorfmt.SecretsFile, &doc); err != nil {
		return err
	}
	return replayGroups(fr, doc.TestGroups, func(g *vectorfmt.SecretGroup) ([]vectorfmt.SecretTest, func(*vectorfmt.SecretTest) (*vectorfmt.Case, []string), error) {
		switch g.Type {
		case vectorfmt.SecretBindingType:
			return g.Tests, func(t *vectorfmt.SecretTest) (*vectorfmt.Case, []string) { return &t.Case, checkSecretBinding(t) }, nil
		case vectorfmt.SecretBrokerConfigType:
			return g.Tests, func(t *vectorfmt.SecretTest) (*vectorfmt.Case, []string) { return &t.Case, checkSecretConfig(t) }, nil
		case vectorfmt.SecretResolveType:
			return g.Tests, func(t *vectorfmt.SecretTest) (*vectorfmt.Case, []string) {
				return &t.Case, checkSecretResolve(g.Bindings, t)
			}, nil
		case vectorfmt.SecretValueType:
			return g.Tests, func(t *vectorfmt.SecretTest) (*vectorfmt.Case, []string) {
				return &t.Case, checkSecretValue(g.Bindings, t)
			}, nil
		}
		return nil, nil, fmt.Errorf("unknown group type %q", g.Type)
	})
}

func secretBindings(bs []vectorfmt.SecretBinding) ([]worker.SecretBinding, error) {
	out := make([]worker.SecretBinding, 0, len(bs))
	for _, b := range bs {
		wb, err := worker.NewSecretBinding(b.Tool, b.SecretID)
		if err != nil {
			return nil, err
		}
		out = append(out, wb)
	}
	return out, nil
}

func checkSecretBinding(t *vectorfmt.SecretTest) []string {
	if t.Binding == nil {
		return []string{"the test has no binding"}
	}
	_, err := worker.NewSecretBinding(t.Binding.Tool, t.Binding.SecretID)
	p, _ := judge(&t.Case, err)
	return p
}

func checkSecretConfig(t *vectorfmt.SecretTest) []string {
	bs, err := secretBindings(t.Bindings)
	if err != nil {
		return []string{"a configured binding is invalid: " + err.Error()}
	}
	broker, err := worker.NewSecretBroker(worker.SecretProviderFunc(func(string) (*worker.SecretValue, error) {
		return nil, errors.New("the provider must not be asked")
	}), bs...)
	if p, done := judge(&t.Case, err); done {
		return p
	}
	if t.BindingCount == nil {
		return []string{"a valid test has no binding_count"}
	}
	return compare("binding_count", strconv.Itoa(*t.BindingCount), strconv.Itoa(broker.Len()))
}

func checkSecretResolve(configured []vectorfmt.SecretBinding, t *vectorfmt.SecretTest) []string {
	if t.Binding == nil || t.Grant == nil {
		return []string{"the test has no binding or no grant"}
	}
	bs, err := secretBindings(configured)
	if err != nil {
		return []string{"a configured binding is invalid: " + err.Error()}
	}
	var asked []string
	provider := worker.SecretProviderFunc(func(id string) (*worker.SecretValue, error) {
		asked = append(asked, id)
		if t.ProviderFails {
			return nil, errors.New("the provider fails on purpose")
		}
		return worker.NewSecretValue([]byte("value of " + id))
	})
	broker, err := worker.NewSecretBroker(provider, bs...)
	if err != nil {
		return []string{"the group's broker: " + err.Error()}
	}
	grant, err := protocol.DecodeCapabilityGrant([]byte(*t.Grant))
	if err != nil {
		return []string{"the grant does not decode: " + err.Error()}
	}
	binding, err := worker.NewSecretBinding(t.Binding.Tool, t.Binding.SecretID)
	if err != nil {
		return []string{"the binding is invalid: " + err.Error()}
	}
	var seen string
	err = broker.WithSecret(grant, binding, func(secret []byte) error {
		seen = string(secret)
		return nil
	})
	if t.Result == vectorfmt.Invalid {
		p := expectError(&t.Case, err)
		if t.Error != "Provider" && len(asked) > 0 {
			p = append(p, fmt.Sprintf("the provider was asked for %v before the refusal", asked))
		}
		return p
	}
	if err != nil {
		return unexpected(err)
	}
	if len(asked) != 1 || asked[0] != t.ResolvedID || seen != "value of "+t.ResolvedID {
		return []string{fmt.Sprintf("resolved: want the provider asked once for %q, got %v (callback saw %q)", t.ResolvedID, asked, seen)}
	}
	return nil
}

func checkSecretValue(configured []vectorfmt.SecretBinding, t *vectorfmt.SecretTest) []string {
	if t.Binding == nil || t.Grant == nil || t.ValueLength == nil || t.ValueByte == nil {
		return []string{"the test has no binding, grant, value_length or value_byte"}
	}
	bs, err := secretBindings(configured)
	if err != nil {
		return []string{"a configured binding is invalid: " + err.Error()}
	}
	n, fill := *t.ValueLength, byte(*t.ValueByte)
	broker, err := worker.NewSecretBroker(worker.SecretBytesFunc(func(string) ([]byte, error) {
		return bytes.Repeat([]byte{fill}, n), nil
	}), bs...)
	if err != nil {
		return []string{"the group's broker: " + err.Error()}
	}
	grant, err := protocol.DecodeCapabilityGrant([]byte(*t.Grant))
	if err != nil {
		return []string{"the grant does not decode: " + err.Error()}
	}
	binding, err := worker.NewSecretBinding(t.Binding.Tool, t.Binding.SecretID)
	if err != nil {
		return []string{"the binding is invalid: " + err.Error()}
	}
	called, seen := false, 0
	err = broker.WithSecret(grant, binding, func(secret []byte) error {
		called = true
		for _, c := range secret {
			if c == fill {
				seen++
			}
		}
		return nil
	})
	if t.Result == vectorfmt.Invalid {
		p := expectError(&t.Case, err)
		if called {
			p = append(p, "the callback ran before the refusal")
		}
		var se *worker.SecretError
		if t.ActualBytes != nil && t.MaximumBytes != nil && errors.As(err, &se) {
			p = append(p, compare("actual_bytes", strconv.Itoa(*t.ActualBytes), strconv.Itoa(se.Actual))...)
			p = append(p, compare("maximum_bytes", strconv.Itoa(*t.MaximumBytes), strconv.Itoa(se.Maximum))...)
		}
		return p
	}
	if err != nil {
		return unexpected(err)
	}
	if !called || seen != n {
		return []string{fmt.Sprintf("the callback saw %d of the %d value bytes (called: %v)", seen, n, called)}
	}
	return nil
}
