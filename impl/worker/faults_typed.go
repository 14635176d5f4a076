//go:build splashfaults

package worker

import (
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
)

// typedFaults are the faults of the typed JSON adapter helper.
var typedFaults = []Fault{FaultTypedIgnoreDecodeError, FaultTypedUncheckedOutput, FaultTypedServesDispatch}

// typedHelper is implemented by every TypedJSON adapter in the faulty build, so that the
// registry hook can find the adapters built on the helper.
type typedHelper interface {
	withFaults(enabled FaultSet) Adapter
}

// withFaults returns the helper behaving as the enabled typed-helper faults say.
func (a *TypedJSON[I, O]) withFaults(enabled FaultSet) Adapter {
	return &faultyTypedJSON[I, O]{TypedJSON: a, enabled: enabled}
}

// faultyTypedJSON is TypedJSON with the deliberate bugs of typedFaults.
type faultyTypedJSON[I, O any] struct {
	*TypedJSON[I, O]
	enabled FaultSet
}

// DurableContract claims reconciliation with FaultTypedServesDispatch.
func (a *faultyTypedJSON[I, O]) DurableContract() DurableContract {
	if a.enabled.Has(FaultTypedServesDispatch) {
		return Reconciliation
	}
	return a.TypedJSON.DurableContract()
}

// Invoke is TypedJSON.Invoke with the decoder's error ignored (FaultTypedIgnoreDecodeError)
// or with an output that is not an object or array passed on (FaultTypedUncheckedOutput).
func (a *faultyTypedJSON[I, O]) Invoke(req protocol.ToolInvocation, grant protocol.CapabilityGrant) (protocol.ToolPayload, error) {
	h := *a.TypedJSON
	if a.enabled.Has(FaultTypedIgnoreDecodeError) {
		decode := h.Decode
		h.Decode = func(v canonjson.Value) (I, error) {
			in, _ := decode(v)
			return in, nil
		}
	}
	if !a.enabled.Has(FaultTypedUncheckedOutput) {
		return h.Invoke(req, grant)
	}
	// The helper's kind check sees an empty object in place of a scalar output, which is
	// then sent as it was.
	var scalar *canonjson.Value
	encode := h.Encode
	h.Encode = func(o O) (canonjson.Value, error) {
		v, err := encode(o)
		if k := v.Kind(); err == nil && k != canonjson.KindObject && k != canonjson.KindArray {
			scalar = &v
			return canonjson.Object(), nil
		}
		return v, err
	}
	p, err := h.Invoke(req, grant)
	if err == nil && scalar != nil {
		return protocol.JSONPayload(*scalar), nil
	}
	return p, err
}

// DispatchOperation runs the handler as an invocation and reports its output as succeeded
// (FaultTypedServesDispatch).
func (a *faultyTypedJSON[I, O]) DispatchOperation(req protocol.OperationDispatchRequest, grant protocol.CapabilityGrant) (protocol.OperationStatus, error) {
	if !a.enabled.Has(FaultTypedServesDispatch) {
		return a.TypedJSON.DispatchOperation(req, grant)
	}
	out, err := a.Invoke(protocol.ToolInvocation{ProtocolVersion: req.ProtocolVersion, SessionID: req.SessionID,
		RequestID: req.RequestID, Tool: req.Tool, Payload: req.Payload}, grant)
	if err != nil {
		return protocol.OperationStatus{}, err
	}
	return protocol.Succeeded(out), nil
}
