package profile

import (
	"errors"
	"strings"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/worker"
)

// MaxTypedRepeat is the largest repeat count conf.json.typed accepts (PRF-024).
const MaxTypedRepeat = 16

// typedInput is the input type of conf.json.typed (PRF-023): the object
// {"text":T,"repeat":R}.
type typedInput struct {
	Text   string
	Repeat uint64
}

// typedOutput is the output of conf.json.typed for a repeat count of at least 1 (PRF-023).
type typedOutput struct {
	Count uint64
	Text  string
}

// The reasons a conf.json.typed input does not decode (PRF-024).
var (
	errTypedNotObject = errors.New("input is not an object (the positional form is refused)")
	errTypedText      = errors.New(`member "text" is missing or not a string`)
	errTypedRepeat    = errors.New(`member "repeat" is missing or not an integer from 0 to 16`)
	errTypedUnknown   = errors.New(`the input has a member other than "text" and "repeat"`)
)

// decodeTyped decodes the input of conf.json.typed. On a failure it also returns what it did
// decode, as a best-effort decoder does; the typed helper discards it (WRK-005). The
// positional form [T,R], which Rust's derived decoding accepts, is read that way and then
// refused (PRF-024).
func decodeTyped(v canonjson.Value) (typedInput, error) {
	var in typedInput
	if v.Kind() != canonjson.KindObject {
		if e := v.Elems(); len(e) == 2 && e[0].Kind() == canonjson.KindString {
			in.Text = e[0].StringValue()
			if n, ok := e[1].Uint64(); ok && n <= MaxTypedRepeat {
				in.Repeat = n
			}
		}
		return in, errTypedNotObject
	}
	var errs []error
	for _, e := range v.Entries() {
		switch e.Key {
		case "text":
			if e.Value.Kind() != canonjson.KindString {
				errs = append(errs, errTypedText)
				continue
			}
			in.Text = e.Value.StringValue()
		case "repeat":
			n, ok := e.Value.Uint64()
			if !ok || n > MaxTypedRepeat {
				errs = append(errs, errTypedRepeat)
				continue
			}
			in.Repeat = n
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
	return in, errors.Join(errs...)
}

// repeatText is the handler of conf.json.typed: the text repeated, or no output (nil) for a
// repeat count of 0 (PRF-023, PRF-025).
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
