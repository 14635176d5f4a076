package profile

import (
	"errors"
	"strings"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/worker"
)

// MaxTypedRepeat is the largest repeat count conf.json.typed accepts: the range of the
// repeat member's type, an unsigned 8-bit integer (PRF-032).
const MaxTypedRepeat = 255

// typedInput is the input type of conf.json.typed (PRF-031): a struct of the members text and
// repeat, in that order, unknown members denied.
type typedInput struct {
	Text   string
	Repeat uint64
}

// typedOutput is the output of conf.json.typed for a repeat count of at least 1 (PRF-031).
type typedOutput struct {
	Count uint64
	Text  string
}

// The reasons a conf.json.typed input does not decode (PRF-032).
var (
	errTypedKind    = errors.New("input is neither an object nor an array")
	errTypedLength  = errors.New("the positional form [text, repeat] has exactly two elements")
	errTypedText    = errors.New(`member "text" is missing or not a string`)
	errTypedRepeat  = errors.New(`member "repeat" is missing or not an integer from 0 to 255`)
	errTypedUnknown = errors.New(`the input has a member other than "text" and "repeat"`)
)

// decodeTyped decodes the input of conf.json.typed as a derived decoder of the input type
// does, with unknown members denied (PRF-031, PRF-032): the object {"text":T,"repeat":R}, or
// the positional form [T,R] of exactly two elements. A repeated member is not seen here: the
// payload's value already kept its last occurrence (ENC-022). On a failure it also returns
// what it did decode, as a best-effort decoder does; the typed helper discards it (WRK-005).
func decodeTyped(v canonjson.Value) (typedInput, error) {
	var in typedInput
	var errs []error
	text := func(x canonjson.Value) {
		if x.Kind() != canonjson.KindString {
			errs = append(errs, errTypedText)
			return
		}
		in.Text = x.StringValue()
	}
	repeat := func(x canonjson.Value) {
		n, ok := x.Uint64()
		if !ok || n > MaxTypedRepeat {
			errs = append(errs, errTypedRepeat)
			return
		}
		in.Repeat = n
	}
	switch v.Kind() {
	case canonjson.KindArray:
		e := v.Elems()
		if len(e) != 2 {
			errs = append(errs, errTypedLength)
		}
		if len(e) > 0 {
			text(e[0])
		}
		if len(e) > 1 {
			repeat(e[1])
		}
	case canonjson.KindObject:
		for _, e := range v.Entries() {
			switch e.Key {
			case "text":
				text(e.Value)
			case "repeat":
				repeat(e.Value)
			default:
				errs = append(errs, errTypedUnknown)
			}
		}
		if _, ok := v.Get("text"); !ok {
			errs = append(errs, errTypedText)
		}
		if _, ok := v.Get("repeat"); !ok {
			errs = append(errs, errTypedRepeat)
		}
	default:
		errs = append(errs, errTypedKind)
	}
	return in, errors.Join(errs...)
}

// repeatText is the handler of conf.json.typed: the text repeated, or no output (nil) for a
// repeat count of 0 (PRF-031, PRF-025).
func repeatText(in typedInput, _ protocol.CapabilityGrant) (*typedOutput, error) {
	if in.Repeat == 0 {
		return nil, nil
	}
	return &typedOutput{Count: in.Repeat, Text: strings.Repeat(in.Text, int(in.Repeat))}, nil
}

// encodeTyped encodes the output of conf.json.typed: {"count":R,"text":T} or, for no output,
// null, which the typed helper refuses as InvalidJsonOutput (PRF-025).
func encodeTyped(out *typedOutput) (canonjson.Value, error) {
	if out == nil {
		return canonjson.Null(), nil
	}
	return canonjson.Object(
		canonjson.Entry{Key: "count", Value: canonjson.Uint(out.Count)},
		canonjson.Entry{Key: "text", Value: canonjson.String(out.Text)},
	), nil
}

// newTyped returns conf.json.typed: the typed JSON adapter helper of the worker runtime
// (WRK-005) over the handler above, read-only, with no durable contract.
func newTyped() *worker.TypedJSON[typedInput, *typedOutput] {
	return &worker.TypedJSON[typedInput, *typedOutput]{
		Safety:  worker.ReadOnly,
		Decode:  decodeTyped,
		Encode:  encodeTyped,
		Handler: repeatText,
	}
}
