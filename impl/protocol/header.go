package protocol

import (
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/derive"
)

// cancellationHeader holds all five fields, in declaration order, of a cancellation request;
// the cancellation result continues it with the outcome.
type cancellationHeader struct {
	ProtocolVersion uint16
	SessionID       string
	CancellationID  string
	RequestID       string
	Tool            string
}

// cancellationHeaderFields is the number of fields of a cancellationHeader.
const cancellationHeaderFields = 5

// decodeField decodes the i-th header field (0 <= i < cancellationHeaderFields) from f.
func (h *cancellationHeader) decodeField(i int, f *canonjson.Node, c derive.Context) error {
	var err error
	switch i {
	case 0:
		h.ProtocolVersion, err = derive.U16(f, c)
	case 1:
		h.SessionID, err = derive.String(f)
	case 2:
		h.CancellationID, err = derive.String(f)
	case 3:
		h.RequestID, err = derive.String(f)
	case 4:
		h.Tool, err = derive.String(f)
	}
	return err
}

// validate checks the version, the session, cancellation, request and tool tokens, then that
// the cancellation id differs from the request id (CancellationIdMatchesRequest).
func (h cancellationHeader) validate() error {
	if err := validateVersion(h.ProtocolVersion); err != nil {
		return err
	}
	if err := ValidateToken(FieldSessionID, h.SessionID); err != nil {
		return err
	}
	if err := ValidateToken(FieldCancellationID, h.CancellationID); err != nil {
		return err
	}
	if err := ValidateToken(FieldRequestID, h.RequestID); err != nil {
		return err
	}
	if err := ValidateToken(FieldTool, h.Tool); err != nil {
		return err
	}
	if h.CancellationID == h.RequestID {
		return &Error{Kind: ErrCancellationIdMatchesRequest}
	}
	return nil
}

// appendFields writes the header's members to w in declaration order.
func (h cancellationHeader) appendFields(w *jsonWriter) {
	w.uint("protocol_version", uint64(h.ProtocolVersion))
	w.str("session_id", h.SessionID)
	w.str("cancellation_id", h.CancellationID)
	w.str("request_id", h.RequestID)
	w.str("tool", h.Tool)
}

// operationHeader holds the five leading fields, in declaration order, of every durable
// operation type: dispatch and reconcile requests, reconcile results, and the compensation
// request and result (which continue it with a compensationHeader).
type operationHeader struct {
	ProtocolVersion uint16
	SessionID       string
	RequestID       string
	Tool            string
	OperationKey    string
}

// operationHeaderFields is the number of fields of an operationHeader.
const operationHeaderFields = 5

// decodeField decodes the i-th header field (0 <= i < operationHeaderFields) from f.
func (h *operationHeader) decodeField(i int, f *canonjson.Node, c derive.Context) error {
	var err error
	switch i {
	case 0:
		h.ProtocolVersion, err = derive.U16(f, c)
	case 1:
		h.SessionID, err = derive.String(f)
	case 2:
		h.RequestID, err = derive.String(f)
	case 3:
		h.Tool, err = derive.String(f)
	case 4:
		h.OperationKey, err = derive.String(f)
	}
	return err
}

// validate checks, in field order: the version, then the session, request, tool and
// operation key tokens.
func (h operationHeader) validate() error {
	if err := validateVersion(h.ProtocolVersion); err != nil {
		return err
	}
	if err := ValidateToken(FieldSessionID, h.SessionID); err != nil {
		return err
	}
	if err := ValidateToken(FieldRequestID, h.RequestID); err != nil {
		return err
	}
	if err := ValidateToken(FieldTool, h.Tool); err != nil {
		return err
	}
	return ValidateToken(FieldOperationKey, h.OperationKey)
}

// appendFields writes the header's members to w in declaration order.
func (h operationHeader) appendFields(w *jsonWriter) {
	w.uint("protocol_version", uint64(h.ProtocolVersion))
	w.str("session_id", h.SessionID)
	w.str("request_id", h.RequestID)
	w.str("tool", h.Tool)
	w.str("operation_key", h.OperationKey)
}

// compensationHeader holds the eight leading fields of the compensation request and result:
// the operation header, then the compensation key, tenant scope and grant fingerprint.
type compensationHeader struct {
	operationHeader
	CompensationKey  string
	TenantScope      string
	GrantFingerprint string
}

// compensationHeaderFields is the number of fields of a compensationHeader.
const compensationHeaderFields = operationHeaderFields + 3

// decodeField decodes the i-th header field (0 <= i < compensationHeaderFields) from f.
func (h *compensationHeader) decodeField(i int, f *canonjson.Node, c derive.Context) error {
	var err error
	switch i {
	case operationHeaderFields:
		h.CompensationKey, err = derive.String(f)
	case operationHeaderFields + 1:
		h.TenantScope, err = derive.String(f)
	case operationHeaderFields + 2:
		h.GrantFingerprint, err = derive.String(f)
	default:
		err = h.operationHeader.decodeField(i, f, c)
	}
	return err
}

// validate checks, in field order: the operation header, the compensation key (token, then
// "cmp-"), the tenant scope token and the grant fingerprint.
func (h compensationHeader) validate() error {
	if err := h.operationHeader.validate(); err != nil {
		return err
	}
	return validateCompensationTail(h.CompensationKey, h.TenantScope, h.GrantFingerprint)
}

// appendFields writes the header's members to w in declaration order.
func (h compensationHeader) appendFields(w *jsonWriter) {
	h.operationHeader.appendFields(w)
	w.str("compensation_key", h.CompensationKey)
	w.str("tenant_scope", h.TenantScope)
	w.str("grant_fingerprint", h.GrantFingerprint)
}

func (r WorkerCancellationRequest) header() cancellationHeader { return cancellationHeader(r) }

func (r WorkerCancellationResult) header() cancellationHeader {
	return cancellationHeader{r.ProtocolVersion, r.SessionID, r.CancellationID, r.RequestID, r.Tool}
}

func (r OperationDispatchRequest) header() operationHeader {
	return operationHeader{r.ProtocolVersion, r.SessionID, r.RequestID, r.Tool, r.OperationKey}
}

func (r OperationReconcileRequest) header() operationHeader { return operationHeader(r) }

func (r OperationReconcileResult) header() operationHeader {
	return operationHeader{r.ProtocolVersion, r.SessionID, r.RequestID, r.Tool, r.OperationKey}
}

func (r OperationCompensationRequest) header() compensationHeader {
	return compensationHeader{
		operationHeader{r.ProtocolVersion, r.SessionID, r.RequestID, r.Tool, r.OperationKey},
		r.CompensationKey, r.TenantScope, r.GrantFingerprint,
	}
}

func (r OperationCompensationResult) header() compensationHeader {
	return compensationHeader{
		operationHeader{r.ProtocolVersion, r.SessionID, r.RequestID, r.Tool, r.OperationKey},
		r.CompensationKey, r.TenantScope, r.GrantFingerprint,
	}
}
