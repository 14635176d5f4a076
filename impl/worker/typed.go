package worker

import (
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
)

// TypedJSON adapts a Go function with typed input and output to an adapter that serves invoke
// only (WRK-005). Decode turns the authorized JSON value into the input type, Encode turns the
// output back into a JSON value; neither is given payload text, so the canonical JSON model of
// the protocol is kept end to end.
type TypedJSON[I, O any] struct {
	Unimplemented
	// Safety is the declared invocation safety.
	Safety InvocationSafety
	// Decode converts the input value; an error makes the invocation fail with
	// AdapterInvalidJSONInput, and the value returned with it is discarded.
	Decode func(canonjson.Value) (I, error)
	// Encode converts the output; an error makes the invocation fail with
	// AdapterInvalidJSONOutput.
	Encode func(O) (canonjson.Value, error)
	// Handler does the work. Its error is returned unchanged.
	Handler func(in I, grant protocol.CapabilityGrant) (O, error)
}

// InvocationSafety returns the declared safety.
func (a *TypedJSON[I, O]) InvocationSafety() InvocationSafety { return a.Safety }

// Invoke decodes the JSON input, runs the handler and encodes its output. A text payload or a
// decoding failure is AdapterInvalidJSONInput; an encoding failure or an output that is not a
// JSON object or array is AdapterInvalidJSONOutput.
func (a *TypedJSON[I, O]) Invoke(req protocol.ToolInvocation, grant protocol.CapabilityGrant) (protocol.ToolPayload, error) {
	if req.Payload.Format != protocol.FormatJSON {
		return protocol.ToolPayload{}, &AdapterError{Kind: AdapterInvalidJSONInput, Reason: "text payload"}
	}
	in, err := a.Decode(req.Payload.JSON)
	if err != nil {
		return protocol.ToolPayload{}, &AdapterError{Kind: AdapterInvalidJSONInput, Reason: err.Error()}
	}
	out, err := a.Handler(in, grant)
	if err != nil {
		return protocol.ToolPayload{}, err
	}
	v, err := a.Encode(out)
	if err != nil {
		return protocol.ToolPayload{}, &AdapterError{Kind: AdapterInvalidJSONOutput, Reason: err.Error()}
	}
	if k := v.Kind(); k != canonjson.KindObject && k != canonjson.KindArray {
		return protocol.ToolPayload{}, &AdapterError{Kind: AdapterInvalidJSONOutput, Reason: "output is not an object or array"}
	}
	return protocol.JSONPayload(v), nil
}
