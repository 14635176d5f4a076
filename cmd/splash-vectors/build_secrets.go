package main

import "github.com/splashv5/conform/vectors/vectorfmt"

func secretBindingOf(b secBinding) vectorfmt.SecretBinding {
	return vectorfmt.SecretBinding{Tool: b.tool, SecretID: b.id}
}

func secretBindingsOf(bs []secBinding) []vectorfmt.SecretBinding {
	out := make([]vectorfmt.SecretBinding, len(bs))
	for i, b := range bs {
		out[i] = secretBindingOf(b)
	}
	return out
}

func buildSecrets(c *checker) (string, any, *fileBuilder) {
	b := newFileBuilder(vectorfmt.SecretsFile, c)
	bindingG := vectorfmt.SecretGroup{Type: vectorfmt.SecretBindingType, Tests: []vectorfmt.SecretTest{}}
	for _, row := range secretBindingCases() {
		binding := secretBindingOf(row.b)
		bindingG.Tests = append(bindingG.Tests, vectorfmt.SecretTest{Case: b.newCase(row.meta, row.err), Binding: &binding})
	}
	configG := vectorfmt.SecretGroup{Type: vectorfmt.SecretBrokerConfigType, Tests: []vectorfmt.SecretTest{}}
	for _, row := range secretConfigCases() {
		t := vectorfmt.SecretTest{Case: b.newCase(row.meta, row.err), Bindings: secretBindingsOf(row.bindings)}
		if row.err == "" {
			n := row.count
			t.BindingCount = &n
		}
		configG.Tests = append(configG.Tests, t)
	}
	resolveG := vectorfmt.SecretGroup{Type: vectorfmt.SecretResolveType, Bindings: secretBindingsOf(secResolveBindings), Tests: []vectorfmt.SecretTest{}}
	for _, row := range secretResolveCases() {
		binding := secretBindingOf(row.b)
		if (row.err == "") == (row.resolved == "") {
			b.failf("%q: a resolution row names either the resolved id or an error", row.comment)
		}
		resolveG.Tests = append(resolveG.Tests, vectorfmt.SecretTest{Case: b.newCase(row.meta, row.err), Grant: b.text(row.grant),
			Binding: &binding, ProviderFails: row.providerFails, ResolvedID: row.resolved})
	}
	valueG := vectorfmt.SecretGroup{Type: vectorfmt.SecretValueType, Bindings: secretBindingsOf([]secBinding{secValueBinding}), Tests: []vectorfmt.SecretTest{}}
	for _, row := range secretValueCases() {
		binding := secretBindingOf(secValueBinding)
		n, fill := row.length, int(row.fill)
		t := vectorfmt.SecretTest{Case: b.newCase(row.meta, row.err), Binding: &binding,
			Grant: b.text(secGrant(secValueBinding.tool, 1, sel("secret", secValueBinding.id))), ValueLength: &n, ValueByte: &fill}
		switch {
		case row.err == "ValueTooLarge":
			actual, maximum := row.length, secMaxValueBytes
			t.ActualBytes, t.MaximumBytes = &actual, &maximum
		case (row.err == "") != (row.length >= 1 && row.length <= secMaxValueBytes):
			b.failf("%q: a value of %d bytes is valid exactly from 1 to %d bytes", row.comment, row.length, secMaxValueBytes)
		}
		valueG.Tests = append(valueG.Tests, t)
	}
	doc := vectorfmt.Secrets{TestGroups: []vectorfmt.SecretGroup{bindingG, configG, resolveG, valueG}}
	doc.Header = b.header()
	return b.name, doc, b
}
