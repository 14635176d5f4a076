package transport_test

import (
	"bytes"
	"testing"

	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/transport"
)

// Spec: TRN-099, TRN-101
// A pre-sealed reconcile_operation goes out as it was sealed, never sealed again by the
// transport: the worker reads exactly the caller's line, at the caller's sequence, and the
// transport is consumed by it.
func TestOperationTransportSendsAPreSealedReconciliationAsSealed(t *testing.T) {
	_, worker := authPair(t, testSession)
	_, answer := seal(t, worker, protocol.ReconciledOperationMessage{Result: operationResult(t, "request-1", protocol.Running())})
	tr, sent, host := sealedFixture(t, append(bytes.Clone(answer), '\n'))
	req, err := protocol.NewOperationReconcileRequest(testSession, "request-1", toolDurable, "op-1")
	if err != nil {
		t.Fatal(err)
	}
	f, line := seal(t, host, protocol.ReconcileOperationMessage{Request: req})
	got, err := tr.ExchangeSealed(line)
	if err != nil || !bytes.Equal(got, answer) {
		t.Fatalf("answer %q, %v", got, err)
	}
	if sent.String() != string(line)+"\n" || f.Sequence != 2 {
		t.Fatalf("sent %q at sequence %d, want the sealed line at 2", sent.String(), f.Sequence)
	}
	if tr.State() != transport.OperationCompleted {
		t.Fatalf("state %s", tr.State())
	}
}
