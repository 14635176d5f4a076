package worker

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"lukechampine.com/blake3"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/impl/protocol"
)

// The secret tool of the profile and its stub secret (spec/15-profile.md, PRF-028).
const (
	toolSecret   = "conf.secret.sign"
	stubSecretID = "conf.secret.stub"
	stubSecret   = "splash-conformance-stub-secret!!"
)

var (
	secretNeeds        = []Need{NeedSecret}
	secretEffectsNeeds = []Need{NeedSecret, NeedEffects}
	secretSourceNeeds  = []Need{NeedSecret, NeedSecretSource}
)

// The secret source's prefixes (PRF-033) and the bound of a secret value (SEC-005).
const (
	secretSourceValue   = "value:"
	secretSourceFail    = "fail:"
	maxSecretValueBytes = 65536
)

// secretValue returns n bytes of a secret value: a pattern that is not the stub secret.
func secretValue(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + 3)
	}
	return b
}

// profileSign is the answer of conf.secret.sign for input under the secret value (PRF-029):
// the keyed BLAKE3-256 hash whose key is the value when it is 32 bytes long and otherwise
// the BLAKE3-256 hash of the value.
func profileSign(value []byte, input string) string {
	key := value
	if len(key) != 32 {
		sum := blake3.Sum256(value)
		key = sum[:]
	}
	h := blake3.New(32, key)
	_, _ = h.Write([]byte(input))
	return hex.EncodeToString(h.Sum(nil))
}

// selector returns the resource selector of the given kind and id.
func selector(kind protocol.ResourceKind, id string) protocol.ResourceSelector {
	return protocol.ResourceSelector{Kind: kind, ID: id}
}

// stubSelector is the selector that grants the stub secret.
var stubSelector = selector(protocol.ResourceSecret, stubSecretID)

// secretGrant grants conf.secret.sign with the given selectors.
func secretGrant(rs ...protocol.ResourceSelector) protocol.CapabilityGrant {
	g := textGrant(toolSecret)
	g.Resources = rs
	return g
}

// signature is the answer of conf.secret.sign for input (PRF-029): the keyed BLAKE3-256 hash
// under the stub secret, in lowercase hexadecimal.
func signature(input string) string {
	h := blake3.New(32, []byte(stubSecret))
	_, _ = h.Write([]byte(input))
	return hex.EncodeToString(h.Sum(nil))
}

// expectNoStub fails the check when data holds an encoding of the stub secret.
func (t *T) expectNoStub(where string, data []byte) {
	if stubMatcher.match(data) {
		t.Failf("no trace of the stub secret in "+where+t.Cite("SEC-009", "SEC-010"), where+" holds an encoding of the stub secret: "+conformance.Clip(string(data), 300))
	}
}

// sign invokes conf.secret.sign with input and returns its text answer, after checking that
// the answer frame holds no encoding of the stub secret.
func (w *Worker) sign(input string) string {
	id := w.sendInvoke(toolSecret, text(input))
	want := "a result for " + id
	ev := w.next(want)
	if ev.err != nil {
		w.t.Failf(want, w.describeEnd(ev.err))
	}
	w.t.expectNoStub("the answer frame", ev.line)
	m, ok := w.openAnswer(want, ev.line).(protocol.ResultMessage)
	if !ok || m.Result.RequestID != id || m.Result.Payload.Format != protocol.FormatText {
		w.t.Failf(want+" with a text payload", "another answer: "+conformance.Clip(string(ev.line), 300))
	}
	return m.Result.Payload.Text
}

// secretRefused opens one session per grant set, invokes conf.secret.sign in it and expects
// no answer, the adapter status class, a diagnostic without the stub secret and, as advice, one
// naming SecretNotGranted.
func secretRefused(why string, grantSets ...[]protocol.CapabilityGrant) func(*T) {
	return func(t *T) {
		for _, grants := range grantSets {
			w := t.session(grants...)
			w.sendInvoke(toolSecret, text("hello"))
			w.expectExit(exitAdapter, "conf.secret.sign "+why)
			diag := w.stderrWhole()
			t.expectNoStub("the diagnostics", []byte(diag))
			t.expectNoSecretID(diag)
			if !strings.Contains(diag, "SecretNotGranted") {
				t.shouldf("a diagnostic naming SecretNotGranted (PRF-030)", "standard error: "+orNone([]string{strings.TrimSpace(diag)}))
			}
		}
	}
}

// expectNoSecretID fails the check when a diagnostic names the secret's identifier, which no
// error of the broker may hold (SEC-007).
func (t *T) expectNoSecretID(diag string) {
	if strings.Contains(diag, stubSecretID) {
		t.Failf("a diagnostic without the secret's identifier "+stubSecretID+" (SEC-007: a broker error gives its kind only)",
			"standard error: "+conformance.Clip(strings.TrimSpace(diag), 300))
	}
}

// stderrWhole waits briefly for the exited worker's standard error to end and returns what
// the runner kept of it (the runner watches the whole stream for the stub secret as well).
func (w *Worker) stderrWhole() string {
	select {
	case <-w.stderr.Done():
	case <-time.After(time.Second):
	}
	if w.stderr.stubLeaked() {
		w.t.Failf("no trace of the stub secret on standard error (SEC-010)", "the worker wrote an encoding of the stub secret on standard error")
	}
	return w.stderr.Excerpt()
}

// SecretChecks returns the checks of area SECRET: the capability secret broker, seen through
// the profile's secret tool.
func SecretChecks() []*Check {
	return []*Check{
		&Check{
			ID: "CNF-SECRET-01", Level: conformance.Must, Needs: secretNeeds,
			Requirements: []string{"PRF-028", "PRF-029", "SEC-003", "SEC-009", "WRK-030"},
			Title:        "conf.secret.sign answers the keyed hash under the stub secret when its grant carries the selector, and no frame holds the secret",
			Run: func(t *T) {
				w := t.session(secretGrant(selector(protocol.ResourceFileRoot, "conf.root"), stubSelector, selector(protocol.ResourceSecret, "conf.secret.other")),
					textGrant(toolTextEcho))
				for _, in := range []string{"hello", "", trickyText} {
					if got, want := w.sign(in), signature(in); got != want {
						t.Failf("the answer "+want+" for the input "+conformance.Clip(in, 40), "the answer "+conformance.Clip(got, 200))
					}
				}
				w.endInput()
			},
		},
		&Check{
			ID: "CNF-SECRET-02", Level: conformance.Must, Needs: secretNeeds,
			Requirements: []string{"PRF-030", "SEC-003", "SEC-007", "SEC-010", "SEC-011", "WRK-096", "WRK-097"},
			Title:        "conf.secret.sign under a grant without selectors is refused (status 6), and the diagnostic holds no trace of the secret and does not name its identifier",
			Run:          secretRefused("under a grant without selectors", []protocol.CapabilityGrant{secretGrant(), textGrant(toolTextEcho)}),
		},
		&Check{
			ID: "CNF-SECRET-03", Level: conformance.Must, Needs: secretNeeds,
			Requirements: []string{"PRF-030", "SEC-003", "SEC-007", "SEC-010", "SEC-011"},
			Title:        "a selector of another kind with the secret's id grants nothing: file_root, executable, network_origin (status 6)",
			Run: secretRefused("under a grant whose selector has another kind",
				[]protocol.CapabilityGrant{secretGrant(selector(protocol.ResourceFileRoot, stubSecretID))},
				[]protocol.CapabilityGrant{secretGrant(selector(protocol.ResourceExecutable, stubSecretID))},
				[]protocol.CapabilityGrant{secretGrant(selector(protocol.ResourceNetworkOrigin, stubSecretID))}),
		},
		&Check{
			ID: "CNF-SECRET-04", Level: conformance.Must, Needs: secretNeeds,
			Requirements: []string{"PRF-030", "SEC-003", "SEC-007", "SEC-010", "SEC-011"},
			Title:        "a secret selector with another id grants nothing: another secret, a prefix, an extension (status 6)",
			Run: secretRefused("under a grant whose secret selector has another id",
				[]protocol.CapabilityGrant{secretGrant(selector(protocol.ResourceSecret, "conf.secret.other"))},
				[]protocol.CapabilityGrant{secretGrant(selector(protocol.ResourceSecret, "conf.secret"))},
				[]protocol.CapabilityGrant{secretGrant(selector(protocol.ResourceSecret, stubSecretID+".x"))}),
		},
		&Check{
			ID: "CNF-SECRET-05", Level: conformance.Must, Needs: secretNeeds,
			Requirements: []string{"SEC-008", "PRF-030", "SEC-003", "SEC-007", "SEC-011", "WRK-030"},
			Title:        "the secret resolves only under the active grant: a selector granted to another tool of the manifest does not count (status 6)",
			Run: func(t *T) {
				echo := textGrant(toolTextEcho)
				echo.Resources = []protocol.ResourceSelector{stubSelector}
				w := t.session(echo, secretGrant())
				t.expectPayload("the echo", text("x"), w.invoke(toolTextEcho, text("x")))
				w.sendInvoke(toolSecret, text("hello"))
				w.expectExit(exitAdapter, "conf.secret.sign without the selector, which only conf.text.echo's grant carries")
				diag := w.stderrWhole()
				t.expectNoStub("the diagnostics", []byte(diag))
				t.expectNoSecretID(diag)
				if !strings.Contains(diag, "SecretNotGranted") {
					t.shouldf("a diagnostic naming SecretNotGranted (SEC-011)", "standard error: "+orNone([]string{strings.TrimSpace(diag)}))
				}
			},
		},
		&Check{
			ID: "CNF-SECRET-06", Level: conformance.Must, Needs: secretEffectsNeeds,
			Requirements: []string{"SEC-010", "PRF-028"},
			Title:        "using the secret writes nothing to the effect log: no line, no trace of the secret",
			Run: func(t *T) {
				w := t.session(secretGrant(stubSelector))
				for _, in := range []string{"hello", "again"} {
					if got := w.sign(in); got != signature(in) {
						t.Failf("the answer "+signature(in), "the answer "+conformance.Clip(got, 200))
					}
				}
				w.endInput()
				data, err := os.ReadFile(t.effectsPath())
				if err != nil && !os.IsNotExist(err) {
					t.Failf("a readable effect log", err.Error())
				}
				t.expectNoStub("the effect log", data)
				if len(bytes.TrimSpace(data)) > 0 {
					t.Failf("an effect log without lines after two signings (PRF-028 performs no effect)", "effect log:\n  "+conformance.Clip(string(data), 300))
				}
			},
		},
		&Check{
			ID: "CNF-SECRET-07", Level: conformance.Must, Needs: secretSourceNeeds,
			Requirements: []string{"SEC-005", "SEC-006", "PRF-029", "PRF-033", "SEC-011"},
			Title:        "the broker delivers a secret of 1 or 65,536 bytes and refuses an empty one and one of 65,537 bytes that its provider returns (status 6, no answer)",
			Run: func(t *T) {
				w := t.session(secretGrant(stubSelector))
				for _, n := range []int{1, maxSecretValueBytes} {
					value := secretValue(n)
					t.setSecretSource(secretSourceValue, value)
					if got, want := w.sign("hello"), profileSign(value, "hello"); got != want {
						t.Failf(fmt.Sprintf("the answer %s for a secret of %d bytes (PRF-029: the key is the BLAKE3-256 hash of a secret that is not 32 bytes long)", want, n),
							"the answer "+conformance.Clip(got, 200))
					}
				}
				w.endInput()
				for _, n := range []int{0, maxSecretValueBytes + 1} {
					value := secretValue(n)
					t.setSecretSource(secretSourceValue, value)
					w := t.session(secretGrant(stubSelector))
					w.sendInvoke(toolSecret, text("hello"))
					w.expectExit(exitAdapter, fmt.Sprintf("conf.secret.sign while the provider returns a secret of %d bytes (SEC-005)", n))
					diag := w.stderrWhole()
					t.expectNoSecretID(diag)
					if !strings.Contains(diag, "EmptyValue") && !strings.Contains(diag, "ValueTooLarge") && !strings.Contains(diag, "Provider") {
						t.shouldf("a diagnostic naming EmptyValue, ValueTooLarge or Provider (SEC-005, SEC-011)", "standard error: "+orNone([]string{strings.TrimSpace(diag)}))
					}
				}
			},
		},
		&Check{
			ID: "CNF-SECRET-08", Level: conformance.Must, Needs: secretSourceNeeds,
			Requirements: []string{"SEC-007", "SEC-003", "PRF-033", "SEC-011"},
			Title:        "a provider's failure ends the invocation (status 6) and its detail appears nowhere: not in frames, diagnostics, journal or effect log",
			Run: func(t *T) {
				marker, err := randomToken("conf-provider-detail-")
				if err != nil {
					t.Internal(err)
				}
				t.setSecretSource(secretSourceFail, []byte(marker))
				w := t.session(secretGrant(stubSelector), textGrant(toolTextEcho))
				t.expectPayload("the echo", text("x"), w.invoke(toolTextEcho, text("x")))
				w.sendInvoke(toolSecret, text("hello"))
				w.expectExit(exitAdapter, "conf.secret.sign while its provider fails")
				diag := w.stderrWhole()
				t.expectNoSecretID(diag)
				m := newLeakMatcher([]byte(marker))
				places := map[string][]byte{"the diagnostics": []byte(diag), "the journal": readBounded(t.journalPath()), "the effect log": readBounded(t.effectsPath())}
				for _, f := range t.frames {
					if !f.Sent {
						places["a frame"] = append(places["a frame"], f.Raw...)
					}
					places["a frame"] = append(places["a frame"], '\n')
				}
				for where, data := range places {
					if m.match(data) {
						t.Failf("no trace of the provider's error detail "+marker+" (SEC-007: a broker error keeps no cause)", where+" holds it: "+conformance.Clip(string(data), 300))
					}
				}
				if !strings.Contains(diag, "Provider") {
					t.shouldf("a diagnostic naming Provider (SEC-003, SEC-011)", "standard error: "+orNone([]string{strings.TrimSpace(diag)}))
				}
			},
		},
	}
}

// secretSourcePath is the file substituted for {secret-source} (PRF-033).
func (t *T) secretSourcePath() string {
	return filepath.Join(t.scratch(), conformance.SecretSourceFile)
}

// setSecretSource writes the secret source: the prefix and the rest (PRF-033).
func (t *T) setSecretSource(prefix string, rest []byte) {
	data := append([]byte(prefix), rest...)
	if err := os.WriteFile(t.secretSourcePath(), data, 0o600); err != nil {
		t.Internal(err)
	}
	t.Logf("runner: secret source set: %s and %d bytes", prefix, len(rest))
}
