package profile_test

import (
	"testing"

	"github.com/splashv5/conform/impl/profile"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/worker"
	"github.com/splashv5/conform/impl/worker/workertest"
)

// Spec: PRF-023, PRF-024, PRF-025, PRF-026, WRK-005
func TestTypedTool(t *testing.T) {
	a := adapter(t, registry(t, profile.Options{}), profile.ToolJSONTyped)
	for _, tc := range []struct{ in, want string }{
		{`{"text":"ab","repeat":3}`, `{"format":"json","value":{"count":3,"text":"ababab"}}`},
		{`{"repeat":1,"text":"é😀\u0000"}`, `{"format":"json","value":{"count":1,"text":"é😀\u0000"}}`},
		{`{"text":"","repeat":16}`, `{"format":"json","value":{"count":16,"text":""}}`},
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
		{workertest.JSON(`["ab",2]`), worker.AdapterInvalidJSONInput},
		{workertest.JSON(`[{"text":"ab","repeat":2}]`), worker.AdapterInvalidJSONInput},
		{workertest.JSON(`{"text":5,"repeat":2}`), worker.AdapterInvalidJSONInput},
		{workertest.JSON(`{"text":null,"repeat":2}`), worker.AdapterInvalidJSONInput},
		{workertest.JSON(`{"text":"ab","repeat":"2"}`), worker.AdapterInvalidJSONInput},
		{workertest.JSON(`{"text":"ab","repeat":2.0}`), worker.AdapterInvalidJSONInput},
		{workertest.JSON(`{"text":"ab","repeat":2e0}`), worker.AdapterInvalidJSONInput},
		{workertest.JSON(`{"text":"ab","repeat":-1}`), worker.AdapterInvalidJSONInput},
		{workertest.JSON(`{"text":"ab","repeat":17}`), worker.AdapterInvalidJSONInput},
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
