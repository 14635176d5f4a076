package main

import (
	"fmt"
	"strings"
)

// secBinding is one (tool, secret identifier) pair of a case row.
type secBinding struct{ tool, id string }

// secBindingCase is a binding construction: an empty err means the binding is valid.
type secBindingCase struct {
	meta
	b   secBinding
	err string
}

// secConfigCase configures a broker with bindings in order: count bindings held, or err.
type secConfigCase struct {
	meta
	bindings []secBinding
	count    int
	err      string
}

// secResolveCase resolves binding under grant (JSON) against the broker of secResolveBindings;
// resolved is the identifier the provider is asked for, or err the first failed check.
type secResolveCase struct {
	meta
	grant         string
	b             secBinding
	providerFails bool
	resolved      string
	err           string
}

// The broker of the resolution rows: two bindings of one tool and one of another.
var secResolveBindings = []secBinding{
	{"release.publish", "release.token"},
	{"release.publish", "release.signing"},
	{"release.read", "release.token"},
}

var (
	secBindingReqs = []string{"SEC-001"}
	secConfigReqs  = []string{"SEC-002"}
	secResolveReqs = []string{"SEC-003"}
)

func secretBindingCases() []secBindingCase {
	row := func(comment string, flags []string, tool, id, err string) secBindingCase {
		return secBindingCase{meta{comment, flags, secBindingReqs}, secBinding{tool, id}, err}
	}
	f := []string{"SecretBinding"}
	return []secBindingCase{
		row("a dotted tool and a dotted secret id", f, "release.publish", "release.token", ""),
		row("one-character tool and id", f, "a", "b", ""),
		row("an id of 128 characters, the token maximum", []string{"SecretBinding", "Boundary"}, "release.publish", strings.Repeat("s", 128), ""),
		row("an id of 129 characters", []string{"SecretBinding", "Boundary"}, "release.publish", strings.Repeat("s", 129), "InvalidSecretIdentifier"),
		row("a tool with a slash", f, "bad/tool", "release.token", "InvalidTool"),
		row("an empty tool", f, "", "release.token", "InvalidTool"),
		row("a tool with a space", f, "release publish", "release.token", "InvalidTool"),
		row("a secret id with a slash", f, "release.publish", "bad/secret", "InvalidSecretIdentifier"),
		row("an empty secret id", f, "release.publish", "", "InvalidSecretIdentifier"),
		row("a secret id that is a path", f, "release.publish", "../etc/passwd", "InvalidSecretIdentifier"),
		row("a bad tool and a bad id: the tool is checked first", []string{"SecretBinding", "CheckOrder"}, "bad tool", "bad/secret", "InvalidTool"),
	}
}

// manyBindings returns n distinct bindings of one tool.
func manyBindings(n int) []secBinding {
	out := make([]secBinding, n)
	for i := range out {
		out[i] = secBinding{"release.publish", fmt.Sprintf("release-%03d", i)}
	}
	return out
}

func secretConfigCases() []secConfigCase {
	row := func(comment string, flags []string, bs []secBinding, count int, err string) secConfigCase {
		return secConfigCase{meta{comment, flags, secConfigReqs}, bs, count, err}
	}
	f := []string{"BrokerBound"}
	b := secBinding{"release.publish", "release.token"}
	return []secConfigCase{
		row("no binding", f, []secBinding{}, 0, ""),
		row("one binding", f, []secBinding{b}, 1, ""),
		row("one id bound to two tools, two ids to one tool", f, secResolveBindings, 3, ""),
		row("the same binding twice", f, []secBinding{b, b}, 0, "DuplicateBinding"),
		row("128 bindings", []string{"BrokerBound", "Boundary"}, manyBindings(128), 128, ""),
		row("129 bindings", []string{"BrokerBound", "Boundary"}, manyBindings(129), 0, "CapacityExceeded"),
		row("128 bindings and a repeat of the first: the repeat is found first", []string{"BrokerBound", "Boundary", "CheckOrder"},
			append(manyBindings(128), secBinding{"release.publish", "release-000"}), 0, "DuplicateBinding"),
	}
}

// secGrant is the JSON of a grant of tool with the reference constructor's limits and the
// given selectors, written by hand as the manifest chapter lays a grant out.
func secGrant(tool string, maxCalls int, selectors ...string) string {
	return fmt.Sprintf(`{"tool":%q,"format":"json","max_calls":%d,"max_input_bytes":16384,"max_output_bytes":65536,"max_compensations":0,"resources":[%s]}`,
		tool, maxCalls, strings.Join(selectors, ","))
}

func sel(kind, id string) string { return fmt.Sprintf(`{"kind":%q,"id":%q}`, kind, id) }

func secretResolveCases() []secResolveCase {
	pub, read := "release.publish", "release.read"
	token := secBinding{pub, "release.token"}
	row := func(comment string, flags []string, grant string, b secBinding, resolved, err string) secResolveCase {
		return secResolveCase{meta: meta{comment, flags, secResolveReqs}, grant: grant, b: b, resolved: resolved, err: err}
	}
	kind, id, order := []string{"SelectorKind"}, []string{"SelectorId"}, []string{"CheckOrder"}
	return []secResolveCase{
		row("the exact secret selector", nil, secGrant(pub, 1, sel("secret", "release.token")), token, "release.token", ""),
		row("the exact selector among selectors of every kind", nil,
			secGrant(pub, 1, sel("file_root", "release.token"), sel("network_origin", "release.token"), sel("secret", "release.signing"), sel("secret", "release.token")),
			token, "release.token", ""),
		row("the second binding of the tool", nil, secGrant(pub, 1, sel("secret", "release.signing")), secBinding{pub, "release.signing"}, "release.signing", ""),
		row("the same id bound to another tool, under that tool's grant", []string{"ActiveGrant"}, secGrant(read, 1, sel("secret", "release.token")),
			secBinding{read, "release.token"}, "release.token", ""),
		row("a grant without selectors", nil, secGrant(pub, 1), token, "", "SecretNotGranted"),
		row("file_root with the secret's id", kind, secGrant(pub, 1, sel("file_root", "release.token")), token, "", "SecretNotGranted"),
		row("executable with the secret's id", kind, secGrant(pub, 1, sel("executable", "release.token")), token, "", "SecretNotGranted"),
		row("network_origin with the secret's id", kind, secGrant(pub, 1, sel("network_origin", "release.token")), token, "", "SecretNotGranted"),
		row("every other kind with the secret's id", kind,
			secGrant(pub, 1, sel("file_root", "release.token"), sel("executable", "release.token"), sel("network_origin", "release.token")), token, "", "SecretNotGranted"),
		row("another secret of the tool", id, secGrant(pub, 1, sel("secret", "release.signing")), token, "", "SecretNotGranted"),
		row("a prefix of the id", id, secGrant(pub, 1, sel("secret", "release")), token, "", "SecretNotGranted"),
		row("an extension of the id", id, secGrant(pub, 1, sel("secret", "release.token.v2")), token, "", "SecretNotGranted"),
		row("the id with a hyphen for its dot", id, secGrant(pub, 1, sel("secret", "release-token")), token, "", "SecretNotGranted"),
		row("the grant of another tool carrying the selector", []string{"ActiveGrant"}, secGrant(read, 1, sel("secret", "release.token")), token, "", "ToolNotGranted"),
		row("a binding the broker does not hold, under a grant carrying its selector", nil,
			secGrant(pub, 1, sel("secret", "release.other")), secBinding{pub, "release.other"}, "", "UnconfiguredBinding"),
		row("a binding of an unknown tool under that tool's grant", nil,
			secGrant("release.admin", 1, sel("secret", "release.token")), secBinding{"release.admin", "release.token"}, "", "UnconfiguredBinding"),
		row("an invalid grant (max_calls 0) carrying the selector", order, secGrant(pub, 0, sel("secret", "release.token")), token, "", "InvalidGrant"),
		row("a grant whose tool is not a token (the protocol's InvalidToken) carrying the selector", order,
			secGrant("release publish", 1, sel("secret", "release.token")), token, "", "InvalidGrant"),
		row("a grant with a selector id that is not a token (the protocol's InvalidToken)", order,
			secGrant(pub, 1, sel("secret", "release.token"), sel("file_root", "bad/root")), token, "", "InvalidGrant"),
		row("a grant with 65 selectors (the protocol's TooManyResources) carrying the selector", order,
			secGrant(pub, 1, manySelectors(65)...), token, "", "InvalidGrant"),
		row("an invalid grant and an unconfigured binding: the grant is checked first", order,
			secGrant(pub, 0), secBinding{pub, "release.other"}, "", "InvalidGrant"),
		row("an unconfigured binding under another tool's grant: the binding is checked first", order,
			secGrant(read, 1), secBinding{pub, "release.other"}, "", "UnconfiguredBinding"),
		row("another tool's grant without the selector: the tool is checked first", order,
			secGrant(read, 1), token, "", "ToolNotGranted"),
		{meta: meta{"the provider fails after every check passed", []string{"ProviderFailed"}, secResolveReqs},
			grant: secGrant(pub, 1, sel("secret", "release.token")), b: token, providerFails: true, err: "Provider"},
	}
}

// secValueCase resolves the one binding of secValueBinding while the provider returns length
// bytes of fill; err is the broker's refusal, with the length and the maximum for
// ValueTooLarge.
type secValueCase struct {
	meta
	length int
	fill   byte
	err    string
}

// secValueBinding is the binding of the value rows; their grant carries its selector.
var secValueBinding = secBinding{"release.publish", "release.token"}

// secMaxValueBytes is the largest secret value (SEC-005), written here from the chapter.
const secMaxValueBytes = 65536

func secretValueCases() []secValueCase {
	reqs := []string{"SEC-005", "SEC-006"}
	row := func(comment string, flags []string, length int, fill byte, err string) secValueCase {
		return secValueCase{meta{comment, flags, reqs}, length, fill, err}
	}
	f, edge := []string{"SecretValue"}, []string{"SecretValue", "Boundary"}
	return []secValueCase{
		row("an empty value", edge, 0, 0, "EmptyValue"),
		row("one byte, the smallest value", edge, 1, 0x00, ""),
		row("32 bytes, the size of a key", f, 32, 0xa5, ""),
		row("65,536 bytes, the largest value", edge, secMaxValueBytes, 0xff, ""),
		row("65,537 bytes, one more than the largest", edge, secMaxValueBytes+1, 0x5a, "ValueTooLarge"),
		row("100,000 bytes", f, 100000, 0x01, "ValueTooLarge"),
	}
}

// manySelectors returns n distinct selectors, the secret selector of release.token among them.
func manySelectors(n int) []string {
	out := []string{sel("secret", "release.token")}
	for i := 1; i < n; i++ {
		out = append(out, sel("file_root", fmt.Sprintf("root-%03d", i)))
	}
	return out
}
