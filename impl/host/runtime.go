package host

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"io"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/schema"
	"lukechampine.com/blake3"
)

// OperationID is the opaque host-side identity of one deferred operation (the reference's
// ExternalToolId). IDs are issued from 1 upward, one per Start attempt that passes the pending
// budget, and are never reused. A script's promise for the operation carries the same value.
type OperationID uint64

// String returns the decimal ID.
func (id OperationID) String() string { return strconv.FormatUint(uint64(id), 10) }

// Config configures a Runtime. The zero value gives the reference defaults, the system clock and
// operating-system entropy.
type Config struct {
	// MaxPendingTools bounds the retained operation records (0 = 64).
	MaxPendingTools int
	// MaxTools bounds the catalog's tool count (0 = 128).
	MaxTools int
	// MaxCatalogBytes bounds the catalog's serialized size (0 = 512 KiB).
	MaxCatalogBytes int
	// Clock reads the time for deferred deadlines (nil = time.Now). Only differences between
	// readings matter.
	Clock func() time.Time
	// Entropy is read once for a 32-byte session nonce when SessionNonce is nil
	// (nil = crypto/rand.Reader). When it fails, external tools cannot be registered.
	Entropy io.Reader
	// SessionNonce replaces the entropy nonce with a host-supplied one.
	SessionNonce *SessionNonce
	// SessionID pins the runtime session number S used in key derivations; 0 takes the next
	// value of the process-wide counter, as the reference does. Pin it only for reproducible
	// tests and vectors.
	SessionID uint64
}

// ToolRequest is what a host-pump handler receives.
type ToolRequest struct {
	Name      string
	Input     string
	CallIndex int // 1-based reservation index of the tool
	// Deadline is the time left of the operation's deferred deadline when the handler starts;
	// 0 when the call has none (a synchronous call, or a policy without a deadline). A handler
	// that waits on a worker passes it on (RUN-200).
	Deadline time.Duration
}

// JSONToolRequest is what a JSON host-pump handler receives: the input parsed in the
// text-preserving number model.
type JSONToolRequest struct {
	Name      string
	Input     canonjson.Value
	CallIndex int
	// Deadline is ToolRequest.Deadline.
	Deadline time.Duration
}

// TextHandler runs a host-pump tool. Return a *ToolError to choose the failure kind and message;
// any other error becomes Failed "<name> handler failed" (its text stays with the host).
type TextHandler func(req ToolRequest) (string, error)

// JSONHandler runs a host-pump JSON tool; its output is written as compact JSON with sorted keys.
type JSONHandler func(req JSONToolRequest) (canonjson.Value, error)

// StreamRedactor maps raw worker chunk text to the only text released to the host.
type StreamRedactor func(chunk string) string

type tool struct {
	policy           Policy
	meta             Metadata
	dispatch         Dispatch
	contractEnforced bool
	calls            int
	inputSchema      *schema.Schema
	outputSchema     *schema.Schema
	handler          func(ToolRequest) (string, *ToolError)
	redactor         StreamRedactor
	descriptorBytes  int
}

func (t *tool) descriptor() Descriptor {
	d := Descriptor{
		Name:              t.policy.Name,
		Format:            t.policy.Format,
		Dispatch:          t.dispatch,
		ContractEnforced:  t.contractEnforced,
		MaxCalls:          t.policy.MaxCalls,
		MaxAttempts:       t.policy.MaxAttempts,
		MaxInputBytes:     t.policy.MaxInputBytes,
		MaxOutputBytes:    t.policy.MaxOutputBytes,
		HasDeadline:       t.policy.HasDeadline,
		MaxDeferredMillis: durationMillis(t.policy.MaxDeferred),
		Metadata:          t.meta,
	}
	if t.policy.Stream != nil {
		s := *t.policy.Stream
		d.Stream = &s
	}
	return d
}

// Runtime is the host capability runtime: the tool catalog, the reservation budgets, the
// pending operation records and the audit ring. It is not safe for concurrent use; one event
// loop owns it.
type Runtime struct {
	session      uint64
	nonceHex     string
	clock        func() time.Time
	maxPending   int
	maxTools     int
	maxCatalog   int
	tools        map[string]*tool
	catalogBytes int // sum of descriptor lengths
	lease        *Lease
	audit        auditRing
	nextSequence uint64
	nextID       uint64
	records      map[OperationID]*record
	order        []OperationID // ascending: the scan order of peek, claim, pump and expiry
}

// New returns a runtime configured by cfg.
func New(cfg Config) (*Runtime, error) {
	r := &Runtime{
		maxPending: cfg.MaxPendingTools,
		maxTools:   cfg.MaxTools,
		maxCatalog: cfg.MaxCatalogBytes,
		clock:      cfg.Clock,
		tools:      map[string]*tool{},
		audit:      newAuditRing(),
		records:    map[OperationID]*record{},
	}
	switch {
	case r.maxPending < 0:
		return nil, invalidLimits("max_pending_tools must be greater than zero")
	case r.maxTools < 0:
		return nil, invalidLimits("max_catalog_tools must be greater than zero")
	case r.maxCatalog < 0:
		return nil, invalidLimits("max_catalog_serialized_bytes must be greater than zero")
	}
	if r.maxPending == 0 {
		r.maxPending = DefaultMaxPendingTools
	}
	if r.maxTools == 0 {
		r.maxTools = DefaultMaxRegisteredTools
	}
	if r.maxCatalog == 0 {
		r.maxCatalog = DefaultMaxCatalogBytes
	}
	if r.clock == nil {
		r.clock = time.Now
	}
	r.session = cfg.SessionID
	if r.session == 0 {
		r.session = nextRuntimeSession.Add(1)
	}
	if cfg.SessionNonce != nil {
		if len(cfg.SessionNonce.b) == 0 {
			return nil, invalidLimits("session nonce was not created with NewSessionNonce")
		}
		r.nonceHex = sessionNonceHex(r.session, *cfg.SessionNonce)
	} else {
		src := cfg.Entropy
		if src == nil {
			src = rand.Reader
		}
		if n, ok := nonceFromEntropy(src); ok {
			r.nonceHex = sessionNonceHex(r.session, n)
		}
	}
	return r, nil
}

// SessionID returns the runtime session number S.
func (r *Runtime) SessionID() uint64 { return r.session }

// HasSessionNonce reports whether a session nonce exists, i.e. whether external tools can be
// registered.
func (r *Runtime) HasSessionNonce() bool { return r.nonceHex != "" }

// MaxPendingTools returns the pending-record bound.
func (r *Runtime) MaxPendingTools() int { return r.maxPending }

// PendingTools returns the number of retained operation records, settled ones included, until
// CollectGarbage removes them.
func (r *Runtime) PendingTools() int { return len(r.records) }

// RegisterTool registers a host-pump tool of either format whose handler receives the raw input
// text.
func (r *Runtime) RegisterTool(policy Policy, meta Metadata, handler TextHandler) error {
	if handler == nil {
		return &RegistrationError{Kind: ErrInvalidPolicy, Message: "a host-pump tool needs a handler"}
	}
	name := policy.Name
	return r.register(policy, meta, nil, nil, DispatchHostPump, func(req ToolRequest) (string, *ToolError) {
		out, err := handler(req)
		if err != nil {
			return "", asToolError(name, err)
		}
		return out, nil
	})
}

// RegisterJSONTool registers a host-pump JSON tool; the policy must be JSON. Schemas in meta are
// published but not enforced.
func (r *Runtime) RegisterJSONTool(policy Policy, meta Metadata, handler JSONHandler) error {
	return r.registerJSON(policy, meta, nil, handler)
}

// RegisterValidatedJSONTool registers a host-pump JSON tool whose input and output are checked
// against contract; the contract's schemas replace any in meta.
func (r *Runtime) RegisterValidatedJSONTool(policy Policy, meta Metadata, contract schema.Contract, handler JSONHandler) error {
	return r.registerJSON(policy, meta, &contract, handler)
}

func (r *Runtime) registerJSON(policy Policy, meta Metadata, contract *schema.Contract, handler JSONHandler) error {
	if policy.Format != FormatJSON {
		return &RegistrationError{Kind: ErrInvalidPolicy, Message: "a JSON tool requires a JSON policy"}
	}
	if handler == nil {
		return &RegistrationError{Kind: ErrInvalidPolicy, Message: "a host-pump tool needs a handler"}
	}
	in, out, meta := applyContract(meta, contract)
	return r.register(policy, meta, in, out, DispatchHostPump, jsonHandler(policy.Name, handler))
}

func jsonHandler(name string, handler JSONHandler) func(ToolRequest) (string, *ToolError) {
	return func(req ToolRequest) (string, *ToolError) {
		input, err := canonjson.ParseValue([]byte(req.Input), canonjson.Preserve)
		if err != nil {
			return "", Failed(name + " JSON input failed host validation: " + err.Error())
		}
		out, err := handler(JSONToolRequest{Name: req.Name, Input: input, CallIndex: req.CallIndex, Deadline: req.Deadline})
		if err != nil {
			return "", asToolError(name, err)
		}
		return string(out.JSON()), nil
	}
}

func applyContract(meta Metadata, contract *schema.Contract) (*schema.Schema, *schema.Schema, Metadata) {
	if contract == nil || contract.Input() == nil || contract.Output() == nil {
		return nil, nil, meta
	}
	in, out := contract.InputSchema(), contract.OutputSchema()
	meta.InputSchema, meta.OutputSchema = &in, &out
	return contract.Input(), contract.Output(), meta
}

// RegisterExternalTool registers an external tool of either format.
func (r *Runtime) RegisterExternalTool(policy Policy, meta Metadata) error {
	return r.register(policy, meta, nil, nil, DispatchExternal, nil)
}

// RegisterExternalJSONTool registers an external JSON tool; the policy must be JSON.
func (r *Runtime) RegisterExternalJSONTool(policy Policy, meta Metadata) error {
	if policy.Format != FormatJSON {
		return &RegistrationError{Kind: ErrInvalidPolicy, Message: "an external JSON tool requires a JSON policy"}
	}
	return r.register(policy, meta, nil, nil, DispatchExternal, nil)
}

// RegisterValidatedExternalJSONTool registers an external JSON tool whose input and terminal
// output are checked against contract.
func (r *Runtime) RegisterValidatedExternalJSONTool(policy Policy, meta Metadata, contract schema.Contract) error {
	if policy.Format != FormatJSON {
		return &RegistrationError{Kind: ErrInvalidPolicy, Message: "an external JSON tool requires a JSON policy"}
	}
	in, out, meta := applyContract(meta, &contract)
	return r.register(policy, meta, in, out, DispatchExternal, nil)
}

// register runs the registration checks in the reference's order; nothing is retained on failure.
func (r *Runtime) register(policy Policy, meta Metadata, in, out *schema.Schema, dispatch Dispatch, handler func(ToolRequest) (string, *ToolError)) error {
	if r.lease != nil {
		return &RegistrationError{Kind: ErrActiveCapabilityLease}
	}
	if dispatch != DispatchExternal && policy.Stream != nil {
		return &RegistrationError{Kind: ErrInvalidPolicy, Message: "stream policy requires an external tool"}
	}
	if err := policy.validate(); err != nil {
		return err
	}
	if err := meta.validateFor(policy.Format); err != nil {
		return err
	}
	if dispatch == DispatchExternal && r.nonceHex == "" {
		return &RegistrationError{Kind: ErrNonceUnavailable}
	}
	if _, dup := r.tools[policy.Name]; dup {
		return &RegistrationError{Kind: ErrDuplicateTool, Name: policy.Name}
	}
	if policy.Stream != nil {
		s := *policy.Stream
		policy.Stream = &s
	}
	t := &tool{
		policy:           policy,
		meta:             meta,
		dispatch:         dispatch,
		contractEnforced: in != nil && out != nil,
		inputSchema:      in,
		outputSchema:     out,
		handler:          handler,
	}
	if len(r.tools) >= r.maxTools {
		return &RegistrationError{Kind: ErrCatalogToolLimitExceeded, Maximum: r.maxTools}
	}
	t.descriptorBytes = len(t.descriptor().AppendJSON(nil))
	// "[" + descriptors joined by "," + "]" with the candidate appended.
	actual := r.catalogBytes + t.descriptorBytes + 2 + len(r.tools)
	if actual > r.maxCatalog {
		return &RegistrationError{Kind: ErrCatalogByteLimitExceeded, Actual: actual, Maximum: r.maxCatalog}
	}
	r.tools[policy.Name] = t
	r.catalogBytes += t.descriptorBytes
	return nil
}

// SetExternalStreamRedactor installs the trusted redactor of a streaming external tool. It may
// be replaced until the tool's first reservation and is frozen afterwards.
func (r *Runtime) SetExternalStreamRedactor(name string, redactor StreamRedactor) error {
	t, ok := r.tools[name]
	switch {
	case !ok:
		return &StreamConfigError{Kind: ErrStreamUnknownTool, Name: name}
	case t.dispatch != DispatchExternal:
		return &StreamConfigError{Kind: ErrStreamNotExternal, Name: name}
	case t.policy.Stream == nil:
		return &StreamConfigError{Kind: ErrStreamDisabled, Name: name}
	case t.calls != 0:
		return &StreamConfigError{Kind: ErrStreamAlreadyReserved, Name: name}
	}
	t.redactor = redactor
	return nil
}

func (r *Runtime) sortedTools() []*tool {
	names := make([]string, 0, len(r.tools))
	for n := range r.tools {
		names = append(names, n)
	}
	slices.Sort(names)
	out := make([]*tool, len(names))
	for i, n := range names {
		out[i] = r.tools[n]
	}
	return out
}

// Catalog returns the descriptors of every registered tool in name order.
func (r *Runtime) Catalog() []Descriptor {
	ts := r.sortedTools()
	out := make([]Descriptor, len(ts))
	for i, t := range ts {
		out[i] = t.descriptor()
	}
	return out
}

// Descriptor returns one tool's descriptor.
func (r *Runtime) Descriptor(name string) (Descriptor, bool) {
	t, ok := r.tools[name]
	if !ok {
		return Descriptor{}, false
	}
	return t.descriptor(), true
}

// CatalogJSON returns the catalog as a JSON array of descriptors in name order. It is host-only.
func (r *Runtime) CatalogJSON() []byte {
	b := make([]byte, 0, r.catalogBytes+2+len(r.tools))
	b = append(b, '[')
	for i, t := range r.sortedTools() {
		if i > 0 {
			b = append(b, ',')
		}
		b = t.descriptor().AppendJSON(b)
	}
	return append(b, ']')
}

// CatalogFingerprint returns hex(BLAKE3("splash-capability-catalog-v1" || u64be(len(C)) || C))
// where C is CatalogJSON.
func (r *Runtime) CatalogFingerprint() string {
	c := r.CatalogJSON()
	b := make([]byte, 0, len(c)+40)
	b = append(b, "splash-capability-catalog-v1"...)
	b = binary.BigEndian.AppendUint64(b, uint64(len(c)))
	b = append(b, c...)
	sum := blake3.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Audit returns a copy of the retained audit events, oldest first.
func (r *Runtime) Audit() []AuditEvent { return r.audit.events(0) }

// AuditSince exports the retained events from cursor on. Start with 1 and keep the returned
// Next only after a sink accepted the batch; a cursor overtaken by eviction or ClearAudit fails
// instead of returning a partial history.
func (r *Runtime) AuditSince(cursor uint64) (AuditBatch, error) { return r.audit.since(cursor) }

// MaxAuditEvents returns the audit ring capacity.
func (r *Runtime) MaxAuditEvents() int { return r.audit.max }

// SetMaxAuditEvents changes the ring capacity (1 to MaxAuditEvents); shrinking evicts at once.
func (r *Runtime) SetMaxAuditEvents(n int) error { return r.audit.setMax(n) }

// DroppedAuditEvents returns the number of events evicted (or dropped at the sequence limit)
// since the last ClearAudit, saturating.
func (r *Runtime) DroppedAuditEvents() uint64 { return r.audit.dropped }

// ClearAudit empties the ring, resets the dropped counter and moves the first cursor to the next
// sequence.
func (r *Runtime) ClearAudit() { r.audit.clear() }

func (r *Runtime) recordAudit(sequence uint64, name string, in, out int, outcome AuditOutcome, class RetryClass) {
	r.audit.record(AuditEvent{
		Sequence:    sequence,
		Tool:        r.auditLabel(name),
		InputBytes:  in,
		OutputBytes: out,
		Outcome:     outcome,
		RetryClass:  class,
	})
}

func (r *Runtime) takeSequence() uint64 {
	q := r.nextSequence
	if r.nextSequence != math.MaxUint64 {
		r.nextSequence++
	}
	return q
}
