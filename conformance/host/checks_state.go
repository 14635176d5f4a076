package host

import (
	"bytes"
	"fmt"

	"github.com/splashv5/conform/impl/protocol"
)

// stateChecks judge the host's reading of a `state` tag given as the variant's zero-based
// declaration index (ENC-051). Only a worker sends a `state`, so only the host suite can show it.
func stateChecks() []*Check {
	return []*Check{
		{ID: "CNF-HSTATE-01", Level: must, Requirements: []string{"ENC-051", "ENC-050", "HDR-026", "HDR-027"},
			Features: []string{FeatureInvoke, FeatureDurable},
			Title:    "a durable answer whose state tag is the variant index, tagged over the string form, is accepted as that status",
			Run: func(t *T) {
				done := protocol.Succeeded(jsonPayload(`{"value":1}`))
				w := t.session(durableGrant())
				id := t.dispatch("req-1", "op-1", jsonPayload(`{"value":1}`))
				req := w.recv(protocol.TypeDispatchOperation).(protocol.DispatchOperationMessage).Request
				w.write(indexState(t, w, w.operationResult(req, "op-1", done), "succeeded", "1"))
				if o := t.await(id); !o.OK || string(o.Status) != string(done.AppendJSON(nil)) {
					t.Failf(`ok with the status {"state":"succeeded",...} for {"state":1,...}`, string(o.Raw()))
				}

				w = t.session(durableGrant())
				id = t.sendCommand(map[string]any{"op": "reconcile", "request_id": "req-2", "tool": durableTool, "key": "op-1"})
				rec := w.recv(protocol.TypeReconcileOperation).(protocol.ReconcileOperationMessage).Request
				answer := protocol.ReconciledOperationMessage{Result: protocol.OperationReconcileResult{ProtocolVersion: protocol.ProtocolVersion,
					SessionID: rec.SessionID, RequestID: rec.RequestID, Tool: rec.Tool, OperationKey: rec.OperationKey, Status: protocol.Running()}}
				w.write(indexState(t, w, answer, "running", "0"))
				if o := t.await(id); !o.OK || string(o.Status) != `{"state":"running"}` {
					t.Failf(`ok with the status {"state":"running"} for {"state":0}`, string(o.Raw()))
				}
			}},
	}
}

// indexState returns m as the worker's first frame with its tag over the canonical form, the
// state tag name on the wire replaced by the variant index (vectors/messages.json pins both).
func indexState(t *T, w *fakeWorker, m protocol.Message, name, index string) []byte {
	line := w.forge(1, protocol.RoleWorker, w.boot.SessionID, m)
	from := []byte(`"state":"` + name + `"`)
	if bytes.Count(line, from) != 1 {
		t.Internal(fmt.Errorf("no single state tag in %s", line))
	}
	return bytes.Replace(line, from, []byte(`"state":`+index), 1)
}
