package e2e_test

import (
	"path/filepath"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/profile"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/transport"
	"github.com/splashv5/conform/impl/transport/transporttest"
)

// textKeepingChannel starts the reference worker for session under a host that keeps number
// text (the reference's host build) and opens a one-shot operation channel to it; end ends
// the session at end of input and requires a clean exit.
func textKeepingChannel(t *testing.T, session string, args []string) (tr *transport.OperationTransport, end func()) {
	t.Helper()
	p, stderr := transporttest.StartWorkerWith(t, transport.ProcessConfig{Path: workerBinary, Args: args, SessionID: session,
		Env: []string{}, AuthOptions: []protocol.AuthenticatorOption{protocol.AllowNonPortableNumbers()}})
	return operationChannel(t, p, session), func() { endBaselineSession(t, p, stderr) }
}

// A host that keeps number text dispatches the durable profile tool with numbers only such a
// host writes. The worker performs the effect once and answers; a fresh worker session
// answers the reconciliation (whose frames carry no number at all) and another one the exact
// duplicate, each answer accepted by the host's result validation. Nothing is stranded.
//
// Spec: WRK-048, ENC-053, ENC-054, TRN-020
func TestDurableNonPortableNumbersStayAnswerable(t *testing.T) {
	dir := t.TempDir()
	effects := filepath.Join(dir, "effects.log")
	args := []string{"--journal", filepath.Join(dir, "journal.db"), "--effect-log", effects}
	const value = `{"a":0.10,"b":1e+2,"c":99999999999999999999,"d":1e+400,"e":0.000001}`
	input, err := canonjson.ParseValue([]byte(`{"mode":"succeed","value":`+value+`}`), canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"state":"succeeded","payload":{"format":"json","value":{"operation_key":"op-n","value":` + value + `}}}`

	tr, end := textKeepingChannel(t, "e2e-num-1", args)
	res, err := tr.DispatchOperation(protocol.OperationDispatchRequest{ProtocolVersion: protocol.ProtocolVersion,
		SessionID: "e2e-num-1", RequestID: "d-1", Tool: profile.ToolDurableRecord, OperationKey: "op-n",
		Payload: protocol.JSONPayload(input)})
	if err != nil || string(res.Status.AppendJSON(nil)) != want {
		t.Fatalf("dispatch: %s, %v", res.Status.AppendJSON(nil), err)
	}

	end()
	tr, end = textKeepingChannel(t, "e2e-num-2", args)
	rec, err := tr.ReconcileOperation(protocol.OperationReconcileRequest{ProtocolVersion: protocol.ProtocolVersion,
		SessionID: "e2e-num-2", RequestID: "c-1", Tool: profile.ToolDurableRecord, OperationKey: "op-n"})
	if err != nil || string(rec.Status.AppendJSON(nil)) != want {
		t.Fatalf("reconciliation in a fresh session: %s, %v", rec.Status.AppendJSON(nil), err)
	}

	end()
	tr, end = textKeepingChannel(t, "e2e-num-3", args)
	dup, err := tr.DispatchOperation(protocol.OperationDispatchRequest{ProtocolVersion: protocol.ProtocolVersion,
		SessionID: "e2e-num-3", RequestID: "d-2", Tool: profile.ToolDurableRecord, OperationKey: "op-n",
		Payload: protocol.JSONPayload(input)})
	if err != nil || string(dup.Status.AppendJSON(nil)) != want {
		t.Fatalf("exact duplicate: %s, %v", dup.Status.AppendJSON(nil), err)
	}
	end()
	wantEffects(t, effects, true, `{"kind":"effect","tool":"conf.durable.record","operation_key":"op-n","value":`+value+"}\n")
}
