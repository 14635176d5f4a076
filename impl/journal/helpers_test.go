package journal_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/splashv5/conform/impl/authorizer"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/journal"
	"github.com/splashv5/conform/impl/protocol"
)

const (
	session = "session-1"
	scope   = "tenant-release"
)

// Fingerprints recorded from the Rust reference (reference anchors A5 and A7,
// docs/reference-anchors.md).
const (
	releaseFingerprint = "b4586b43cee35f3490e1be033cf424c5d927417c4e5af7cd685123764a8c8be9"
	inputFingerprint   = "47a67a884b85e9385cedfd6cb717c9ff4f361ac2fee1f2085096df0902e4936d" // {"b":[1,{"z":1,"a":"x"}],"a":null,"B":true}
	undoFingerprint    = "5cc121e4a0ce2f79ae6b83397eb4f81a66bf12a9b1fe5836835a8118de24d578" // {"undo":"release"}
	vectorInput        = `{"b":[1,{"z":1,"a":"x"}],"a":null,"B":true}`
	vectorUndo         = `{"undo":"release"}`
)

func releaseGrant() protocol.CapabilityGrant {
	return protocol.CapabilityGrant{
		Tool: "release.publish", Format: protocol.FormatJSON, MaxCalls: 1, MaxInputBytes: 16384, MaxOutputBytes: 65536, MaxCompensations: 1,
		Resources: []protocol.ResourceSelector{
			{Kind: protocol.ResourceFileRoot, ID: "aa"}, {Kind: protocol.ResourceFileRoot, ID: "zz"},
			{Kind: protocol.ResourceNetworkOrigin, ID: "release-api"}, {Kind: protocol.ResourceSecret, ID: "release-token"},
		},
	}
}

// grants returns the test grants; outputLimit sets the output limit of calc and echo, and
// calcFormat the format of calc, so that a second authorizer can stand for a changed grant.
func grants(outputLimit uint32, calcFormat protocol.EnvelopeFormat) []protocol.CapabilityGrant {
	return []protocol.CapabilityGrant{
		releaseGrant(),
		{Tool: "calc", Format: calcFormat, MaxCalls: 1000, MaxInputBytes: 1024, MaxOutputBytes: outputLimit, MaxCompensations: 1000},
		{Tool: "echo", Format: protocol.FormatText, MaxCalls: 1000, MaxInputBytes: 1024, MaxOutputBytes: outputLimit, MaxCompensations: 1000},
		{Tool: "big", Format: protocol.FormatText, MaxCalls: 1000, MaxInputBytes: 1024, MaxOutputBytes: 65536, MaxCompensations: 1000},
	}
}

// issuer hands out authorization tokens with fresh request ids.
type issuer struct {
	t    testing.TB
	a    *authorizer.SessionAuthorizer
	next int
}

func newIssuer(t testing.TB, gs []protocol.CapabilityGrant) *issuer {
	t.Helper()
	m, err := protocol.NewCapabilityManifest(session, gs)
	if err != nil {
		t.Fatal(err)
	}
	a, err := authorizer.New(m)
	if err != nil {
		t.Fatal(err)
	}
	return &issuer{t: t, a: a}
}

// wide is the usual grant set; narrow lowers the output limits of calc and echo to 8 bytes;
// flipped makes calc a text tool.
func wide(t testing.TB) *issuer    { return newIssuer(t, grants(64, protocol.FormatJSON)) }
func narrow(t testing.TB) *issuer  { return newIssuer(t, grants(8, protocol.FormatJSON)) }
func flipped(t testing.TB) *issuer { return newIssuer(t, grants(64, protocol.FormatText)) }

func (s *issuer) id() string {
	s.next++
	return fmt.Sprintf("req-%d", s.next)
}

func (s *issuer) op(tool, key string, p protocol.ToolPayload) authorizer.AuthorizedOperationInvocation {
	s.t.Helper()
	auth, err := s.a.AuthorizeOperation(protocol.OperationDispatchRequest{ProtocolVersion: 5, SessionID: session, RequestID: s.id(), Tool: tool, OperationKey: key, Payload: p})
	if err != nil {
		s.t.Fatal(err)
	}
	return auth
}

func (s *issuer) rec(tool, key string) authorizer.AuthorizedOperationReconciliation {
	s.t.Helper()
	auth, err := s.a.AuthorizeReconciliation(protocol.OperationReconcileRequest{ProtocolVersion: 5, SessionID: session, RequestID: s.id(), Tool: tool, OperationKey: key})
	if err != nil {
		s.t.Fatal(err)
	}
	return auth
}

func (s *issuer) cmp(tool, key, cmpKey, tenant string, p protocol.ToolPayload) authorizer.AuthorizedOperationCompensation {
	s.t.Helper()
	var fp string
	for _, g := range s.a.Manifest().Grants {
		if g.Tool == tool {
			var err error
			if fp, err = g.CompensationFingerprint(); err != nil {
				s.t.Fatal(err)
			}
		}
	}
	auth, err := s.a.AuthorizeCompensation(protocol.OperationCompensationRequest{
		ProtocolVersion: 5, SessionID: session, RequestID: s.id(), Tool: tool, OperationKey: key,
		CompensationKey: cmpKey, TenantScope: tenant, GrantFingerprint: fp, Payload: p,
	})
	if err != nil {
		s.t.Fatal(err)
	}
	return auth
}

func value(t testing.TB, s string, m canonjson.Mode) canonjson.Value {
	t.Helper()
	v, err := canonjson.ParseValue([]byte(s), m)
	if err != nil {
		t.Fatalf("parse %s: %v", s, err)
	}
	return v
}

func jp(t testing.TB, s string) protocol.ToolPayload {
	return protocol.JSONPayload(value(t, s, canonjson.Preserve))
}

func newJournal(t testing.TB, sc string) *journal.Journal {
	t.Helper()
	j, err := journal.New(sc)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func toJSON(t testing.TB, j *journal.Journal) []byte {
	t.Helper()
	b, err := j.ToJSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func wantKind(t testing.TB, err error, want protocol.ErrorKind) {
	t.Helper()
	if want == 0 {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	var pe *protocol.Error
	if err == nil || !errors.As(err, &pe) || pe.Kind != want {
		t.Fatalf("error %v, want %v", err, want)
	}
}

// unchanged fails unless the journal still serializes to before.
func unchanged(t testing.TB, j *journal.Journal, before []byte) {
	t.Helper()
	if after := toJSON(t, j); !bytes.Equal(after, before) {
		t.Fatalf("journal changed:\n%s\n%s", before, after)
	}
}

func mustAdmit(t testing.TB, j *journal.Journal, auth authorizer.AuthorizedOperationInvocation) {
	t.Helper()
	a, err := j.Admit(auth)
	if err != nil || a.Kind != journal.Dispatch {
		t.Fatalf("admit: %v %v", a.Kind, err)
	}
}

func mustObserve(t testing.TB, j *journal.Journal, auth authorizer.AuthorizedOperationInvocation, s protocol.OperationStatus) {
	t.Helper()
	if _, err := j.Observe(auth, s); err != nil {
		t.Fatal(err)
	}
}
