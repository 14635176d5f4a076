package authorizer_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/authorizer"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
)

const session = "session-1"

// The test manifest. Sizes below are counted by hand from the compact JSON or the text bytes.
var (
	// echo: text, two calls, 8-byte limits, no compensation.
	echoGrant = protocol.CapabilityGrant{Tool: "echo", Format: protocol.FormatText, MaxCalls: 2, MaxInputBytes: 8, MaxOutputBytes: 8}
	// calc: json, three calls, 16-byte limits, two compensations.
	calcGrant = protocol.CapabilityGrant{Tool: "calc", Format: protocol.FormatJSON, MaxCalls: 3, MaxInputBytes: 16, MaxOutputBytes: 16, MaxCompensations: 2}
	// release: the grant of reference anchor A5 (docs/reference-anchors.md).
	releaseGrant = protocol.CapabilityGrant{
		Tool: "release.publish", Format: protocol.FormatJSON, MaxCalls: 1, MaxInputBytes: 16384, MaxOutputBytes: 65536, MaxCompensations: 1,
		Resources: []protocol.ResourceSelector{
			{Kind: protocol.ResourceSecret, ID: "release-token"},
			{Kind: protocol.ResourceFileRoot, ID: "zz"},
			{Kind: protocol.ResourceNetworkOrigin, ID: "release-api"},
			{Kind: protocol.ResourceFileRoot, ID: "aa"},
		},
	}
)

// releaseFingerprint is the compensation fingerprint of releaseGrant, recorded from the Rust
// reference (reference anchor A5, docs/reference-anchors.md).
const releaseFingerprint = "b4586b43cee35f3490e1be033cf424c5d927417c4e5af7cd685123764a8c8be9"

// wrongFingerprint is well-formed hex that matches no grant.
var wrongFingerprint = strings.Repeat("ab", 32)

func manifest(t testing.TB) protocol.CapabilityManifest {
	t.Helper()
	release := releaseGrant
	release.Resources = append([]protocol.ResourceSelector(nil), releaseGrant.Resources...)
	m, err := protocol.NewCapabilityManifest(session, []protocol.CapabilityGrant{echoGrant, calcGrant, release})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func newAuthorizer(t testing.TB) *authorizer.SessionAuthorizer {
	t.Helper()
	a, err := authorizer.New(manifest(t))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func fingerprintOf(t testing.TB, g protocol.CapabilityGrant) string {
	t.Helper()
	fp, err := g.CompensationFingerprint()
	if err != nil {
		t.Fatal(err)
	}
	return fp
}

func jsonValue(t testing.TB, s string) canonjson.Value {
	t.Helper()
	v, err := canonjson.ParseValue([]byte(s), canonjson.Preserve)
	if err != nil {
		t.Fatalf("parse %s: %v", s, err)
	}
	return v
}

func jsonPayload(t testing.TB, s string) protocol.ToolPayload {
	return protocol.JSONPayload(jsonValue(t, s))
}

// jsonPayloadNoT parses a payload known to be valid JSON.
func jsonPayloadNoT(s string) protocol.ToolPayload {
	v, err := canonjson.ParseValue([]byte(s), canonjson.Preserve)
	if err != nil {
		panic(err)
	}
	return protocol.JSONPayload(v)
}

// protocolScalar is a JSON scalar, which is not a valid payload root.
func protocolScalar() canonjson.Value { return canonjson.Uint(5) }

func text(s string) protocol.ToolPayload { return protocol.TextPayload(s) }

// deepPayload nests 32 arrays around a number: one level too deep (depth counts the scalar).
func deepPayload(t testing.TB) protocol.ToolPayload {
	return jsonPayload(t, strings.Repeat("[", 32)+"1"+strings.Repeat("]", 32))
}

func invocation(request, tool string, p protocol.ToolPayload) protocol.ToolInvocation {
	return protocol.ToolInvocation{ProtocolVersion: 5, SessionID: session, RequestID: request, Tool: tool, Payload: p}
}

func dispatch(request, tool, key string, p protocol.ToolPayload) protocol.OperationDispatchRequest {
	return protocol.OperationDispatchRequest{ProtocolVersion: 5, SessionID: session, RequestID: request, Tool: tool, OperationKey: key, Payload: p}
}

func reconcile(request, tool, key string) protocol.OperationReconcileRequest {
	return protocol.OperationReconcileRequest{ProtocolVersion: 5, SessionID: session, RequestID: request, Tool: tool, OperationKey: key}
}

func compensation(request, tool, key, cmpKey, fp string, p protocol.ToolPayload) protocol.OperationCompensationRequest {
	return protocol.OperationCompensationRequest{
		ProtocolVersion: 5, SessionID: session, RequestID: request, Tool: tool, OperationKey: key,
		CompensationKey: cmpKey, TenantScope: "tenant", GrantFingerprint: fp, Payload: p,
	}
}

func cancel(cancellationID, request, tool string) protocol.WorkerCancellationRequest {
	return protocol.WorkerCancellationRequest{ProtocolVersion: 5, SessionID: session, CancellationID: cancellationID, RequestID: request, Tool: tool}
}

func cancelResult(req protocol.WorkerCancellationRequest, o protocol.WorkerCancellationOutcome) protocol.WorkerCancellationResult {
	return protocol.WorkerCancellationResult{
		ProtocolVersion: req.ProtocolVersion, SessionID: req.SessionID, CancellationID: req.CancellationID,
		RequestID: req.RequestID, Tool: req.Tool, Outcome: o,
	}
}

func result(request string, p protocol.ToolPayload) protocol.ToolResult {
	return protocol.ToolResult{ProtocolVersion: 5, SessionID: session, RequestID: request, Payload: p}
}

func operationResult(request, tool, key string, s protocol.OperationStatus) protocol.OperationReconcileResult {
	return protocol.OperationReconcileResult{ProtocolVersion: 5, SessionID: session, RequestID: request, Tool: tool, OperationKey: key, Status: s}
}

// fill reserves ids with reconciliations (which charge no budget) until n ids are held.
func fill(t testing.TB, a *authorizer.SessionAuthorizer, n int) {
	t.Helper()
	for i := a.ReservedRequestIDs(); i < n; i++ {
		if _, err := a.AuthorizeReconciliation(reconcile(fmt.Sprintf("fill-%d", i), "calc", "k")); err != nil {
			t.Fatalf("fill %d: %v", i, err)
		}
	}
	if got := a.ReservedRequestIDs(); got != n {
		t.Fatalf("reserved %d ids, want %d", got, n)
	}
}

// wantKind fails unless err carries the protocol error kind want (nil want means success).
func wantKind(t testing.TB, err error, want protocol.ErrorKind) {
	t.Helper()
	if want == 0 {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("succeeded, want %v", want)
	}
	if !errors.Is(err, want) {
		t.Fatalf("error %v, want kind %v", err, want)
	}
	var pe *protocol.Error
	if !errors.As(err, &pe) {
		t.Fatalf("error %v is not a *protocol.Error", err)
	}
}

// snapshot is the observable state of an authorizer, used to show that a failure changed nothing.
type snapshot struct {
	reserved                      int
	echoCalls, calcCalls, relCall uint32
	calcComps, relComps           uint32
}

func snap(a *authorizer.SessionAuthorizer) snapshot {
	return snapshot{
		reserved: a.ReservedRequestIDs(), echoCalls: a.CallsFor("echo"), calcCalls: a.CallsFor("calc"),
		relCall: a.CallsFor("release.publish"), calcComps: a.CompensationsFor("calc"), relComps: a.CompensationsFor("release.publish"),
	}
}
