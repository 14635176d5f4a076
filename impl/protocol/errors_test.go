package protocol

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/derive"
	"github.com/splashv5/conform/impl/errkind"
)

// The 61 ProtocolError variant names, in the reference's declaration order (ERR-001).
var referenceKindNames = []string{
	"UnsupportedVersion", "InvalidToken", "DuplicateGrant", "InvalidGrant", "TooManyGrants",
	"TooManyResources", "AttenuationWidensLimits", "AttenuationExpandsResources", "UnknownSession",
	"UnknownTool", "InvalidSessionKeyLength", "WeakSessionKey", "InvalidSequence",
	"SequenceExhausted", "UnexpectedSequence", "InvalidAuthenticationTag",
	"AuthorizationProvenanceMismatch", "DuplicateRequest", "SessionRequestLimitExceeded",
	"DuplicateResult", "CancellationIdMatchesRequest", "CancellationTargetMismatch",
	"CancellationResultMismatch", "RequestAlreadyCancelled", "CancellationAlreadyRequested",
	"ResultAfterCancellation", "CancellationAcknowledgedAfterResult",
	"CancellationTooLateBeforeResult", "CancellationUnsupportedAfterResult",
	"OperationResultMismatch", "InvalidCompensationKey", "InvalidCompensationGrantFingerprint",
	"CompensationNotGranted", "CompensationBudgetExhausted", "CompensationGrantMismatch",
	"CompensationResultMismatch", "CompensationToolMismatch",
	"CompensationRequiresSucceededOperation", "UnknownCompensation",
	"CompensationIdentityMismatch", "InvalidWorkerCompensationTransition",
	"UnsupportedOperationJournalVersion", "OperationJournalTooLarge",
	"OperationJournalScopeMismatch", "TooManyWorkerOperations", "InvalidOperationFingerprint",
	"DuplicateOperationKey", "UnknownOperation", "OperationIdentityMismatch",
	"InvalidWorkerOperationTransition", "PayloadFormatMismatch", "InvalidJsonEnvelope",
	"JsonPayloadTooDeep", "InvalidOperationFailure", "OperationFailureTooLarge", "InputTooLarge",
	"OutputTooLarge", "CallBudgetExhausted", "RequestMismatch", "WireFrameTooLarge",
	"Serialization",
}

// Spec: ERR-001, ERR-010
func TestErrorKindNames(t *testing.T) {
	all := errkind.All[kinds]()
	if len(all) != 61 || len(referenceKindNames) != 61 {
		t.Fatalf("%d kinds", len(all))
	}
	for i, k := range all {
		if k.String() != referenceKindNames[i] {
			t.Errorf("kind %d is %q, want %q", i, k, referenceKindNames[i])
		}
		if back, ok := errkind.Parse[kinds](k.String()); !ok || back != k {
			t.Errorf("errkind.Parse[kinds](%q) = %v, %v", k, back, ok)
		}
		if !k.Valid() || k.Error() != "protocol: "+referenceKindNames[i] {
			t.Errorf("kind %v: Valid %v, Error %q", k, k.Valid(), k.Error())
		}
	}
	if ErrorKind(0).Valid() || ErrorKind(62).Valid() {
		t.Error("out-of-range kinds are valid")
	}
	if _, ok := errkind.Parse[kinds]("NonPortableNumber"); ok {
		t.Error("a Go-only kind parsed as a reference kind")
	}
}

// Spec: ERR-008, ERR-021
func TestErrorMatching(t *testing.T) {
	err := fmt.Errorf("wrapped: %w", &Error{Kind: ErrInvalidToken, Field: FieldTool, Value: "T"})
	if !errors.Is(err, ErrInvalidToken) || errors.Is(err, ErrUnknownTool) {
		t.Fatal("errors.Is does not follow the kind")
	}
	var pe *Error
	if !errors.As(err, &pe) || pe.Field != "tool" || pe.Value != "T" {
		t.Fatalf("errors.As: %+v", pe)
	}
	if k, ok := KindOf(err); !ok || k != ErrInvalidToken {
		t.Fatalf("KindOf = %v, %v", k, ok)
	}
	if k, ok := KindOf(fmt.Errorf("x: %w", ErrWeakSessionKey)); !ok || k != ErrWeakSessionKey {
		t.Fatalf("KindOf(bare kind) = %v, %v", k, ok)
	}
	if _, ok := KindOf(errors.New("other")); ok {
		t.Fatal("KindOf classified a foreign error")
	}
	if _, ok := KindOf(nil); ok {
		t.Fatal("KindOf(nil) reported a kind")
	}
}

// Spec: ERR-005, ERR-011
func TestParseErrorsAreSerialization(t *testing.T) {
	_, perr := canonjson.Parse([]byte(`{"a":`))
	if k, ok := KindOf(perr); !ok || k != ErrSerialization {
		t.Fatalf("KindOf(canonjson error) = %v, %v", k, ok)
	}
	if k, ok := KindOf(derive.Errorf("x")); !ok || k != ErrSerialization {
		t.Fatalf("KindOf(derive error) = %v, %v", k, ok)
	}
	_, err := DecodeMessage([]byte(`{"type":"close_session","protocol_version":5}`), canonjson.Preserve)
	var pe *Error
	if !errors.As(err, &pe) || pe.Kind != ErrSerialization || !errors.Is(err, derive.ErrDecode) || pe.Message == "" {
		t.Fatalf("decode error %v: want Serialization wrapping derive.ErrDecode", err)
	}
	_, err = DecodeMessage([]byte(`{"type":`), canonjson.Preserve)
	if !errors.Is(err, ErrSerialization) || !errors.Is(err, canonjson.ErrSyntax) {
		t.Fatalf("syntax error %v: want Serialization wrapping canonjson.ErrSyntax", err)
	}
}

// Spec: ERR-014, ERR-016
func TestErrorMessages(t *testing.T) {
	// Every kind describes itself without falling back to the generic text.
	for _, k := range errkind.All[kinds]() {
		e := &Error{Kind: k, Field: "tool", Value: "v", Message: "m", State: StateRunning, Observed: StateFailed}
		if msg := e.Error(); !strings.HasPrefix(msg, "protocol: "+k.String()+": ") || strings.Contains(msg, "unknown error kind") {
			t.Errorf("%v: message %q", k, msg)
		}
	}
	// A hostile value is echoed only in part; the field keeps it whole.
	long := strings.Repeat("A", 1<<20)
	e := &Error{Kind: ErrInvalidToken, Field: FieldSessionID, Value: long}
	if len(e.Error()) > 200 || e.Value != long {
		t.Errorf("echo not bounded: %d bytes", len(e.Error()))
	}
	_, err := DecodeMessage([]byte(`{"type":"`+strings.Repeat("x", 100000)+`"}`), canonjson.Preserve)
	if err == nil || len(err.Error()) > 400 {
		t.Errorf("decode error echo not bounded: %d bytes", len(err.Error()))
	}
}
