package protocol

import (
	"errors"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
)

// isKind reports whether err is a protocol error of kind k, checked both through errors.Is and
// through KindOf.
func isKind(err error, k ErrorKind) bool {
	got, ok := KindOf(err)
	return err != nil && errors.Is(err, k) && ok && got == k
}

// isTokenError reports whether err is InvalidToken for the given field label and value.
func isTokenError(err error, field, value string) bool {
	var pe *Error
	return isKind(err, ErrInvalidToken) && errors.As(err, &pe) && pe.Field == field && pe.Value == value
}

// nestedArrays returns depth nested arrays; the innermost holds the number 1, or nothing when
// empty is true.
func nestedArrays(depth int, empty bool) canonjson.Value {
	var v canonjson.Value
	if empty {
		v = canonjson.Array()
	} else {
		v = canonjson.Array(canonjson.Uint(1))
	}
	for i := 1; i < depth; i++ {
		v = canonjson.Array(v)
	}
	return v
}

// nestedArrayText is the JSON text of nestedArrays.
func nestedArrayText(depth int, empty bool) string {
	inner := "1"
	if empty {
		inner = ""
	}
	return strings.Repeat("[", depth) + inner + strings.Repeat("]", depth)
}

// outcome renders a decode result for table comparisons: the canonical JSON of a decoded
// message, or "!" followed by the error kind.
func outcome(m Message, err error) string {
	if err != nil {
		k, ok := KindOf(err)
		if !ok {
			return "!unclassified: " + err.Error()
		}
		return "!" + k.String()
	}
	return string(m.AppendJSON(nil))
}

func mustValue(t *testing.T, s string, mode canonjson.Mode) canonjson.Value {
	t.Helper()
	v, err := canonjson.ParseValue([]byte(s), mode)
	if err != nil {
		t.Fatalf("ParseValue(%s): %v", s, err)
	}
	return v
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }

// templateGrantFingerprint is a well-formed grant fingerprint for the templates below.
const templateGrantFingerprint = "b4586b43cee35f3490e1be033cf424c5d927417c4e5af7cd685123764a8c8be9"

// payloadMessageTemplates are the message kinds that carry a payload, each with PAYLOAD where
// the payload goes (in a succeeded status for the result kinds). The request id "r1e2" looks
// like a number inside a string, which a portability check must not flag.
var payloadMessageTemplates = []string{
	`{"type":"invoke","invocation":{"protocol_version":5,"session_id":"session-1","request_id":"r1e2","tool":"t","payload":PAYLOAD}}`,
	`{"type":"result","result":{"protocol_version":5,"session_id":"session-1","request_id":"r","payload":PAYLOAD}}`,
	`{"type":"dispatch_operation","request":{"protocol_version":5,"session_id":"session-1","request_id":"r","tool":"t","operation_key":"k","payload":PAYLOAD}}`,
	`{"type":"compensate_operation","request":{"protocol_version":5,"session_id":"session-1","request_id":"r","tool":"t","operation_key":"k","compensation_key":"cmp-1","tenant_scope":"ten","grant_fingerprint":"` + templateGrantFingerprint + `","payload":PAYLOAD}}`,
	`{"type":"operation_result","result":{"protocol_version":5,"session_id":"session-1","request_id":"r","tool":"t","operation_key":"k","status":{"state":"succeeded","payload":PAYLOAD}}}`,
	`{"type":"reconciled_operation","result":{"protocol_version":5,"session_id":"session-1","request_id":"r","tool":"t","operation_key":"k","status":{"state":"succeeded","payload":PAYLOAD}}}`,
	`{"type":"compensation_result","result":{"protocol_version":5,"session_id":"session-1","request_id":"r","tool":"t","operation_key":"k","compensation_key":"cmp-1","tenant_scope":"ten","grant_fingerprint":"` + templateGrantFingerprint + `","status":{"state":"succeeded","payload":PAYLOAD}}}`,
}

// PayloadMessageTemplates exposes payloadMessageTemplates to the external test package.
var PayloadMessageTemplates = payloadMessageTemplates

// isDurableOutcome reports whether m is one of the answers ENC-054 exempts from the
// portability refusal, named here independently of the sealer's own switch.
func isDurableOutcome(m Message) bool {
	switch m.Type() {
	case "operation_result", "reconciled_operation", "compensation_result":
		return true
	}
	return false
}
