package protocol

import (
	"fmt"
	"slices"
	"sync"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/derive"
)

// The serde descriptions of the protocol types (spec sections 2.2 to 2.6). Field order is
// declaration order (ENC-002); DenyUnknown follows MSG-021.
var (
	resourceSelectorStruct = derive.Struct{Name: "ResourceSelector", Fields: []derive.Field{
		{Name: "kind"}, {Name: "id"},
	}}
	grantStruct = derive.Struct{Name: "CapabilityGrant", Fields: []derive.Field{
		{Name: "tool"}, {Name: "format"}, {Name: "max_calls"}, {Name: "max_input_bytes"},
		{Name: "max_output_bytes"}, {Name: "max_compensations", Default: true},
		{Name: "resources", Default: true},
	}}
	manifestStruct = derive.Struct{Name: "CapabilityManifest", Fields: []derive.Field{
		{Name: "protocol_version"}, {Name: "session_id"}, {Name: "grants"},
	}}
	grantAttenuationStruct = derive.Struct{Name: "GrantAttenuation", Fields: []derive.Field{
		{Name: "max_calls", Default: true}, {Name: "max_input_bytes", Default: true},
		{Name: "max_output_bytes", Default: true}, {Name: "max_compensations", Default: true},
		{Name: "resources", Default: true},
	}}
	manifestAttenuationStruct = derive.Struct{Name: "ManifestAttenuation", Fields: []derive.Field{
		{Name: "allowed_tools", Default: true}, {Name: "grants", Default: true},
	}}
	payloadEnum = derive.Adjacent{Name: "ToolPayload", Tag: "format", Content: "value",
		Variants: formatNames[:]}
	invocationStruct = derive.Struct{Name: "ToolInvocation", Fields: []derive.Field{
		{Name: "protocol_version"}, {Name: "session_id"}, {Name: "request_id"}, {Name: "tool"},
		{Name: "payload"},
	}}
	resultStruct = derive.Struct{Name: "ToolResult", Fields: []derive.Field{
		{Name: "protocol_version"}, {Name: "session_id"}, {Name: "request_id"}, {Name: "payload"},
	}}
	cancelRequestStruct = derive.Struct{Name: "WorkerCancellationRequest", DenyUnknown: true, Fields: []derive.Field{
		{Name: "protocol_version"}, {Name: "session_id"}, {Name: "cancellation_id"},
		{Name: "request_id"}, {Name: "tool"},
	}}
	cancelResultStruct = derive.Struct{Name: "WorkerCancellationResult", DenyUnknown: true, Fields: []derive.Field{
		{Name: "protocol_version"}, {Name: "session_id"}, {Name: "cancellation_id"},
		{Name: "request_id"}, {Name: "tool"}, {Name: "outcome"},
	}}
	dispatchStruct = derive.Struct{Name: "OperationDispatchRequest", DenyUnknown: true, Fields: []derive.Field{
		{Name: "protocol_version"}, {Name: "session_id"}, {Name: "request_id"}, {Name: "tool"},
		{Name: "operation_key"}, {Name: "payload"},
	}}
	reconcileRequestStruct = derive.Struct{Name: "OperationReconcileRequest", Fields: []derive.Field{
		{Name: "protocol_version"}, {Name: "session_id"}, {Name: "request_id"}, {Name: "tool"},
		{Name: "operation_key"},
	}}
	reconcileResultStruct = derive.Struct{Name: "OperationReconcileResult", Fields: []derive.Field{
		{Name: "protocol_version"}, {Name: "session_id"}, {Name: "request_id"}, {Name: "tool"},
		{Name: "operation_key"}, {Name: "status"},
	}}
	compensationRequestStruct = derive.Struct{Name: "OperationCompensationRequest", DenyUnknown: true, Fields: []derive.Field{
		{Name: "protocol_version"}, {Name: "session_id"}, {Name: "request_id"}, {Name: "tool"},
		{Name: "operation_key"}, {Name: "compensation_key"}, {Name: "tenant_scope"},
		{Name: "grant_fingerprint"}, {Name: "payload"},
	}}
	compensationResultStruct = derive.Struct{Name: "OperationCompensationResult", DenyUnknown: true, Fields: []derive.Field{
		{Name: "protocol_version"}, {Name: "session_id"}, {Name: "request_id"}, {Name: "tool"},
		{Name: "operation_key"}, {Name: "compensation_key"}, {Name: "tenant_scope"},
		{Name: "grant_fingerprint"}, {Name: "status"},
	}}
	// OperationStatus has no pending variant; WorkerOperationState (the journal) has.
	statusEnum = derive.Tagged{Name: "OperationStatus", Tag: "state",
		Variants: []string{"running", "succeeded", "failed", "cancelled"}}
	stateEnum = derive.Tagged{Name: "WorkerOperationState", Tag: "state",
		Variants: []string{"pending", "running", "succeeded", "failed", "cancelled"}}
	succeededBody = derive.Struct{Name: "Succeeded", Fields: []derive.Field{{Name: "payload"}}}
	failedBody    = derive.Struct{Name: "Failed", Fields: []derive.Field{{Name: "message"}}}

	messageEnum = derive.Tagged{Name: "WorkerMessage", Tag: "type", Variants: func() []string {
		out := make([]string, len(MessageTypes))
		for i, t := range MessageTypes {
			out[i] = string(t)
		}
		return out
	}()}
	// messageBodies[i] is the body of the i-th WorkerMessage variant.
	messageBodies = [...]derive.Struct{
		{Name: "WorkerMessage::OpenSession", Fields: []derive.Field{{Name: "manifest"}}},
		{Name: "WorkerMessage::Invoke", Fields: []derive.Field{{Name: "invocation"}}},
		{Name: "WorkerMessage::Result", Fields: []derive.Field{{Name: "result"}}},
		{Name: "WorkerMessage::DispatchOperation", Fields: []derive.Field{{Name: "request"}}},
		{Name: "WorkerMessage::OperationResult", Fields: []derive.Field{{Name: "result"}}},
		{Name: "WorkerMessage::CompensateOperation", Fields: []derive.Field{{Name: "request"}}},
		{Name: "WorkerMessage::CompensationResult", Fields: []derive.Field{{Name: "result"}}},
		{Name: "WorkerMessage::ReconcileOperation", Fields: []derive.Field{{Name: "request"}}},
		{Name: "WorkerMessage::ReconciledOperation", Fields: []derive.Field{{Name: "result"}}},
		{Name: "WorkerMessage::Cancel", Fields: []derive.Field{{Name: "request"}}},
		{Name: "WorkerMessage::CancellationResult", Fields: []derive.Field{{Name: "result"}}},
		{Name: "WorkerMessage::CloseSession", Fields: []derive.Field{{Name: "protocol_version"}, {Name: "session_id"}}},
	}

	frameStruct = derive.Struct{Name: "AuthenticatedWorkerMessage", Fields: []derive.Field{
		{Name: "sequence"}, {Name: "message"}, {Name: "auth_tag"},
	}}
)

func checkMode(mode canonjson.Mode) error {
	if mode != canonjson.Preserve && mode != canonjson.Lossy {
		return fmt.Errorf("protocol: %w: %d", canonjson.ErrUnknownMode, mode)
	}
	return nil
}

// parsers recycles the memory of syntax trees between decodes. No decoder keeps a node
// of the tree it decodes: the results hold strings and canonjson Values, which do not share
// memory with the tree.
var parsers = sync.Pool{New: func() any { return new(canonjson.Parser) }}

// parseDocument parses data with a pooled parser and turns a syntax error into a
// Serialization error. On success the caller must hand the parser back with
// releaseParser once it no longer uses the tree; the tree is invalid afterwards.
//
// With a valid mode (the decoding process's number model), payload contents, the values of
// "value" members, that are canonical in that mode are kept as their text (see
// canonjson.Parser.ParseDeferring): the payload's canonical bytes are then the received
// bytes, and its tree is built only if someone looks inside. mode 0 parses everything.
func parseDocument(data []byte, mode canonjson.Mode) (*canonjson.Node, *canonjson.Parser, error) {
	p := parsers.Get().(*canonjson.Parser)
	var n *canonjson.Node
	var err error
	if mode == 0 {
		n, err = p.Parse(data)
	} else {
		n, err = p.ParseDeferring(data, payloadEnum.Content, mode)
	}
	if err != nil {
		parsers.Put(p)
		return nil, nil, SerializationError(err)
	}
	return n, p, nil
}

func releaseParser(p *canonjson.Parser) { parsers.Put(p) }

// DecodeMessage decodes and validates one message as the reference's
// WorkerMessage::from_json_line does: input longer than MaxWireFrameBytes is
// WireFrameTooLarge (checked first), parse and shape errors are Serialization, and the
// decoded message must pass Validate. mode is the serde_json number model of the decoding
// process.
func DecodeMessage(data []byte, mode canonjson.Mode) (Message, error) {
	if err := checkMode(mode); err != nil {
		return nil, err
	}
	if len(data) > MaxWireFrameBytes {
		return nil, &Error{Kind: ErrWireFrameTooLarge, Actual: uint64(len(data)), Maximum: MaxWireFrameBytes}
	}
	n, p, err := parseDocument(data, mode)
	if err != nil {
		return nil, err
	}
	defer releaseParser(p)
	m, err := DecodeMessageNode(n, derive.Context{Mode: mode})
	if err != nil {
		return nil, SerializationError(err)
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return m, nil
}

// DecodeMessageNode applies the serde rules of WorkerMessage to a parsed tree without
// validating the result. Errors wrap derive.ErrDecode.
func DecodeMessageNode(n *canonjson.Node, c derive.Context) (Message, error) {
	v, body, bc, err := messageEnum.Split(n, c)
	if err != nil {
		return nil, err
	}
	if MessageTypes[v] == TypeCloseSession {
		var m CloseSessionMessage
		err := messageBodies[v].Decode(body, func(i int, f *canonjson.Node) (err error) {
			if i == 0 {
				m.ProtocolVersion, err = derive.U16(f, bc)
			} else {
				m.Session, err = derive.String(f)
			}
			return err
		})
		return m, err
	}
	var m Message
	err = messageBodies[v].Decode(body, func(_ int, f *canonjson.Node) error {
		var err error
		switch MessageTypes[v] {
		case TypeOpenSession:
			var x CapabilityManifest
			x, err = decodeManifest(f, bc)
			m = OpenSessionMessage{x}
		case TypeInvoke:
			var x ToolInvocation
			x, err = decodeInvocation(f, bc)
			m = InvokeMessage{x}
		case TypeResult:
			var x ToolResult
			x, err = decodeToolResult(f, bc)
			m = ResultMessage{x}
		case TypeDispatchOperation:
			var x OperationDispatchRequest
			x, err = decodeDispatch(f, bc)
			m = DispatchOperationMessage{x}
		case TypeOperationResult:
			var x OperationReconcileResult
			x, err = decodeReconcileResult(f, bc)
			m = OperationResultMessage{x}
		case TypeCompensateOperation:
			var x OperationCompensationRequest
			x, err = decodeCompensationRequest(f, bc)
			m = CompensateOperationMessage{x}
		case TypeCompensationResult:
			var x OperationCompensationResult
			x, err = decodeCompensationResult(f, bc)
			m = CompensationResultMessage{x}
		case TypeReconcileOperation:
			var x OperationReconcileRequest
			x, err = decodeReconcileRequest(f, bc)
			m = ReconcileOperationMessage{x}
		case TypeReconciledOperation:
			var x OperationReconcileResult
			x, err = decodeReconcileResult(f, bc)
			m = ReconciledOperationMessage{x}
		case TypeCancel:
			var x WorkerCancellationRequest
			x, err = decodeCancelRequest(f, bc)
			m = CancelMessage{x}
		case TypeCancellationResult:
			var x WorkerCancellationResult
			x, err = decodeCancelResult(f, bc)
			m = CancellationResultMessage{x}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// DecodeManifest decodes a standalone capability manifest with the serde rules (as
// serde_json::from_slice::<CapabilityManifest> would) without validating it. Errors are
// Serialization.
func DecodeManifest(data []byte) (CapabilityManifest, error) {
	return decodeStandalone(data, decodeManifest)
}

// DecodeCapabilityGrant decodes a standalone grant without validating it.
func DecodeCapabilityGrant(data []byte) (CapabilityGrant, error) {
	return decodeStandalone(data, decodeGrant)
}

// DecodeGrantAttenuation decodes a standalone grant attenuation.
func DecodeGrantAttenuation(data []byte) (GrantAttenuation, error) {
	return decodeStandalone(data, decodeGrantAttenuation)
}

// DecodeManifestAttenuation decodes a standalone manifest attenuation.
func DecodeManifestAttenuation(data []byte) (ManifestAttenuation, error) {
	return decodeStandalone(data, decodeManifestAttenuation)
}

// DecodeToolPayload decodes a standalone payload with the given number model, without
// validating it.
func DecodeToolPayload(data []byte, mode canonjson.Mode) (ToolPayload, error) {
	if err := checkMode(mode); err != nil {
		return ToolPayload{}, err
	}
	n, parser, err := parseDocument(data, mode)
	if err != nil {
		return ToolPayload{}, err
	}
	defer releaseParser(parser)
	p, err := DecodeToolPayloadNode(n, derive.Context{Mode: mode})
	return p, SerializationError(err)
}

func decodeStandalone[T any](data []byte, decode func(*canonjson.Node, derive.Context) (T, error)) (T, error) {
	n, p, err := parseDocument(data, 0)
	if err != nil {
		var zero T
		return zero, err
	}
	defer releaseParser(p)
	// These types hold no JSON values and are decoded directly (not buffered), so the number
	// mode cannot change the outcome.
	v, err := decode(n, derive.Context{Mode: canonjson.Preserve})
	return v, SerializationError(err)
}

func decodeResource(n *canonjson.Node, c derive.Context) (ResourceSelector, error) {
	var r ResourceSelector
	err := resourceSelectorStruct.Decode(n, func(i int, f *canonjson.Node) error {
		if i == 0 {
			k, err := derive.UnitEnum(f, c, resourceKindNames[:])
			r.Kind = ResourceKind(k)
			return err
		}
		var err error
		r.ID, err = derive.String(f)
		return err
	})
	return r, err
}

// decodeResources decodes a BTreeSet<ResourceSelector>: an array, deduplicated and sorted.
func decodeResources(n *canonjson.Node, c derive.Context) ([]ResourceSelector, error) {
	var rs []ResourceSelector
	err := derive.Seq(n, func(_ int, e *canonjson.Node) error {
		r, err := decodeResource(e, c)
		rs = append(rs, r)
		return err
	})
	if err != nil {
		return nil, err
	}
	return NormalizeResources(rs), nil
}

func decodeGrant(n *canonjson.Node, c derive.Context) (CapabilityGrant, error) {
	var g CapabilityGrant
	err := grantStruct.Decode(n, func(i int, f *canonjson.Node) error {
		var err error
		switch i {
		case 0:
			g.Tool, err = derive.String(f)
		case 1:
			var k int
			k, err = derive.UnitEnum(f, c, formatNames[:])
			g.Format = EnvelopeFormat(k)
		case 2:
			g.MaxCalls, err = derive.U32(f, c)
		case 3:
			g.MaxInputBytes, err = derive.U32(f, c)
		case 4:
			g.MaxOutputBytes, err = derive.U32(f, c)
		case 5:
			g.MaxCompensations, err = derive.U32(f, c)
		case 6:
			g.Resources, err = decodeResources(f, c)
		}
		return err
	})
	return g, err
}

func decodeManifest(n *canonjson.Node, c derive.Context) (CapabilityManifest, error) {
	var m CapabilityManifest
	err := manifestStruct.Decode(n, func(i int, f *canonjson.Node) error {
		var err error
		switch i {
		case 0:
			m.ProtocolVersion, err = derive.U16(f, c)
		case 1:
			m.SessionID, err = derive.String(f)
		case 2:
			m.Grants = nil
			err = derive.Seq(f, func(_ int, e *canonjson.Node) error {
				g, err := decodeGrant(e, c)
				m.Grants = append(m.Grants, g)
				return err
			})
		}
		return err
	})
	return m, err
}

func decodeOptU32(n *canonjson.Node, c derive.Context) (Opt[uint32], error) {
	if derive.IsNull(n) {
		return Opt[uint32]{}, nil
	}
	v, err := derive.U32(n, c)
	return Some(v), err
}

func decodeGrantAttenuation(n *canonjson.Node, c derive.Context) (GrantAttenuation, error) {
	var a GrantAttenuation
	err := grantAttenuationStruct.Decode(n, func(i int, f *canonjson.Node) error {
		var err error
		switch i {
		case 0:
			a.MaxCalls, err = decodeOptU32(f, c)
		case 1:
			a.MaxInputBytes, err = decodeOptU32(f, c)
		case 2:
			a.MaxOutputBytes, err = decodeOptU32(f, c)
		case 3:
			a.MaxCompensations, err = decodeOptU32(f, c)
		case 4:
			if derive.IsNull(f) {
				a.Resources = Opt[[]ResourceSelector]{}
				return nil
			}
			var rs []ResourceSelector
			rs, err = decodeResources(f, c)
			a.Resources = Some(rs)
		}
		return err
	})
	return a, err
}

func decodeManifestAttenuation(n *canonjson.Node, c derive.Context) (ManifestAttenuation, error) {
	var a ManifestAttenuation
	err := manifestAttenuationStruct.Decode(n, func(i int, f *canonjson.Node) error {
		if i == 0 {
			if derive.IsNull(f) {
				a.AllowedTools = Opt[[]string]{}
				return nil
			}
			tools := []string{}
			err := derive.Seq(f, func(_ int, e *canonjson.Node) error {
				s, err := derive.String(e)
				tools = append(tools, s)
				return err
			})
			a.AllowedTools = Some(normalizeStrings(tools))
			return err
		}
		grants := map[string]GrantAttenuation{}
		err := derive.Map(f, func(key string, v *canonjson.Node) error {
			g, err := decodeGrantAttenuation(v, c)
			grants[key] = g // a BTreeMap keeps the last of repeated keys
			return err
		})
		a.Grants = grants
		return err
	})
	return a, err
}

// DecodeToolPayloadNode applies the serde rules of the adjacently tagged ToolPayload to a
// parsed tree: {"format":...,"value":...} in either order, or ["text","..."]. A JSON value is
// built with the context's number model. The payload is not validated.
func DecodeToolPayloadNode(n *canonjson.Node, c derive.Context) (ToolPayload, error) {
	v, content, cc, err := payloadEnum.Split(n, c)
	if err != nil {
		return ToolPayload{}, err
	}
	p := ToolPayload{Format: EnvelopeFormat(v)}
	if p.Format == FormatText {
		p.Text, err = derive.String(content)
	} else {
		p.JSON, err = derive.Value(content, cc)
	}
	if err != nil {
		return ToolPayload{}, derive.AtField(err, payloadEnum.Content)
	}
	return p, nil
}

// DecodeOperationStatusNode applies the serde rules of the internally tagged OperationStatus
// (running, succeeded, failed, cancelled) to a parsed tree, without validating it.
func DecodeOperationStatusNode(n *canonjson.Node, c derive.Context) (OperationStatus, error) {
	return decodeTaggedStatus(&statusEnum, StateRunning, n, c)
}

// DecodeOperationStateNode applies the serde rules of the journal's WorkerOperationState,
// which adds pending to the statuses, without validating it.
func DecodeOperationStateNode(n *canonjson.Node, c derive.Context) (OperationStatus, error) {
	return decodeTaggedStatus(&stateEnum, StatePending, n, c)
}

func decodeTaggedStatus(e *derive.Tagged, first WorkerOperationStateKind, n *canonjson.Node, c derive.Context) (OperationStatus, error) {
	v, body, bc, err := e.Split(n, c)
	if err != nil {
		return OperationStatus{}, err
	}
	s := OperationStatus{State: first + WorkerOperationStateKind(v)}
	switch s.State {
	case StateSucceeded:
		err = succeededBody.Decode(body, func(_ int, f *canonjson.Node) error {
			var err error
			s.Payload, err = DecodeToolPayloadNode(f, bc)
			return err
		})
	case StateFailed:
		err = failedBody.Decode(body, func(_ int, f *canonjson.Node) error {
			var err error
			s.Message, err = derive.String(f)
			return err
		})
	default:
		err = derive.UnitBody(body)
	}
	if err != nil {
		return OperationStatus{}, err
	}
	return s, nil
}

func decodeInvocation(n *canonjson.Node, c derive.Context) (ToolInvocation, error) {
	var v ToolInvocation
	err := invocationStruct.Decode(n, func(i int, f *canonjson.Node) error {
		var err error
		switch i {
		case 0:
			v.ProtocolVersion, err = derive.U16(f, c)
		case 1:
			v.SessionID, err = derive.String(f)
		case 2:
			v.RequestID, err = derive.String(f)
		case 3:
			v.Tool, err = derive.String(f)
		case 4:
			v.Payload, err = DecodeToolPayloadNode(f, c)
		}
		return err
	})
	return v, err
}

func decodeToolResult(n *canonjson.Node, c derive.Context) (ToolResult, error) {
	var r ToolResult
	err := resultStruct.Decode(n, func(i int, f *canonjson.Node) error {
		var err error
		switch i {
		case 0:
			r.ProtocolVersion, err = derive.U16(f, c)
		case 1:
			r.SessionID, err = derive.String(f)
		case 2:
			r.RequestID, err = derive.String(f)
		case 3:
			r.Payload, err = DecodeToolPayloadNode(f, c)
		}
		return err
	})
	return r, err
}

func decodeCancelRequest(n *canonjson.Node, c derive.Context) (WorkerCancellationRequest, error) {
	var h cancellationHeader
	err := cancelRequestStruct.Decode(n, func(i int, f *canonjson.Node) error {
		return h.decodeField(i, f, c)
	})
	return WorkerCancellationRequest(h), err
}

func decodeCancelResult(n *canonjson.Node, c derive.Context) (WorkerCancellationResult, error) {
	var h cancellationHeader
	var outcome WorkerCancellationOutcome
	err := cancelResultStruct.Decode(n, func(i int, f *canonjson.Node) error {
		if i < cancellationHeaderFields {
			return h.decodeField(i, f, c)
		}
		k, err := derive.UnitEnum(f, c, outcomeNames[:])
		outcome = WorkerCancellationOutcome(k)
		return err
	})
	return WorkerCancellationResult{h.ProtocolVersion, h.SessionID, h.CancellationID, h.RequestID, h.Tool, outcome}, err
}

func decodeDispatch(n *canonjson.Node, c derive.Context) (OperationDispatchRequest, error) {
	var h operationHeader
	var payload ToolPayload
	err := dispatchStruct.Decode(n, func(i int, f *canonjson.Node) error {
		if i < operationHeaderFields {
			return h.decodeField(i, f, c)
		}
		var err error
		payload, err = DecodeToolPayloadNode(f, c)
		return err
	})
	return OperationDispatchRequest{h.ProtocolVersion, h.SessionID, h.RequestID, h.Tool, h.OperationKey, payload}, err
}

func decodeReconcileRequest(n *canonjson.Node, c derive.Context) (OperationReconcileRequest, error) {
	var h operationHeader
	err := reconcileRequestStruct.Decode(n, func(i int, f *canonjson.Node) error {
		return h.decodeField(i, f, c)
	})
	return OperationReconcileRequest(h), err
}

func decodeReconcileResult(n *canonjson.Node, c derive.Context) (OperationReconcileResult, error) {
	var h operationHeader
	var status OperationStatus
	err := reconcileResultStruct.Decode(n, func(i int, f *canonjson.Node) error {
		if i < operationHeaderFields {
			return h.decodeField(i, f, c)
		}
		var err error
		status, err = DecodeOperationStatusNode(f, c)
		return err
	})
	return OperationReconcileResult{h.ProtocolVersion, h.SessionID, h.RequestID, h.Tool, h.OperationKey, status}, err
}

func decodeCompensationRequest(n *canonjson.Node, c derive.Context) (OperationCompensationRequest, error) {
	var h compensationHeader
	var payload ToolPayload
	err := compensationRequestStruct.Decode(n, func(i int, f *canonjson.Node) error {
		if i < compensationHeaderFields {
			return h.decodeField(i, f, c)
		}
		var err error
		payload, err = DecodeToolPayloadNode(f, c)
		return err
	})
	return OperationCompensationRequest{h.ProtocolVersion, h.SessionID, h.RequestID, h.Tool, h.OperationKey,
		h.CompensationKey, h.TenantScope, h.GrantFingerprint, payload}, err
}

func decodeCompensationResult(n *canonjson.Node, c derive.Context) (OperationCompensationResult, error) {
	var h compensationHeader
	var status OperationStatus
	err := compensationResultStruct.Decode(n, func(i int, f *canonjson.Node) error {
		if i < compensationHeaderFields {
			return h.decodeField(i, f, c)
		}
		var err error
		status, err = DecodeOperationStatusNode(f, c)
		return err
	})
	return OperationCompensationResult{h.ProtocolVersion, h.SessionID, h.RequestID, h.Tool, h.OperationKey,
		h.CompensationKey, h.TenantScope, h.GrantFingerprint, status}, err
}

func normalizeStrings(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}
