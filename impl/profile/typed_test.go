package profile_test

import (
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/profile"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/worker"
	"github.com/splashv5/conform/impl/worker/workertest"
)

// Spec: PRF-031, PRF-032, PRF-025, PRF-026, WRK-005, ENC-022
func TestTypedTool(t *testing.T) {
	a := adapter(t, registry(t, profile.Options{}), profile.ToolJSONTyped)
	for _, tc := range []struct{ in, want string }{
		{`{"text":"ab","repeat":3}`, `{"format":"json","value":{"count":3,"text":"ababab"}}`},
		{`{"repeat":1,"text":"é😀\u0000"}`, `{"format":"json","value":{"count":1,"text":"é😀\u0000"}}`},
		{`{"text":"","repeat":16}`, `{"format":"json","value":{"count":16,"text":""}}`},
		{`{"text":"","repeat":255}`, `{"format":"json","value":{"count":255,"text":""}}`},
		{`{"text":"x","repeat":17}`, `{"format":"json","value":{"count":17,"text":"xxxxxxxxxxxxxxxxx"}}`},
		// The positional form of a derived struct: the members in declaration order.
		{`["ab",2]`, `{"format":"json","value":{"count":2,"text":"abab"}}`},
		// A repeated member: the payload value kept the last occurrence (ENC-022).
		{`{"text":"x","repeat":9,"text":"ab","repeat":2}`, `{"format":"json","value":{"count":2,"text":"abab"}}`},
	} {
		out, err := invoke(a, profile.ToolJSONTyped, workertest.JSON(tc.in))
		if err != nil || string(out.AppendJSON(nil)) != tc.want {
			t.Errorf("%s: %s %v; want %s", tc.in, out.AppendJSON(nil), err, tc.want)
		}
	}
	refusals := []struct {
		in   protocol.ToolPayload
		want worker.AdapterErrorKind
	}{
		{protocol.TextPayload(`{"text":"ab","repeat":2}`), worker.AdapterInvalidJSONInput},
		{workertest.JSON(`[{"text":"ab","repeat":2}]`), worker.AdapterInvalidJSONInput},
		{workertest.JSON(`["ab",2,true]`), worker.AdapterInvalidJSONInput},
		{workertest.JSON(`["ab"]`), worker.AdapterInvalidJSONInput},
		{workertest.JSON(`[]`), worker.AdapterInvalidJSONInput},
		{workertest.JSON(`[2,"ab"]`), worker.AdapterInvalidJSONInput},
		{workertest.JSON(`["ab",256]`), worker.AdapterInvalidJSONInput},
		{workertest.JSON(`{"text":5,"repeat":2}`), worker.AdapterInvalidJSONInput},
		{workertest.JSON(`{"text":null,"repeat":2}`), worker.AdapterInvalidJSONInput},
		{workertest.JSON(`{"text":"ab","repeat":"2"}`), worker.AdapterInvalidJSONInput},
		{workertest.JSON(`{"text":"ab","repeat":2.0}`), worker.AdapterInvalidJSONInput},
		{workertest.JSON(`{"text":"ab","repeat":2e0}`), worker.AdapterInvalidJSONInput},
		{workertest.JSON(`{"text":"ab","repeat":-1}`), worker.AdapterInvalidJSONInput},
		{workertest.JSON(`{"text":"ab","repeat":256}`), worker.AdapterInvalidJSONInput},
		{workertest.JSON(`{"text":"ab","repeat":18446744073709551616}`), worker.AdapterInvalidJSONInput},
		{workertest.JSON(`{"repeat":2}`), worker.AdapterInvalidJSONInput},
		{workertest.JSON(`{"text":"ab"}`), worker.AdapterInvalidJSONInput},
		{workertest.JSON(`{"text":"ab","repeat":2,"extra":true}`), worker.AdapterInvalidJSONInput},
		{workertest.JSON(`{"text":"ab","repeat":0}`), worker.AdapterInvalidJSONOutput},
		{workertest.JSON(`{"text":"ab","repeat":-0}`), worker.AdapterInvalidJSONOutput},
	}
	for _, tc := range refusals {
		if _, err := invoke(a, profile.ToolJSONTyped, tc.in); worker.AdapterKindOf(err) != tc.want {
			t.Errorf("%s: %v, want %v", tc.in.AppendJSON(nil), err, tc.want)
		}
	}
	// The helper implements invoke only and declares no durable contract, so the runtime
	// refuses a dispatch or compensation before the adapter runs (WRK-040, WRK-050).
	if a.DurableContract() != worker.ContractUndeclared {
		t.Fatalf("contract %v", a.DurableContract())
	}
	if _, err := a.DispatchOperation(protocol.OperationDispatchRequest{Tool: profile.ToolJSONTyped, Payload: workertest.JSON(`{"text":"ab","repeat":2}`)}, protocol.CapabilityGrant{}); worker.AdapterKindOf(err) != worker.AdapterUnsupported {
		t.Fatalf("dispatch: %v", err)
	}
}

// TestTypedMinusZeroByNumberModel: -0 is 0 only where numbers keep their text. A Preserve
// reader normalizes it to the integer 0, so the handler runs and its absent output is refused;
// a Lossy reader (a worker run with --number-mode lossy) reads the float -0.0, which the
// integer member refuses before the handler runs.
//
// Spec: PRF-032, PRF-025, ENC-024, ENC-028
func TestTypedMinusZeroByNumberModel(t *testing.T) {
	a := adapter(t, registry(t, profile.Options{}), profile.ToolJSONTyped)
	for _, c := range []struct {
		mode canonjson.Mode
		want worker.AdapterErrorKind
	}{
		{canonjson.Preserve, worker.AdapterInvalidJSONOutput},
		{canonjson.Lossy, worker.AdapterInvalidJSONInput},
	} {
		v, err := canonjson.ParseValue([]byte(`{"text":"ab","repeat":-0}`), c.mode)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := invoke(a, profile.ToolJSONTyped, protocol.JSONPayload(v)); worker.AdapterKindOf(err) != c.want {
			t.Errorf("%v: %v, want %v", c.mode, err, c.want)
		}
	}
}
