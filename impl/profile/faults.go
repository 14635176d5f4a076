//go:build splashfaults

package profile

import (
	"encoding/base64"
	"encoding/hex"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/worker"
)

// The faulty build of the profile: the deliberate faults of the worker's fault catalog that
// concern the profile's tools (package worker lists them). Nothing here exists in the default
// build.

// WithFaults returns opts with the profile's tools behaving as the enabled faults of f say; a
// nil f leaves opts as it is.
func WithFaults(opts Options, f *worker.Faults) Options {
	if f != nil {
		p, _ := opts.faults.(faultyProfile)
		p.f = f
		opts.faults = p
	}
	return opts
}

type faultyProfile struct {
	f          *worker.Faults
	echoSuffix string
}

// WithEchoLeak returns opts whose text echo appends suffix to every answer, for the faults
// that leak a key into a frame; an empty suffix leaves opts as it is.
func WithEchoLeak(opts Options, suffix string) Options {
	if suffix == "" {
		return opts
	}
	p, _ := opts.faults.(faultyProfile)
	p.echoSuffix = suffix
	opts.faults = p
	return opts
}

func (p faultyProfile) textEchoSuffix() string { return p.echoSuffix }

func (p faultyProfile) secretBroker(b *worker.SecretBroker) *worker.SecretBroker {
	return p.f.SecretBroker(b)
}

func (p faultyProfile) secretLeaks() secretLeaks {
	if p.f.Has(worker.FaultSecretInResult) || p.f.Has(worker.FaultSecretInEffectLog) {
		return p
	}
	return nil
}

// leak appends the secret in hexadecimal to the answer (FaultSecretInResult) and logs it in
// base64 as an effect (FaultSecretInEffectLog).
func (p faultyProfile) leak(secret []byte, effects *EffectLog) (string, error) {
	suffix := ""
	if p.f.Has(worker.FaultSecretInResult) {
		suffix = " key=" + hex.EncodeToString(secret)
	}
	if p.f.Has(worker.FaultSecretInEffectLog) {
		line := EffectLine{Kind: KindEffect, Tool: ToolSecretSign, OperationKey: "secret-use",
			Value: canonjson.String(base64.StdEncoding.EncodeToString(secret))}
		if err := effects.Append(line); err != nil {
			return "", err
		}
	}
	return suffix, nil
}
