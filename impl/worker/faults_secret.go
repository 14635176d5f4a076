//go:build splashfaults

package worker

import (
	"fmt"
	"slices"

	"github.com/splashv5/conform/impl/protocol"
)

// secretFaults are the faults of the secret broker.
var secretFaults = []Fault{FaultSecretIgnoreSelector, FaultSecretAnyKind, FaultSecretAnySecret, FaultSecretInDiagnostic,
	FaultSecretValueUnbounded, FaultSecretProviderDetail, FaultSecretIDInError}

// SecretBroker returns b, or a copy of it with the enabled broker faults.
func (f *Faults) SecretBroker(b *SecretBroker) *SecretBroker {
	if f == nil || !f.Enabled.Any(secretFaults...) {
		return b
	}
	return &SecretBroker{provider: b.provider, bindings: b.bindings, hooks: f}
}

// granted replaces the exact selector test: every grant passes (FaultSecretIgnoreSelector),
// any kind with the id passes (FaultSecretAnyKind), or any secret selector passes
// (FaultSecretAnySecret).
func (f *Faults) granted(g protocol.CapabilityGrant, b SecretBinding) (ok, handled bool) {
	switch {
	case f.Has(FaultSecretIgnoreSelector):
		return true, true
	case f.Has(FaultSecretAnyKind):
		return slices.ContainsFunc(g.Resources, func(r protocol.ResourceSelector) bool { return r.ID == b.secretID }), true
	case f.Has(FaultSecretAnySecret):
		return slices.ContainsFunc(g.Resources, func(r protocol.ResourceSelector) bool { return r.Kind == protocol.ResourceSecret }), true
	}
	return false, false
}

// refuse names the secret's identifier in the refusal (FaultSecretIDInError), or resolves
// the secret before refusing and quotes it in the refusal (FaultSecretInDiagnostic).
func (f *Faults) refuse(b *SecretBroker, binding SecretBinding, err error) error {
	if f.Has(FaultSecretIDInError) {
		return fmt.Errorf("%w (secret %s)", err, binding.secretID)
	}
	if !f.Has(FaultSecretInDiagnostic) {
		return err
	}
	v, rerr := b.resolve(binding)
	if rerr != nil {
		return err
	}
	defer v.Wipe()
	return fmt.Errorf("%w (it resolved %q)", err, v.b)
}

// unboundedValue takes raw provider bytes of any length as a value
// (FaultSecretValueUnbounded).
func (f *Faults) unboundedValue() bool { return f.Has(FaultSecretValueUnbounded) }

// providerFailure keeps the provider's error as the cause of the broker's
// (FaultSecretProviderDetail).
func (f *Faults) providerFailure(err error) error {
	e := &SecretError{Kind: SecretProviderFailed}
	if f.Has(FaultSecretProviderDetail) && err != nil {
		return fmt.Errorf("%w: %w", e, err)
	}
	return e
}

// manifestSelectorsAdapter passes its adapter the grant of the invocation with the selectors
// of every grant of the session's manifest added (FaultSecretManifestSelectors).
type manifestSelectorsAdapter struct {
	Adapter
	f *Faults
}

func (a manifestSelectorsAdapter) Invoke(req protocol.ToolInvocation, grant protocol.CapabilityGrant) (protocol.ToolPayload, error) {
	if a.f.manifest != nil {
		for _, g := range a.f.manifest.Grants {
			grant.Resources = append(grant.Resources, g.Resources...)
		}
		grant.Resources = protocol.NormalizeResources(grant.Resources)
	}
	return a.Adapter.Invoke(req, grant)
}
