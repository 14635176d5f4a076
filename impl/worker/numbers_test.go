package worker_test

import (
	"errors"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/worker"
	"github.com/splashv5/conform/impl/worker/workertest"
)

// nonPortableInput holds numbers that only a host keeping number text writes: trailing
// zeros, exponents, integers beyond 64 bits, a magnitude beyond binary64, a long decimal.
const nonPortableInput = `{"a":0.10,"b":1e2,"c":2.5e-3,"d":99999999999999999999,"e":-9223372036854775809,` +
	`"f":1e400,"g":3.14159265358979323846264338327950288,"h":0.000001}`

// nonPortableCanonical is nonPortableInput as a Preserve reader writes it back.
const nonPortableCanonical = `{"a":0.10,"b":1e+2,"c":2.5e-3,"d":99999999999999999999,"e":-9223372036854775809,` +
	`"f":1e+400,"g":3.14159265358979323846264338327950288,"h":0.000001}`

// The JSON echo answers numbers that the host's own frame proved it keeps as text.
//
// Spec: ENC-053, WRK-030
func TestEchoOfNumbersTheHostWrote(t *testing.T) {
	r := newRig(t, rigOptions{grants: []protocol.CapabilityGrant{profileGrant(jsonEcho, 2, 0)}})
	r.want(r.host.Invoke("r1", jsonEcho, workertest.JSON(nonPortableInput)), "result json:"+nonPortableCanonical)
}

// A durable dispatch whose input and output hold non-portable numbers is answered, and so
// are its exact duplicate and its reconciliation in a fresh session, where no frame carries
// a proof: the effect is never stranded.
//
// Spec: WRK-048, ENC-054, WRK-041, WRK-060
func TestDurableOutcomeWithNonPortableNumbersIsAlwaysAnswered(t *testing.T) {
	input := workertest.Record("succeed", nonPortableInput)
	want := `operation_result succeeded json:{"operation_key":"op-1","value":` + nonPortableCanonical + `}`
	r := newRig(t, rigOptions{grants: []protocol.CapabilityGrant{profileGrant(record, 4, 0)}})
	r.want(r.host.Dispatch("d1", record, "op-1", input), want)
	if n := r.effectCount("effect"); n != 1 {
		t.Fatalf("%d effects, want 1", n)
	}
	// A fresh session over the stored journal: its first frames carry no payload number.
	fresh := newRig(t, rigOptions{grants: []protocol.CapabilityGrant{profileGrant(record, 4, 0)},
		journal: r.store.durable.Clone(), effects: r.effects})
	fresh.want(fresh.host.Reconcile("c1", record, "op-1"),
		`reconciled_operation succeeded json:{"operation_key":"op-1","value":`+nonPortableCanonical+`}`)
	again := newRig(t, rigOptions{grants: []protocol.CapabilityGrant{profileGrant(record, 4, 0)},
		journal: fresh.store.durable.Clone(), effects: r.effects})
	again.want(again.host.Dispatch("d2", record, "op-1", input), want)
	if n := r.effectCount("effect"); n != 1 {
		t.Fatalf("%d effects after the duplicate, want 1", n)
	}
}

// An invoke result holding a non-portable number that no frame of the peer covers is not
// sent; it is a result failure in the adapter's class, never an internal one.
//
// Spec: WRK-048, ENC-037, WRK-092
func TestUnprovenNonPortableResultIsAnAdapterFault(t *testing.T) {
	tenth, err := canonjson.NumberToken("0.10", canonjson.Preserve)
	if err != nil {
		t.Fatal(err)
	}
	out := canonjson.Object(canonjson.Entry{Key: "x", Value: tenth})
	a := &scripted{safety: worker.ReadOnly, invoke: func(protocol.ToolInvocation) (protocol.ToolPayload, error) {
		return protocol.JSONPayload(out), nil
	}}
	r := newRig(t, rigOptions{
		grants: []protocol.CapabilityGrant{workertest.Grant("num.tool", protocol.FormatJSON, 2, 0)},
		register: func(reg *worker.Registry) {
			if err := reg.Register("num.tool", a); err != nil {
				t.Fatal(err)
			}
		},
	})
	err = r.fail(r.host.Invoke("r1", "num.tool", workertest.JSON(`{"x":0.1}`)), worker.ErrProtocol, protocol.ErrorKind(0))
	var we *worker.Error
	if !errors.As(err, &we) || we.Stage != worker.StageResult || !errors.Is(err, protocol.ErrNonPortableNumber) {
		t.Fatalf("error %v, want a StageResult NonPortableNumber", err)
	}
	if got := worker.ExitCode(err); got != worker.ExitAdapter {
		t.Fatalf("exit status %d, want %d (adapter)", got, worker.ExitAdapter)
	}
}
