package worker_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/worker"
	"github.com/splashv5/conform/impl/worker/workertest"
)

type cancellableStub struct{ scripted }

func (*cancellableStub) InvokeCancellable(protocol.ToolInvocation, protocol.CapabilityGrant, *worker.CancelToken) (worker.Completion, error) {
	return worker.Acknowledged(), nil
}

// Spec: WRK-001, WRK-002
func TestRegistry(t *testing.T) {
	reg := worker.NewRegistry()
	first := &scripted{safety: worker.ReadOnly}
	if err := reg.Register("a.tool", first); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "Upper", "has space", strings.Repeat("a", 129), "é"} {
		err := reg.Register(bad, &scripted{})
		var we *worker.Error
		if !errors.Is(err, worker.ErrInvalidTool) || !errors.As(err, &we) || we.Tool != bad {
			t.Fatalf("Register(%q): %v", bad, err)
		}
		if reg.Contains(bad) {
			t.Fatalf("invalid name %q was registered", bad)
		}
	}
	if err := reg.Register("a.tool", &scripted{}); !errors.Is(err, worker.ErrDuplicateTool) {
		t.Fatalf("duplicate: %v", err)
	}
	if err := reg.RegisterCancellable("a.tool", &cancellableStub{}); !errors.Is(err, worker.ErrDuplicateTool) {
		t.Fatalf("duplicate cancellable: %v", err)
	}
	if a, _ := reg.Adapter("a.tool"); a != first {
		t.Fatal("a failed registration replaced the adapter")
	}
	c := &cancellableStub{}
	if err := reg.RegisterCancellable("b.tool", c); err != nil {
		t.Fatal(err)
	}
	if reg.IsCancellable("a.tool") || !reg.IsCancellable("b.tool") || reg.IsCancellable("c.tool") {
		t.Fatal("cancellable flags are wrong")
	}
	if a, ok := reg.Adapter("b.tool"); !ok || a != worker.Adapter(c) {
		t.Fatal("a cancellable adapter does not serve as a standard adapter")
	}
	if got := strings.Join(reg.Tools(), ","); got != "a.tool,b.tool" {
		t.Fatalf("tools %q", got)
	}
}

// Spec: WRK-003, WRK-004
func TestUnimplementedDefaults(t *testing.T) {
	var u worker.Unimplemented
	if u.InvocationSafety() != worker.SafetyUndeclared || u.DurableContract() != worker.ContractUndeclared {
		t.Fatal("defaults declare something")
	}
	check := func(op string, err error) {
		t.Helper()
		var ae *worker.AdapterError
		if !errors.As(err, &ae) || ae.Kind != worker.AdapterUnsupported || ae.Operation != op || !errors.Is(err, worker.AdapterUnsupported) {
			t.Fatalf("%s: %v", op, err)
		}
	}
	_, err := u.Invoke(protocol.ToolInvocation{}, protocol.CapabilityGrant{})
	check("invoke", err)
	_, err = u.DispatchOperation(protocol.OperationDispatchRequest{}, protocol.CapabilityGrant{})
	check("dispatch_operation", err)
	_, err = u.CompensateOperation(protocol.OperationCompensationRequest{}, protocol.CapabilityGrant{})
	check("compensate_operation", err)
	_, err = u.ReconcileOperation(protocol.OperationReconcileRequest{}, protocol.CapabilityGrant{})
	check("reconcile_operation", err)
	// The runtime checks presence only: both declared values behave alike.
	for _, safety := range []worker.InvocationSafety{worker.ReadOnly, worker.IndependentlyIdempotent} {
		r := newRig(t, rigOptions{
			grants:   []protocol.CapabilityGrant{workertest.Grant("t.echo", protocol.FormatText, 1, 0)},
			register: func(reg *worker.Registry) { _ = reg.Register("t.echo", &scripted{safety: safety, invoke: echoText}) },
		})
		r.want(r.host.Invoke("r1", "t.echo", text("x")), "result text:x")
	}
	for _, contract := range []worker.DurableContract{worker.Reconciliation, worker.ProviderIdempotencyAndReconciliation} {
		r := newRig(t, rigOptions{
			grants: []protocol.CapabilityGrant{workertest.Grant("t.durable", protocol.FormatText, 1, 0)},
			register: func(reg *worker.Registry) {
				_ = reg.Register("t.durable", &scripted{contract: contract, dispatch: func(protocol.OperationDispatchRequest) (protocol.OperationStatus, error) {
					return protocol.Running(), nil
				}})
			},
		})
		r.want(r.host.Dispatch("d1", "t.durable", "k", text("x")), "operation_result running")
	}
	// An adapter that implements nothing fails with Unsupported through the runtime.
	r := newRig(t, rigOptions{
		grants:   []protocol.CapabilityGrant{workertest.Grant("t.none", protocol.FormatText, 1, 0)},
		register: func(reg *worker.Registry) { _ = reg.Register("t.none", &scripted{safety: worker.ReadOnly}) },
	})
	if err := r.fail(r.host.Invoke("r1", "t.none", text("x")), worker.ErrAdapter, noProtocol); !errors.Is(err, worker.AdapterUnsupported) {
		t.Fatalf("unimplemented invoke: %v", err)
	}
}

func echoText(req protocol.ToolInvocation) (protocol.ToolPayload, error) { return req.Payload, nil }

type addInput struct{ left, right int64 }

// Spec: WRK-005
func TestTypedJSON(t *testing.T) {
	errShape := errors.New("want {left,right} integers")
	adapter := &worker.TypedJSON[addInput, int64]{
		Safety: worker.ReadOnly,
		Decode: func(v canonjson.Value) (addInput, error) {
			l, ok1 := v.Get("left")
			r, ok2 := v.Get("right")
			li, okl := l.Int64()
			ri, okr := r.Int64()
			if !ok1 || !ok2 || !okl || !okr {
				return addInput{}, errShape
			}
			return addInput{li, ri}, nil
		},
		Encode: func(total int64) (canonjson.Value, error) {
			if total < 0 {
				return canonjson.Int(total), nil // a scalar: not allowed as output
			}
			if total > 1000 {
				return canonjson.Value{}, errors.New("too big to encode")
			}
			return canonjson.Object(canonjson.Entry{Key: "total", Value: canonjson.Int(total)}), nil
		},
		Handler: func(in addInput, _ protocol.CapabilityGrant) (int64, error) {
			if in.left == 13 {
				return 0, &worker.AdapterError{Kind: worker.AdapterFailed}
			}
			return in.left + in.right, nil
		},
	}
	if adapter.InvocationSafety() != worker.ReadOnly || adapter.DurableContract() != worker.ContractUndeclared {
		t.Fatal("declarations")
	}
	call := func(p protocol.ToolPayload) (string, error) {
		out, err := adapter.Invoke(protocol.ToolInvocation{Payload: p}, protocol.CapabilityGrant{})
		if err != nil {
			return "", err
		}
		return string(out.AppendJSON(nil)), nil
	}
	if got, err := call(workertest.JSON(`{"left":2,"right":40}`)); err != nil || got != `{"format":"json","value":{"total":42}}` {
		t.Fatalf("add: %q %v", got, err)
	}
	for _, tc := range []struct {
		in   protocol.ToolPayload
		want worker.AdapterErrorKind
	}{
		{text(`{"left":1,"right":2}`), worker.AdapterInvalidJSONInput},
		{workertest.JSON(`{"left":"1","right":2}`), worker.AdapterInvalidJSONInput},
		{workertest.JSON(`{"left":-5,"right":2}`), worker.AdapterInvalidJSONOutput},
		{workertest.JSON(`{"left":999,"right":2}`), worker.AdapterInvalidJSONOutput},
		{workertest.JSON(`{"left":13,"right":2}`), worker.AdapterFailed},
	} {
		if _, err := call(tc.in); worker.AdapterKindOf(err) != tc.want || !errors.Is(err, tc.want) {
			t.Fatalf("%s: %v, want %v", tc.in.AppendJSON(nil), err, tc.want)
		}
	}
	_, err := adapter.DispatchOperation(protocol.OperationDispatchRequest{}, protocol.CapabilityGrant{})
	if !errors.Is(err, worker.AdapterUnsupported) {
		t.Fatalf("typed adapter dispatch: %v", err)
	}
}

// Spec: WRK-061
func TestLimits(t *testing.T) {
	if _, err := worker.NewLimits(0, 5); !errors.Is(err, worker.ErrZeroPerToolReconciliationLimit) {
		t.Fatal(err)
	}
	if _, err := worker.NewLimits(5, 0); !errors.Is(err, worker.ErrZeroSessionReconciliationLimit) {
		t.Fatal(err)
	}
	d := worker.DefaultLimits()
	if d.PerTool() != 16 || d.PerSession() != 64 {
		t.Fatalf("defaults %d/%d", d.PerTool(), d.PerSession())
	}
}
