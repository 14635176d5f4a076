package authorizer_test

import (
	"reflect"
	"testing"

	"github.com/splashv5/conform/impl/authorizer"
	"github.com/splashv5/conform/impl/protocol"
)

// Spec: AUZ-025
func TestProvenanceIdenticalManifests(t *testing.T) {
	a, b := newAuthorizer(t), newAuthorizer(t)
	if !a.Manifest().Equal(b.Manifest()) {
		t.Fatal("manifests differ")
	}
	ta := mustAuthorize(t, a, invocation("r1", "echo", text("in")))
	tb := mustAuthorize(t, b, invocation("r1", "echo", text("in")))
	if ia, ib := ta.Invocation(), tb.Invocation(); ia.RequestID != ib.RequestID || ia.Tool != ib.Tool || !ia.Payload.Equal(ib.Payload) {
		t.Fatal("the two tokens should carry identical invocations")
	}
	// Each authorizer accepts only its own token, although the tokens look identical.
	wantKind(t, a.ValidateResult(tb, result("r1", text("out"))), protocol.ErrAuthorizationProvenanceMismatch)
	wantKind(t, b.ValidateResult(ta, result("r1", text("out"))), protocol.ErrAuthorizationProvenanceMismatch)
	_, err := a.AuthorizeCancellation(cancel("c1", "r1", "echo"), tb)
	wantKind(t, err, protocol.ErrAuthorizationProvenanceMismatch)
	if a.IsCompleted("r1") || b.IsCompleted("r1") || a.IsCancellationRequested("r1") {
		t.Fatal("a provenance failure changed state")
	}
	ca := mustCancel(t, a, cancel("c1", "r1", "echo"), ta)
	cb := mustCancel(t, b, cancel("c1", "r1", "echo"), tb)
	wantKind(t, a.ValidateCancellationResult(cb, cancelResult(cb.Request(), protocol.OutcomeUnsupported)), protocol.ErrAuthorizationProvenanceMismatch)
	wantKind(t, a.ValidateCancellationResult(ca, cancelResult(ca.Request(), protocol.OutcomeUnsupported)), 0)
	wantKind(t, a.ValidateResult(ta, result("r1", text("out"))), 0)
	wantKind(t, b.ValidateResult(tb, result("r1", text("out"))), 0)
	// The token's accessors expose the authorized request and grant.
	if ca.Target().RequestID != ta.Invocation().RequestID || ca.Request().CancellationID != "c1" || !ta.Grant().Equal(echoGrant) {
		t.Fatal("token accessors")
	}
}

// Spec: AUZ-026
func TestTokensCarryNoSerializableProvenance(t *testing.T) {
	tokens := []any{
		authorizer.AuthorizedInvocation{}, authorizer.AuthorizedWorkerCancellation{},
		authorizer.AuthorizedOperationInvocation{}, authorizer.AuthorizedOperationReconciliation{},
		authorizer.AuthorizedOperationCompensation{},
	}
	for _, tok := range tokens {
		typ := reflect.TypeOf(tok)
		for i := 0; i < typ.NumField(); i++ {
			if typ.Field(i).IsExported() {
				t.Errorf("%s has exported field %s", typ.Name(), typ.Field(i).Name)
			}
		}
		for _, m := range []string{"AppendJSON", "MarshalJSON", "MarshalText", "MarshalBinary", "GobEncode"} {
			if _, ok := typ.MethodByName(m); ok {
				t.Errorf("%s has serializer %s", typ.Name(), m)
			}
		}
	}
}

// Spec: AUZ-025
func TestGrantAccessorReturnsACopy(t *testing.T) {
	a := newAuthorizer(t)
	auth, err := a.AuthorizeOperation(dispatch("d1", "release.publish", "op", jsonPayloadNoT(`{}`)))
	if err != nil {
		t.Fatal(err)
	}
	g := auth.Grant()
	g.Resources[0].ID = "changed"
	if fp, _ := auth.Grant().CompensationFingerprint(); fp != releaseFingerprint {
		t.Fatalf("token grant changed through a copy: %s", fp)
	}
}
