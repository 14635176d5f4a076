package host

import (
	"strconv"
	"time"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
)

// Limits and defaults of the capability runtime (the reference's constants).
const (
	DefaultMaxPendingTools    = 64
	DefaultMaxRegisteredTools = 128
	DefaultMaxCatalogBytes    = 512 * 1024
	MaxToolNameBytes          = 128
	MaxToolDescriptionBytes   = 4 * 1024
	MaxToolSchemaBytes        = 32 * 1024
	DefaultMaxAuditEvents     = 1024
	MaxAuditEvents            = 8192

	DefaultMaxStreamChunks       = 64
	DefaultMaxStreamChunkBytes   = 8 * 1024
	DefaultMaxStreamTotalBytes   = 64 * 1024
	DefaultMaxStreamEmittedBytes = 64 * 1024

	DefaultMaxCalls       = 1
	DefaultMaxAttempts    = 1
	DefaultMaxInputBytes  = 16 * 1024
	DefaultMaxOutputBytes = 64 * 1024
)

// DataFormat is the envelope a tool accepts and returns.
type DataFormat uint8

// The two data formats.
const (
	// FormatText passes UTF-8 text through unchanged.
	FormatText DataFormat = iota + 1
	// FormatJSON requires a JSON object or array on input and output.
	FormatJSON
)

// String returns "text" or "json".
func (f DataFormat) String() string {
	switch f {
	case FormatText:
		return "text"
	case FormatJSON:
		return "json"
	}
	return "DataFormat(" + strconv.Itoa(int(f)) + ")"
}

func (f DataFormat) envelope() protocol.EnvelopeFormat {
	if f == FormatJSON {
		return protocol.FormatJSON
	}
	return protocol.FormatText
}

// Dispatch says where a tool's work runs.
type Dispatch uint8

// The two dispatch modes.
const (
	// DispatchHostPump runs the registered handler in the runtime (synchronously, or in Pump for
	// a deferred start).
	DispatchHostPump Dispatch = iota + 1
	// DispatchExternal has no handler: the host claims and completes each operation.
	DispatchExternal
)

// String returns "host_pump" or "external".
func (d Dispatch) String() string {
	switch d {
	case DispatchHostPump:
		return "host_pump"
	case DispatchExternal:
		return "external"
	}
	return "Dispatch(" + strconv.Itoa(int(d)) + ")"
}

// RetryClass is the host's classification of a retryable failure. It is recorded on the audit
// event only.
type RetryClass uint8

// The retry classes.
const (
	// RetryTransient is a temporary transport or service failure.
	RetryTransient RetryClass = iota + 1
	// RetryRateLimited is a downstream request to back off.
	RetryRateLimited
)

// String returns "transient" or "rate_limited".
func (c RetryClass) String() string {
	switch c {
	case RetryTransient:
		return "transient"
	case RetryRateLimited:
		return "rate_limited"
	}
	return "RetryClass(" + strconv.Itoa(int(c)) + ")"
}

// StreamPolicy bounds the host-visible chunks of one external operation, across all its attempts.
type StreamPolicy struct {
	MaxChunks       int // accepted chunks
	MaxChunkBytes   int // source bytes of one chunk
	MaxTotalBytes   int // aggregate source bytes
	MaxEmittedBytes int // aggregate bytes after redaction
}

// DefaultStreamPolicy returns 64 chunks, 8 KiB per chunk, 64 KiB of source and 64 KiB emitted.
func DefaultStreamPolicy() StreamPolicy {
	return StreamPolicy{
		MaxChunks:       DefaultMaxStreamChunks,
		MaxChunkBytes:   DefaultMaxStreamChunkBytes,
		MaxTotalBytes:   DefaultMaxStreamTotalBytes,
		MaxEmittedBytes: DefaultMaxStreamEmittedBytes,
	}
}

func (s StreamPolicy) validate() *RegistrationError {
	if s.MaxChunks <= 0 || s.MaxChunkBytes <= 0 || s.MaxTotalBytes <= 0 || s.MaxEmittedBytes <= 0 {
		return &RegistrationError{Kind: ErrInvalidPolicy, Message: "stream limits must be greater than zero"}
	}
	if s.MaxChunkBytes > s.MaxTotalBytes {
		return &RegistrationError{Kind: ErrInvalidPolicy, Message: "max stream chunk bytes cannot exceed the total stream byte limit"}
	}
	return nil
}

func (s StreamPolicy) appendJSON(b []byte) []byte {
	b = append(b, `{"max_chunks":`...)
	b = strconv.AppendInt(b, int64(s.MaxChunks), 10)
	b = append(b, `,"max_chunk_bytes":`...)
	b = strconv.AppendInt(b, int64(s.MaxChunkBytes), 10)
	b = append(b, `,"max_total_bytes":`...)
	b = strconv.AppendInt(b, int64(s.MaxTotalBytes), 10)
	b = append(b, `,"max_emitted_bytes":`...)
	b = strconv.AppendInt(b, int64(s.MaxEmittedBytes), 10)
	return append(b, '}')
}

// Policy is the registered policy of one tool.
type Policy struct {
	Name           string
	Format         DataFormat
	MaxCalls       int    // reservations the tool accepts over the runtime's life
	MaxAttempts    uint32 // external dispatch attempts per operation (1 = no retry)
	MaxInputBytes  int
	MaxOutputBytes int
	// HasDeadline enables MaxDeferred: the lifetime of one deferred operation, measured from
	// its reservation. A zero MaxDeferred expires immediately.
	HasDeadline bool
	MaxDeferred time.Duration
	// Stream enables host-visible output chunks (external tools only).
	Stream *StreamPolicy
}

// NewPolicy returns the default text policy: one call, one attempt, 16 KiB input, 64 KiB output,
// no deadline, no stream.
func NewPolicy(name string) Policy {
	return Policy{
		Name:           name,
		Format:         FormatText,
		MaxCalls:       DefaultMaxCalls,
		MaxAttempts:    DefaultMaxAttempts,
		MaxInputBytes:  DefaultMaxInputBytes,
		MaxOutputBytes: DefaultMaxOutputBytes,
	}
}

// JSONPolicy returns NewPolicy with the JSON format.
func JSONPolicy(name string) Policy {
	p := NewPolicy(name)
	p.Format = FormatJSON
	return p
}

// WithDeadline returns p with a deferred deadline of d.
func (p Policy) WithDeadline(d time.Duration) Policy {
	p.HasDeadline, p.MaxDeferred = true, d
	return p
}

// WithStream returns p with stream policy s.
func (p Policy) WithStream(s StreamPolicy) Policy {
	p.Stream = &s
	return p
}

// isToolName applies the token rule to a tool name.
func isToolName(name string) bool { return protocol.IsToken(name) }

func (p Policy) validate() *RegistrationError {
	if !isToolName(p.Name) {
		return &RegistrationError{Kind: ErrInvalidName, Name: p.Name}
	}
	if p.Format != FormatText && p.Format != FormatJSON {
		return &RegistrationError{Kind: ErrInvalidPolicy, Message: "tool data format must be text or json"}
	}
	if p.MaxCalls <= 0 {
		return &RegistrationError{Kind: ErrInvalidPolicy, Message: "max_calls must be greater than zero"}
	}
	if p.MaxAttempts == 0 {
		return &RegistrationError{Kind: ErrInvalidPolicy, Message: "max_attempts must be greater than zero"}
	}
	if p.MaxInputBytes <= 0 || p.MaxOutputBytes <= 0 {
		return &RegistrationError{Kind: ErrInvalidPolicy, Message: "tool byte limits must be greater than zero"}
	}
	if p.HasDeadline && p.MaxDeferred < 0 {
		return &RegistrationError{Kind: ErrInvalidPolicy, Message: "max_deferred_duration must not be negative"}
	}
	if p.Stream != nil {
		if err := p.Stream.validate(); err != nil {
			return err
		}
	}
	return nil
}

// Metadata is host-only descriptive data published in the tool catalog. It grants nothing and
// is never visible to scripts. Schemas are allowed on JSON tools only and are prompt
// information unless the tool was registered with a schema.Contract.
type Metadata struct {
	Description  string
	InputSchema  *canonjson.Value
	OutputSchema *canonjson.Value
}

func (m Metadata) validateFor(format DataFormat) *RegistrationError {
	if len(m.Description) > MaxToolDescriptionBytes {
		return &RegistrationError{Kind: ErrInvalidMetadata, Message: "tool description exceeds the byte limit"}
	}
	if format != FormatJSON && (m.InputSchema != nil || m.OutputSchema != nil) {
		return &RegistrationError{Kind: ErrInvalidMetadata, Message: "schemas require a JSON tool policy"}
	}
	for _, s := range []*canonjson.Value{m.InputSchema, m.OutputSchema} {
		if s == nil {
			continue
		}
		if s.Kind() != canonjson.KindObject {
			return &RegistrationError{Kind: ErrInvalidMetadata, Message: "tool schemas must be JSON objects"}
		}
		if len(s.JSON()) > MaxToolSchemaBytes {
			return &RegistrationError{Kind: ErrInvalidMetadata, Message: "tool schema exceeds the byte limit"}
		}
	}
	return nil
}

// Descriptor is the host-facing description of one registered tool.
type Descriptor struct {
	Name              string
	Format            DataFormat
	Dispatch          Dispatch
	ContractEnforced  bool
	MaxCalls          int
	MaxAttempts       uint32
	MaxInputBytes     int
	MaxOutputBytes    int
	HasDeadline       bool
	MaxDeferredMillis uint64
	Stream            *StreamPolicy
	Metadata          Metadata
}

// durationMillis truncates a duration to whole milliseconds, as Duration::as_millis does.
func durationMillis(d time.Duration) uint64 {
	if d <= 0 {
		return 0
	}
	return uint64(d / time.Millisecond)
}

// AppendJSON appends the descriptor's catalog JSON: name, format, dispatch, contract_enforced,
// max_calls, max_attempts, max_input_bytes, max_output_bytes, then max_deferred_millis and
// stream when set, then description and the schemas when set.
func (d Descriptor) AppendJSON(b []byte) []byte {
	b = append(b, `{"name":`...)
	b = canonjson.AppendString(b, d.Name)
	b = append(b, `,"format":"`...)
	b = append(b, d.Format.String()...)
	b = append(b, `","dispatch":"`...)
	b = append(b, d.Dispatch.String()...)
	b = append(b, `","contract_enforced":`...)
	b = strconv.AppendBool(b, d.ContractEnforced)
	b = append(b, `,"max_calls":`...)
	b = strconv.AppendInt(b, int64(d.MaxCalls), 10)
	b = append(b, `,"max_attempts":`...)
	b = strconv.AppendUint(b, uint64(d.MaxAttempts), 10)
	b = append(b, `,"max_input_bytes":`...)
	b = strconv.AppendInt(b, int64(d.MaxInputBytes), 10)
	b = append(b, `,"max_output_bytes":`...)
	b = strconv.AppendInt(b, int64(d.MaxOutputBytes), 10)
	if d.HasDeadline {
		b = append(b, `,"max_deferred_millis":`...)
		b = strconv.AppendUint(b, d.MaxDeferredMillis, 10)
	}
	if d.Stream != nil {
		b = append(b, `,"stream":`...)
		b = d.Stream.appendJSON(b)
	}
	b = append(b, `,"description":`...)
	b = canonjson.AppendString(b, d.Metadata.Description)
	if d.Metadata.InputSchema != nil {
		b = append(b, `,"input_schema":`...)
		b = d.Metadata.InputSchema.AppendJSON(b)
	}
	if d.Metadata.OutputSchema != nil {
		b = append(b, `,"output_schema":`...)
		b = d.Metadata.OutputSchema.AppendJSON(b)
	}
	return append(b, '}')
}
