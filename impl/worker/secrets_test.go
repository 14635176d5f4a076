package worker_test

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/worker"
)

const (
	secretTool  = "release.publish"
	secretID    = "release.token"
	secretBytes = "release-token-bytes"
)

// recordingProvider serves fixed values and records every identifier it is asked for.
type recordingProvider struct {
	mu     sync.Mutex
	values map[string]string
	calls  []string
	fail   error
}

func (p *recordingProvider) Resolve(id string) (*worker.SecretValue, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, id)
	if p.fail != nil {
		return nil, p.fail
	}
	v, ok := p.values[id]
	if !ok {
		return nil, errors.New("no such secret " + id)
	}
	return worker.NewSecretValue([]byte(v))
}

func mustBinding(t *testing.T, tool, id string) worker.SecretBinding {
	t.Helper()
	b, err := worker.NewSecretBinding(tool, id)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func secretGrant(tool string, rs ...protocol.ResourceSelector) protocol.CapabilityGrant {
	g := protocol.JSONGrant(tool)
	g.Resources = rs
	return g
}

func secretSel(id string) protocol.ResourceSelector {
	return protocol.ResourceSelector{Kind: protocol.ResourceSecret, ID: id}
}

func wantSecretKind(t *testing.T, what string, err error, kind worker.SecretErrorKind) {
	t.Helper()
	var se *worker.SecretError
	if !errors.As(err, &se) || se.Kind != kind || !errors.Is(err, kind) {
		t.Fatalf("%s: got %v, want %s", what, err, kind)
	}
	if errors.Unwrap(err) != nil {
		t.Fatalf("%s: the error carries a cause: %v", what, errors.Unwrap(err))
	}
}

// Spec: SEC-001
func TestSecretBindingRules(t *testing.T) {
	for _, c := range []struct {
		tool, id string
		kind     worker.SecretErrorKind
	}{
		{"bad/tool", secretID, worker.SecretInvalidTool},
		{"", secretID, worker.SecretInvalidTool},
		{secretTool, "bad/secret", worker.SecretInvalidIdentifier},
		{secretTool, "", worker.SecretInvalidIdentifier},
		{secretTool, strings.Repeat("a", 129), worker.SecretInvalidIdentifier},
		{"bad tool", "bad/secret", worker.SecretInvalidTool}, // the tool is checked first
	} {
		_, err := worker.NewSecretBinding(c.tool, c.id)
		wantSecretKind(t, fmt.Sprintf("binding (%q, %q)", c.tool, c.id), err, c.kind)
		if strings.Contains(err.Error(), "bad") {
			t.Errorf("the error %q names the rejected configuration", err)
		}
	}
	b := mustBinding(t, secretTool, secretID)
	if b.Tool() != secretTool {
		t.Errorf("Tool() = %q", b.Tool())
	}
}

// Spec: SEC-005, SEC-006
func TestSecretValueBounds(t *testing.T) {
	_, err := worker.NewSecretValue(nil)
	wantSecretKind(t, "an empty value", err, worker.SecretEmptyValue)
	big := bytes.Repeat([]byte{'s'}, worker.MaxSecretBytes+1)
	_, err = worker.NewSecretValue(big)
	wantSecretKind(t, "a value one byte over the limit", err, worker.SecretValueTooLarge)
	var se *worker.SecretError
	errors.As(err, &se)
	if se.Actual != worker.MaxSecretBytes+1 || se.Maximum != 65536 {
		t.Errorf("ValueTooLarge reports %d of %d", se.Actual, se.Maximum)
	}
	if bytes.ContainsFunc(big, func(r rune) bool { return r != 0 }) {
		t.Error("a refused value was not zeroed")
	}
	buf := bytes.Repeat([]byte{'s'}, worker.MaxSecretBytes)
	v, err := worker.NewSecretValue(buf)
	if err != nil {
		t.Fatalf("a value of exactly 64 KiB: %v", err)
	}
	v.Wipe()
	if bytes.ContainsFunc(buf, func(r rune) bool { return r != 0 }) {
		t.Error("Wipe left bytes")
	}
}

// Spec: SEC-002
func TestSecretBrokerConfiguration(t *testing.T) {
	p := &recordingProvider{}
	b := mustBinding(t, secretTool, secretID)
	_, err := worker.NewSecretBroker(p, b, b)
	wantSecretKind(t, "a duplicate binding", err, worker.SecretDuplicateBinding)
	_, err = worker.NewSecretBroker(p, worker.SecretBinding{})
	wantSecretKind(t, "the zero binding", err, worker.SecretInvalidTool)

	var many []worker.SecretBinding
	for i := range worker.MaxSecretBindings {
		many = append(many, mustBinding(t, secretTool, "release-"+strconv.Itoa(i)))
	}
	broker, err := worker.NewSecretBroker(p, many...)
	if err != nil || broker.Len() != 128 {
		t.Fatalf("128 bindings: %v (len %d)", err, broker.Len())
	}
	_, err = worker.NewSecretBroker(p, append(many, mustBinding(t, secretTool, "release-128"))...)
	wantSecretKind(t, "a 129th binding", err, worker.SecretCapacityExceeded)
	if !strings.Contains(err.Error(), "maximum 128") {
		t.Errorf("CapacityExceeded reads %q", err)
	}
	// A duplicate among more than 128 is reported as the duplicate it is first.
	_, err = worker.NewSecretBroker(p, append(many, many[0])...)
	wantSecretKind(t, "a duplicate after 128 bindings", err, worker.SecretDuplicateBinding)
	if len(p.calls) != 0 {
		t.Errorf("configuration called the provider: %v", p.calls)
	}
}

// Spec: SEC-003, SEC-004
func TestSecretBrokerResolvesOnlyExactGrants(t *testing.T) {
	binding := mustBinding(t, secretTool, secretID)
	other := mustBinding(t, secretTool, "other.token")
	p := &recordingProvider{values: map[string]string{secretID: secretBytes, "other.token": "x"}}
	broker, err := worker.NewSecretBroker(p, binding)
	if err != nil {
		t.Fatal(err)
	}
	invalid := secretGrant(secretTool, secretSel(secretID))
	invalid.MaxCalls = 0
	for _, c := range []struct {
		what    string
		grant   protocol.CapabilityGrant
		binding worker.SecretBinding
		kind    worker.SecretErrorKind
	}{
		{"an invalid grant", invalid, binding, worker.SecretInvalidGrant},
		{"an invalid grant and an unconfigured binding", invalid, other, worker.SecretInvalidGrant},
		{"an unconfigured binding under an exact grant", secretGrant(secretTool, secretSel("other.token")), other, worker.SecretUnconfiguredBinding},
		{"the zero binding", secretGrant(secretTool, secretSel(secretID)), worker.SecretBinding{}, worker.SecretUnconfiguredBinding},
		{"another tool's grant", secretGrant("release.read", secretSel(secretID)), binding, worker.SecretToolNotGranted},
		{"a grant without resources", secretGrant(secretTool), binding, worker.SecretNotGranted},
		{"a file_root selector of the same id", secretGrant(secretTool, protocol.ResourceSelector{Kind: protocol.ResourceFileRoot, ID: secretID}), binding, worker.SecretNotGranted},
		{"every other kind of the same id", secretGrant(secretTool,
			protocol.ResourceSelector{Kind: protocol.ResourceFileRoot, ID: secretID},
			protocol.ResourceSelector{Kind: protocol.ResourceNetworkOrigin, ID: secretID},
			protocol.ResourceSelector{Kind: protocol.ResourceExecutable, ID: secretID}), binding, worker.SecretNotGranted},
		{"another secret id", secretGrant(secretTool, secretSel("other.token")), binding, worker.SecretNotGranted},
		{"a prefix of the id", secretGrant(secretTool, secretSel("release")), binding, worker.SecretNotGranted},
	} {
		called := false
		err := broker.WithSecret(c.grant, c.binding, func([]byte) error { called = true; return nil })
		wantSecretKind(t, c.what, err, c.kind)
		if called {
			t.Errorf("%s: the callback ran", c.what)
		}
	}
	if len(p.calls) != 0 {
		t.Fatalf("refusals called the provider: %v", p.calls)
	}
	var seen []byte
	var held []byte
	g := secretGrant(secretTool, secretSel("other.token"), secretSel(secretID))
	if err := broker.WithSecret(g, binding, func(s []byte) error {
		seen, held = bytes.Clone(s), s
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if string(seen) != secretBytes || len(p.calls) != 1 || p.calls[0] != secretID {
		t.Fatalf("resolved %q after calls %v", seen, p.calls)
	}
	if bytes.ContainsFunc(held, func(r rune) bool { return r != 0 }) {
		t.Error("the secret's buffer was not zeroed after the callback")
	}
	useErr := errors.New("use failed")
	if err := broker.WithSecret(g, binding, func([]byte) error { return useErr }); err != useErr {
		t.Errorf("the callback's error came back as %v", err)
	}
}

// Spec: SEC-003, SEC-007
func TestSecretBrokerRedactsProviderFailures(t *testing.T) {
	binding := mustBinding(t, secretTool, secretID)
	p := &recordingProvider{fail: errors.New("backend down, token " + secretBytes)}
	broker, _ := worker.NewSecretBroker(p, binding)
	err := broker.WithSecret(secretGrant(secretTool, secretSel(secretID)), binding, func([]byte) error { return nil })
	wantSecretKind(t, "a failing provider", err, worker.SecretProviderFailed)
	if strings.Contains(err.Error(), "backend") || strings.Contains(fmt.Sprintf("%#v", err), "backend") {
		t.Errorf("the provider's error shows through: %q", err)
	}
	nilProvider, _ := worker.NewSecretBroker(worker.SecretProviderFunc(func(string) (*worker.SecretValue, error) {
		return nil, nil
	}), binding)
	err = nilProvider.WithSecret(secretGrant(secretTool, secretSel(secretID)), binding, func([]byte) error { return nil })
	wantSecretKind(t, "a provider that returns no value", err, worker.SecretProviderFailed)
}

// Spec: SEC-007
func TestSecretFormsAreRedacted(t *testing.T) {
	binding := mustBinding(t, secretTool, secretID)
	value, _ := worker.NewSecretValue([]byte(secretBytes))
	broker, _ := worker.NewSecretBroker(&recordingProvider{}, binding)
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%10.3v", "%T %v"} {
		for _, x := range []any{binding, &binding, value, broker, []any{binding, value}, struct{ B worker.SecretBinding }{binding}} {
			out := fmt.Sprintf(verb, x, x)
			for _, leak := range []string{secretTool, secretID, secretBytes, fmt.Sprintf("%x", secretBytes), "release"} {
				if strings.Contains(out, leak) {
					t.Errorf("fmt %s of %T gives %q, which holds %q", verb, x, out, leak)
				}
			}
		}
	}
	if got := fmt.Sprint(broker); got != "SecretBroker(bindings=1)" {
		t.Errorf("the broker prints as %q", got)
	}
}

// TestSecretBrokerConcurrentUse resolves from several goroutines (run it under -race).
func TestSecretBrokerConcurrentUse(t *testing.T) {
	binding := mustBinding(t, secretTool, secretID)
	p := &recordingProvider{values: map[string]string{secretID: secretBytes}}
	broker, _ := worker.NewSecretBroker(p, binding)
	g := secretGrant(secretTool, secretSel(secretID))
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				if err := broker.WithSecret(g, binding, func(s []byte) error {
					if string(s) != secretBytes {
						return errors.New("wrong bytes")
					}
					return nil
				}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if len(p.calls) != 160 {
		t.Errorf("%d resolutions; want 160", len(p.calls))
	}
}

// Spec: SEC-005, SEC-006, SEC-007
func TestSecretBytesProviderBounds(t *testing.T) {
	b := mustBinding(t, secretTool, secretID)
	g := secretGrant(secretTool, secretSel(secretID))
	var handed []byte
	var value func() ([]byte, error)
	broker, err := worker.NewSecretBroker(worker.SecretBytesFunc(func(string) ([]byte, error) {
		v, err := value()
		handed = v
		return v, err
	}), b)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		n       int
		kind    worker.SecretErrorKind // 0: delivered
		wantMsg string
	}{
		{0, worker.SecretEmptyValue, "EmptyValue"},
		{1, 0, ""},
		{worker.MaxSecretBytes, 0, ""},
		{worker.MaxSecretBytes + 1, worker.SecretValueTooLarge, "ValueTooLarge: secret value exceeds the broker's byte limit (65537 bytes, maximum 65536)"},
	} {
		value = func() ([]byte, error) { return bytes.Repeat([]byte{0xa5}, c.n), nil }
		var seen int
		err := broker.WithSecret(g, b, func(s []byte) error { seen = len(s); return nil })
		if c.kind == 0 {
			if err != nil || seen != c.n {
				t.Errorf("%d bytes: callback saw %d bytes, error %v; want the value delivered", c.n, seen, err)
			}
			continue
		}
		var se *worker.SecretError
		if !errors.As(err, &se) || se.Kind != c.kind || !strings.Contains(err.Error(), c.wantMsg) || seen != 0 {
			t.Errorf("%d bytes: error %v, callback saw %d bytes; want %s (%s) before the callback", c.n, err, seen, c.kind, c.wantMsg)
		}
		if c.kind == worker.SecretValueTooLarge && (se.Actual != c.n || se.Maximum != worker.MaxSecretBytes) {
			t.Errorf("%d bytes: numbers %d, %d", c.n, se.Actual, se.Maximum)
		}
		if slices.ContainsFunc(handed, func(c byte) bool { return c != 0 }) {
			t.Errorf("%d bytes: the refused value was not zeroed", c.n)
		}
	}
	// A provider's error is dropped: the broker's error is its kind only.
	value = func() ([]byte, error) { return nil, errors.New("backend says: " + secretBytes) }
	err = broker.WithSecret(g, b, func([]byte) error { return nil })
	if !errors.Is(err, worker.SecretProviderFailed) || strings.Contains(err.Error(), secretBytes) || errors.Unwrap(err) != nil {
		t.Errorf("provider failure: %v; want Provider without its cause", err)
	}
}
