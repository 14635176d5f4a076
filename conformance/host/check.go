package host

import (
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
)

// Driver features (HDR-010).
const (
	// FeatureInvoke: start, invoke, close and wait.
	FeatureInvoke = "invoke"
	// FeatureDurable: dispatch and reconcile.
	FeatureDurable = "durable"
	// FeatureCancel: cancellable sessions, begin, cancel and finish.
	FeatureCancel = "cancel"
)

// Check is one host conformance check: the framework's check, run in the host suite's T; its
// Features are the driver features it needs (HDR-010, HDR-011).
type Check = conformance.Check[*T]

// Catalog returns every host check, ordered by ID.
func Catalog() conformance.Catalog[*T] {
	return conformance.SortedCatalog(bootChecks(), openChecks(), frameChecks(), resultChecks(), deadlineChecks(), numberChecks(), durableChecks(), cancelChecks(),
		recoverChecks(), compChecks(), unsupportedChecks(), stateChecks(), budgetChecks(), slotChecks(), fileChecks(), hostileChecks(), keyChecks(), derivationChecks(), cancelWaitChecks(),
		livenessChecks(), planChecks(), tenantChecks(), muxChecks())
}

// CatalogEntries returns the digest entries of the host suite's catalog.
func CatalogEntries() []conformance.CatalogEntry { return Catalog().Entries() }

// Suite describes the host suite: its version and catalog digest.
func Suite() conformance.SuiteInfo { return conformance.NewSuiteInfo("host", CatalogEntries()) }

const unreachableKey = "the reference driver never holds the key bytes (impl/transport.StartProcess draws, writes and " +
	"closes them), so no fault of it can leak or reuse a key; TestHostileDrivers proves the check with a driver that does"

// Tools of the checks' manifests.
const (
	echoTool = "conf.echo"
	jsonTool = "conf.json"
)

func echoGrant() protocol.CapabilityGrant {
	g := protocol.TextGrant(echoTool)
	g.MaxCalls, g.MaxOutputBytes = 8, 64
	return g
}

func jsonGrant() protocol.CapabilityGrant {
	g := protocol.JSONGrant(jsonTool)
	g.MaxCalls = 8
	return g
}

func text(s string) protocol.ToolPayload { return protocol.TextPayload(s) }

func jsonPayload(s string) protocol.ToolPayload {
	v, err := canonjson.ParseValue([]byte(s), canonjson.Preserve)
	if err != nil {
		panic(err)
	}
	return protocol.JSONPayload(v)
}

// roundTrip runs one invocation the worker answers correctly and returns the invoke it saw.
func roundTrip(t *T, w *fakeWorker, requestID string) protocol.InvokeMessage {
	id := t.invoke(requestID, echoTool, text("ping"))
	inv := w.recv(protocol.TypeInvoke).(protocol.InvokeMessage)
	w.send(w.result(requestID, text("pong")))
	o := t.await(id)
	if !o.OK || string(o.Payload) != string(text("pong").AppendJSON(nil)) {
		t.Failf(`the worker's result as the outcome, {"format":"text",...} "pong"`+t.Cite("HDR-021"), conformance.Clip(string(o.Raw()), 200))
	}
	return inv
}

// hostile runs one invocation that the worker answers with the bytes answer builds, expects an
// error outcome, then expects the session poisoned: a second invocation fails without a frame.
func hostile(t *T, why string, answer func(w *fakeWorker, inv protocol.InvokeMessage) []byte) {
	w := t.session(echoGrant())
	id := t.invoke("req-1", echoTool, text("ping"))
	inv := w.recv(protocol.TypeInvoke).(protocol.InvokeMessage)
	w.write(answer(w, inv))
	o := t.expectError(id, "the host rejects "+why)
	t.Logf("host rejected it with %s", o.Error)
	id = t.invoke("req-2", echoTool, text("ping"))
	t.expectError(id, "an invocation on the poisoned session fails"+t.Cite("TRN-012"))
	w.expectSilence(150*time.Millisecond, "after "+why+" the channel is poisoned"+t.Cite("FRM-036", "TRN-003"))
}
