package script

import (
	"fmt"
	"time"
)

// Default bounds. The source, string, stack, call-frame, token, nesting and instruction defaults
// are the reference runtime's; the deadline is its hard time budget.
const (
	DefaultMaxSourceBytes        = 256 * 1024            // Limits.MaxSourceBytes
	DefaultMaxStringBytes        = 256 * 1024            // Limits.MaxStringBytes
	DefaultMaxHeapBytes          = 8 * 1024 * 1024       // Limits.MaxHeapBytes
	DefaultMaxStackValues        = 32 * 1024             // Limits.MaxStackValues
	DefaultMaxCallFrames         = 1024                  // Limits.MaxCallFrames
	DefaultMaxSyntaxTokens       = 32 * 1024             // Limits.MaxSyntaxTokens
	DefaultMaxNesting            = 128                   // Limits.MaxNesting
	DefaultInstructionLimit      = 200_000               // Limits.InstructionLimit
	DefaultDeadline              = 64 * time.Millisecond // Limits.Deadline
	DefaultDeadlineCheckInterval = 1024                  // Limits.DeadlineCheckInterval
	// MaxJSONDataBytes caps parse_json input and to_json output (lowered further by
	// MaxSourceBytes).
	MaxJSONDataBytes = 64 * 1024
	// MaxJSONDataDepth caps JSON container nesting in parse_json and to_json (lowered further by
	// MaxNesting).
	MaxJSONDataDepth = 64
)

// Limits bounds one evaluation. Every field must be positive; DefaultLimits returns the
// defaults.
type Limits struct {
	// MaxSourceBytes rejects longer source before parsing.
	MaxSourceBytes int
	// MaxStringBytes bounds every string built at run time (concatenation, to_json, the JSON
	// text of call_json and start_json). Exceeding it stops the evaluation.
	MaxStringBytes int
	// MaxHeapBytes bounds the bytes of script data (strings, array and record slots) allocated
	// during one evaluation, counted from Eval across every Resume. Exceeding it stops the
	// evaluation.
	MaxHeapBytes int
	// MaxStackValues bounds the operand stack.
	MaxStackValues int
	// MaxCallFrames bounds active calls, the top level included.
	MaxCallFrames int
	// MaxSyntaxTokens rejects source with more lexical tokens (newlines count).
	MaxSyntaxTokens int
	// MaxNesting rejects source whose expressions and blocks nest deeper.
	MaxNesting int
	// InstructionLimit bounds the instructions executed by one run (Eval, or one Resume).
	InstructionLimit int
	// Deadline bounds the time of one run (Eval, or one Resume), measured on the injected clock.
	Deadline time.Duration
	// DeadlineCheckInterval is how many instructions run between two clock readings. It must
	// be smaller than InstructionLimit.
	DeadlineCheckInterval int
}

// DefaultLimits returns the default bounds.
func DefaultLimits() Limits {
	return Limits{
		MaxSourceBytes:        DefaultMaxSourceBytes,
		MaxStringBytes:        DefaultMaxStringBytes,
		MaxHeapBytes:          DefaultMaxHeapBytes,
		MaxStackValues:        DefaultMaxStackValues,
		MaxCallFrames:         DefaultMaxCallFrames,
		MaxSyntaxTokens:       DefaultMaxSyntaxTokens,
		MaxNesting:            DefaultMaxNesting,
		InstructionLimit:      DefaultInstructionLimit,
		Deadline:              DefaultDeadline,
		DeadlineCheckInterval: DefaultDeadlineCheckInterval,
	}
}

// Validate returns l, or an error wrapping ErrInvalidLimits naming the first unusable field.
func (l Limits) Validate() (Limits, error) {
	fields := []struct {
		name  string
		value int64
	}{
		{"MaxSourceBytes", int64(l.MaxSourceBytes)},
		{"MaxStringBytes", int64(l.MaxStringBytes)},
		{"MaxHeapBytes", int64(l.MaxHeapBytes)},
		{"MaxStackValues", int64(l.MaxStackValues)},
		{"MaxCallFrames", int64(l.MaxCallFrames)},
		{"MaxSyntaxTokens", int64(l.MaxSyntaxTokens)},
		{"MaxNesting", int64(l.MaxNesting)},
		{"InstructionLimit", int64(l.InstructionLimit)},
		{"Deadline", int64(l.Deadline)},
		{"DeadlineCheckInterval", int64(l.DeadlineCheckInterval)},
	}
	for _, f := range fields {
		if f.value <= 0 {
			return l, fmt.Errorf("%w: %s must be greater than zero", ErrInvalidLimits, f.name)
		}
	}
	if l.DeadlineCheckInterval >= l.InstructionLimit {
		return l, fmt.Errorf("%w: DeadlineCheckInterval must be less than InstructionLimit", ErrInvalidLimits)
	}
	return l, nil
}

// jsonBytes is the byte bound of parse_json and to_json.
func (l Limits) jsonBytes() int { return min(l.MaxSourceBytes, MaxJSONDataBytes) }

// jsonDepth is the container-depth bound of parse_json and to_json.
func (l Limits) jsonDepth() int { return min(l.MaxNesting, MaxJSONDataDepth) }
