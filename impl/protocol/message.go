package protocol

// Message is one worker protocol message (the reference's WorkerMessage). The twelve concrete
// types are value types: OpenSessionMessage, InvokeMessage, ResultMessage,
// DispatchOperationMessage, OperationResultMessage, CompensateOperationMessage,
// CompensationResultMessage, ReconcileOperationMessage, ReconciledOperationMessage,
// CancelMessage, CancellationResultMessage and CloseSessionMessage. No other type implements
// Message.
type Message interface {
	// Type returns the message's "type" tag.
	Type() MessageType
	// SessionID returns the session the message is scoped to (the manifest's session for
	// open_session).
	SessionID() string
	// Validate runs the checks the reference runs on decode and before sealing, in its order.
	Validate() error
	// AppendJSON appends the canonical JSON: {"type":...} first, then the variant's field.
	// It does not allocate when dst has room.
	AppendJSON(dst []byte) []byte

	isMessage()
}

func appendTagged(dst []byte, t MessageType, field string) []byte {
	dst = append(dst, `{"type":"`...)
	dst = append(dst, t...)
	dst = append(dst, `","`...)
	dst = append(dst, field...)
	return append(dst, '"', ':')
}

// OpenSessionMessage opens a session with its capability manifest (host to worker).
type OpenSessionMessage struct{ Manifest CapabilityManifest }

// InvokeMessage carries a tool invocation (host to worker).
type InvokeMessage struct{ Invocation ToolInvocation }

// ResultMessage carries a tool result (worker to host).
type ResultMessage struct{ Result ToolResult }

// DispatchOperationMessage carries a durable operation dispatch (host to worker).
type DispatchOperationMessage struct{ Request OperationDispatchRequest }

// OperationResultMessage reports a dispatched operation's status (worker to host).
type OperationResultMessage struct{ Result OperationReconcileResult }

// CompensateOperationMessage carries a compensation request (host to worker).
type CompensateOperationMessage struct{ Request OperationCompensationRequest }

// CompensationResultMessage reports a compensation's status (worker to host).
type CompensationResultMessage struct{ Result OperationCompensationResult }

// ReconcileOperationMessage asks for an operation's status (host to worker).
type ReconcileOperationMessage struct{ Request OperationReconcileRequest }

// ReconciledOperationMessage answers a reconcile request (worker to host).
type ReconciledOperationMessage struct{ Result OperationReconcileResult }

// CancelMessage carries a cancellation request (host to worker).
type CancelMessage struct{ Request WorkerCancellationRequest }

// CancellationResultMessage answers a cancellation request (worker to host).
type CancellationResultMessage struct{ Result WorkerCancellationResult }

// CloseSessionMessage closes a session. Its two fields are written inline, next to the tag,
// as "protocol_version" and "session_id".
type CloseSessionMessage struct {
	ProtocolVersion uint16
	// Session is the "session_id" field (named so to leave SessionID for the method).
	Session string
}

// Type returns TypeOpenSession.
func (OpenSessionMessage) Type() MessageType { return TypeOpenSession }

// Type returns TypeInvoke.
func (InvokeMessage) Type() MessageType { return TypeInvoke }

// Type returns TypeResult.
func (ResultMessage) Type() MessageType { return TypeResult }

// Type returns TypeDispatchOperation.
func (DispatchOperationMessage) Type() MessageType { return TypeDispatchOperation }

// Type returns TypeOperationResult.
func (OperationResultMessage) Type() MessageType { return TypeOperationResult }

// Type returns TypeCompensateOperation.
func (CompensateOperationMessage) Type() MessageType { return TypeCompensateOperation }

// Type returns TypeCompensationResult.
func (CompensationResultMessage) Type() MessageType { return TypeCompensationResult }

// Type returns TypeReconcileOperation.
func (ReconcileOperationMessage) Type() MessageType { return TypeReconcileOperation }

// Type returns TypeReconciledOperation.
func (ReconciledOperationMessage) Type() MessageType { return TypeReconciledOperation }

// Type returns TypeCancel.
func (CancelMessage) Type() MessageType { return TypeCancel }

// Type returns TypeCancellationResult.
func (CancellationResultMessage) Type() MessageType { return TypeCancellationResult }

// Type returns TypeCloseSession.
func (CloseSessionMessage) Type() MessageType { return TypeCloseSession }

// SessionID returns the manifest's session id.
func (m OpenSessionMessage) SessionID() string { return m.Manifest.SessionID }

// SessionID returns the invocation's session id.
func (m InvokeMessage) SessionID() string { return m.Invocation.SessionID }

// SessionID returns the result's session id.
func (m ResultMessage) SessionID() string { return m.Result.SessionID }

// SessionID returns the request's session id.
func (m DispatchOperationMessage) SessionID() string { return m.Request.SessionID }

// SessionID returns the result's session id.
func (m OperationResultMessage) SessionID() string { return m.Result.SessionID }

// SessionID returns the request's session id.
func (m CompensateOperationMessage) SessionID() string { return m.Request.SessionID }

// SessionID returns the result's session id.
func (m CompensationResultMessage) SessionID() string { return m.Result.SessionID }

// SessionID returns the request's session id.
func (m ReconcileOperationMessage) SessionID() string { return m.Request.SessionID }

// SessionID returns the result's session id.
func (m ReconciledOperationMessage) SessionID() string { return m.Result.SessionID }

// SessionID returns the request's session id.
func (m CancelMessage) SessionID() string { return m.Request.SessionID }

// SessionID returns the result's session id.
func (m CancellationResultMessage) SessionID() string { return m.Result.SessionID }

// SessionID returns the message's session id.
func (m CloseSessionMessage) SessionID() string { return m.Session }

// Validate validates the whole manifest.
func (m OpenSessionMessage) Validate() error { return m.Manifest.Validate() }

// Validate checks the invocation header only; the payload is checked by the authorizer.
func (m InvokeMessage) Validate() error { return m.Invocation.ValidateHeader() }

// Validate checks the result header only; the payload is checked by the authorizer.
func (m ResultMessage) Validate() error { return m.Result.ValidateHeader() }

// Validate checks the header and the payload's self-consistency.
func (m DispatchOperationMessage) Validate() error { return m.Request.Validate() }

// Validate checks the header and the status.
func (m OperationResultMessage) Validate() error { return m.Result.Validate() }

// Validate checks the header and the payload's self-consistency.
func (m CompensateOperationMessage) Validate() error { return m.Request.Validate() }

// Validate checks the header and the status.
func (m CompensationResultMessage) Validate() error { return m.Result.Validate() }

// Validate checks the header.
func (m ReconcileOperationMessage) Validate() error { return m.Request.Validate() }

// Validate checks the header and the status.
func (m ReconciledOperationMessage) Validate() error { return m.Result.Validate() }

// Validate checks the header and that the cancellation id differs from the target id.
func (m CancelMessage) Validate() error { return m.Request.Validate() }

// Validate checks the header and that the cancellation id differs from the target id.
func (m CancellationResultMessage) Validate() error { return m.Result.Validate() }

// Validate checks the version and the session token.
func (m CloseSessionMessage) Validate() error {
	if err := validateVersion(m.ProtocolVersion); err != nil {
		return err
	}
	return ValidateToken(FieldSessionID, m.Session)
}

// AppendJSON appends {"type":"open_session","manifest":...}.
func (m OpenSessionMessage) AppendJSON(dst []byte) []byte {
	return append(m.Manifest.AppendJSON(appendTagged(dst, TypeOpenSession, "manifest")), '}')
}

// AppendJSON appends {"type":"invoke","invocation":...}.
func (m InvokeMessage) AppendJSON(dst []byte) []byte {
	return append(m.Invocation.AppendJSON(appendTagged(dst, TypeInvoke, "invocation")), '}')
}

// AppendJSON appends {"type":"result","result":...}.
func (m ResultMessage) AppendJSON(dst []byte) []byte {
	return append(m.Result.AppendJSON(appendTagged(dst, TypeResult, "result")), '}')
}

// AppendJSON appends {"type":"dispatch_operation","request":...}.
func (m DispatchOperationMessage) AppendJSON(dst []byte) []byte {
	return append(m.Request.AppendJSON(appendTagged(dst, TypeDispatchOperation, "request")), '}')
}

// AppendJSON appends {"type":"operation_result","result":...}.
func (m OperationResultMessage) AppendJSON(dst []byte) []byte {
	return append(m.Result.AppendJSON(appendTagged(dst, TypeOperationResult, "result")), '}')
}

// AppendJSON appends {"type":"compensate_operation","request":...}.
func (m CompensateOperationMessage) AppendJSON(dst []byte) []byte {
	return append(m.Request.AppendJSON(appendTagged(dst, TypeCompensateOperation, "request")), '}')
}

// AppendJSON appends {"type":"compensation_result","result":...}.
func (m CompensationResultMessage) AppendJSON(dst []byte) []byte {
	return append(m.Result.AppendJSON(appendTagged(dst, TypeCompensationResult, "result")), '}')
}

// AppendJSON appends {"type":"reconcile_operation","request":...}.
func (m ReconcileOperationMessage) AppendJSON(dst []byte) []byte {
	return append(m.Request.AppendJSON(appendTagged(dst, TypeReconcileOperation, "request")), '}')
}

// AppendJSON appends {"type":"reconciled_operation","result":...}.
func (m ReconciledOperationMessage) AppendJSON(dst []byte) []byte {
	return append(m.Result.AppendJSON(appendTagged(dst, TypeReconciledOperation, "result")), '}')
}

// AppendJSON appends {"type":"cancel","request":...}.
func (m CancelMessage) AppendJSON(dst []byte) []byte {
	return append(m.Request.AppendJSON(appendTagged(dst, TypeCancel, "request")), '}')
}

// AppendJSON appends {"type":"cancellation_result","result":...}.
func (m CancellationResultMessage) AppendJSON(dst []byte) []byte {
	return append(m.Result.AppendJSON(appendTagged(dst, TypeCancellationResult, "result")), '}')
}

// AppendJSON appends {"type":"close_session","protocol_version":...,"session_id":...}.
func (m CloseSessionMessage) AppendJSON(dst []byte) []byte {
	w := jsonWriter{b: append(dst, '{')}
	w.str("type", string(TypeCloseSession))
	w.uint("protocol_version", uint64(m.ProtocolVersion))
	w.str("session_id", m.Session)
	return w.close()
}

func (OpenSessionMessage) isMessage()         {}
func (InvokeMessage) isMessage()              {}
func (ResultMessage) isMessage()              {}
func (DispatchOperationMessage) isMessage()   {}
func (OperationResultMessage) isMessage()     {}
func (CompensateOperationMessage) isMessage() {}
func (CompensationResultMessage) isMessage()  {}
func (ReconcileOperationMessage) isMessage()  {}
func (ReconciledOperationMessage) isMessage() {}
func (CancelMessage) isMessage()              {}
func (CancellationResultMessage) isMessage()  {}
func (CloseSessionMessage) isMessage()        {}

// EncodeMessage validates m and returns its canonical JSON, which must fit MaxWireFrameBytes
// (WireFrameTooLarge otherwise). This is the reference's WorkerMessage::to_json_line.
func EncodeMessage(m Message) ([]byte, error) {
	if m == nil {
		return nil, &Error{Kind: ErrSerialization, Message: "cannot serialize a nil message"}
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	b := m.AppendJSON(nil)
	if len(b) > MaxWireFrameBytes {
		return nil, &Error{Kind: ErrWireFrameTooLarge, Actual: uint64(len(b)), Maximum: MaxWireFrameBytes}
	}
	return b, nil
}
