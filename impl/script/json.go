package script

import (
	"math"
	"strconv"

	"github.com/splashv5/conform/impl/canonjson"
)

// jsonWriter builds JSON text and gives up once it would exceed max bytes.
type jsonWriter struct {
	buf  []byte
	max  int
	full bool
}

func (w *jsonWriter) add(s string) bool {
	if w.full || len(s) > w.max-len(w.buf) {
		w.full = true
		return false
	}
	w.buf = append(w.buf, s...)
	return true
}

// commit accepts out, which is w.buf with text appended, unless it exceeds the bound.
func (w *jsonWriter) commit(out []byte) bool {
	if len(out) > w.max {
		w.full = true
		w.buf = out[:len(w.buf)]
		return false
	}
	w.buf = out
	return true
}

func (w *jsonWriter) addBytes(b []byte) bool {
	if w.full || len(b) > w.max-len(w.buf) {
		w.full = true
		return false
	}
	w.buf = append(w.buf, b...)
	return true
}

const hexDigits = "0123456789abcdef"

// errJSONLimits and errJSONBoundary are the two catchable failures of to_json and parse_json.
var (
	errJSONLimits   = raiseError(originJSON, msgJSONLimits)
	errJSONBoundary = raiseError(originJSON, msgJSONBoundary)
)

// toJSON implements `v.to_json()`: compact JSON with fields in record order, bounded in bytes
// and container depth. Only nil, booleans, finite numbers, strings, arrays and records cross.
func (m *Machine) toJSON(v Value) (string, error) {
	w := &jsonWriter{max: m.limits.jsonBytes(), buf: make([]byte, 0, 64)}
	if err := writeBoundedJSON(w, v, 0, m.limits.jsonDepth()); err != nil {
		return "", err
	}
	return string(w.buf), nil
}

func writeBoundedJSON(w *jsonWriter, v Value, depth, maxDepth int) error {
	ok := true
	switch v.kind {
	case KindNil:
		ok = w.add("null")
	case KindBool:
		ok = w.add(strconv.FormatBool(v.BoolValue()))
	case KindNumber:
		f := v.NumberValue()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return errJSONBoundary
		}
		var tmp [32]byte
		ok = w.addBytes(appendScriptNumber(tmp[:0], f))
	case KindString:
		ok = writeBoundedString(w, v.str)
	case KindArray:
		if depth >= maxDepth {
			return errJSONLimits
		}
		if !w.add("[") {
			return errJSONLimits
		}
		for i, e := range v.Elems() {
			if i > 0 && !w.add(",") {
				return errJSONLimits
			}
			if err := writeBoundedJSON(w, e, depth+1, maxDepth); err != nil {
				return err
			}
		}
		ok = w.add("]")
	case KindRecord:
		if depth >= maxDepth {
			return errJSONLimits
		}
		if !w.add("{") {
			return errJSONLimits
		}
		for i, f := range v.Fields() {
			if i > 0 && !w.add(",") {
				return errJSONLimits
			}
			if !writeBoundedString(w, f.Name) || !w.add(":") {
				return errJSONLimits
			}
			if err := writeBoundedJSON(w, f.Value, depth+1, maxDepth); err != nil {
				return err
			}
		}
		ok = w.add("}")
	default:
		return errJSONBoundary
	}
	if !ok {
		return errJSONLimits
	}
	return nil
}

// appendScriptNumber writes a finite number the way the bounded JSON writer does: a whole
// number in plain decimal digits (42, -0, 1000000000000000000000), any other number in
// serde_json's float layout (0.5, 1e-7).
func appendScriptNumber(dst []byte, f float64) []byte {
	if f == math.Trunc(f) {
		return strconv.AppendFloat(dst, f, 'f', -1, 64)
	}
	return canonjson.AppendFloat(dst, f)
}

func writeBoundedString(w *jsonWriter, s string) bool {
	if w.full {
		return false
	}
	out := append(w.buf, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			out = append(out, '\\', '"')
		case c == '\\':
			out = append(out, '\\', '\\')
		case c == '\b':
			out = append(out, '\\', 'b')
		case c == '\f':
			out = append(out, '\\', 'f')
		case c == '\n':
			out = append(out, '\\', 'n')
		case c == '\r':
			out = append(out, '\\', 'r')
		case c == '\t':
			out = append(out, '\\', 't')
		case c < 0x20:
			out = append(out, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		default:
			out = append(out, c)
		}
	}
	out = append(out, '"')
	return w.commit(out)
}

// parseJSON implements `s.parse_json()` the way the reference does: strict JSON text, at most
// the JSON byte bound and container depth, written back as compact serde_json text (numbers
// keep their text, object keys come out sorted and a repeated key keeps its last value; that
// text is bounded again) and then read by the reference VM's own JSON reader (jsonreader.go),
// whose quirks with minus signs and root scalars are reproduced.
func (m *Machine) parseJSON(v Value) (Value, error) {
	if v.kind != KindString {
		return Value{}, errJSONBoundary
	}
	if len(v.str) > m.limits.jsonBytes() {
		return Value{}, errJSONLimits
	}
	node, err := canonjson.Parse([]byte(v.str))
	if err != nil {
		return Value{}, errJSONBoundary
	}
	doc, err := canonjson.FromNode(node, canonjson.Preserve)
	if err != nil {
		return Value{}, errJSONBoundary
	}
	if jsonDepth(doc, 0, m.limits.jsonDepth()) {
		return Value{}, errJSONLimits
	}
	// Writing the document back can lengthen it (1E5 becomes 1e+5).
	if len(doc.AppendJSON(make([]byte, 0, len(v.str)))) > m.limits.jsonBytes() {
		return Value{}, errJSONLimits
	}
	return m.materialize(readTokens(readerTokens(doc)))
}

// jsonDepth reports whether doc nests more than max containers.
func jsonDepth(doc canonjson.Value, depth, max int) bool {
	switch doc.Kind() {
	case canonjson.KindArray:
		if depth >= max {
			return true
		}
		for _, e := range doc.Elems() {
			if jsonDepth(e, depth+1, max) {
				return true
			}
		}
	case canonjson.KindObject:
		if depth >= max {
			return true
		}
		for _, e := range doc.Entries() {
			if jsonDepth(e.Value, depth+1, max) {
				return true
			}
		}
	}
	return false
}

// toolInputJSON writes the input of tool.call_json and tool.start_json the way the reference
// VM's raw serializer does (not the bounded to_json): fields in record order, numbers in plain
// decimal with NaN and infinities spelled "NaN", "inf" and "-inf", and strings escaped only
// for `"`, backspace, form feed, newline and carriage return, so a backslash, a tab or another
// control character is copied raw. The result is bounded by MaxStringBytes (an uncatchable
// stop). Functions, modules and promises cannot be written: the call is denied.
func (m *Machine) toolInputJSON(v Value) (string, error) {
	w := &jsonWriter{max: m.limits.MaxStringBytes, buf: make([]byte, 0, 64)}
	if err := writeRawJSON(w, v); err != nil {
		return "", err
	}
	if w.full {
		return "", &LimitError{Kind: ErrStringLimit}
	}
	return string(w.buf), nil
}

func writeRawJSON(w *jsonWriter, v Value) error {
	if w.full {
		return nil
	}
	switch v.kind {
	case KindNil:
		w.add("null")
	case KindBool:
		w.add(strconv.FormatBool(v.BoolValue()))
	case KindNumber:
		f := v.NumberValue()
		switch {
		case math.IsNaN(f):
			w.add("NaN")
		case math.IsInf(f, 1):
			w.add("inf")
		case math.IsInf(f, -1):
			w.add("-inf")
		default:
			var tmp [32]byte
			w.addBytes(strconv.AppendFloat(tmp[:0], f, 'f', -1, 64))
		}
	case KindString:
		writeRawString(w, v.str)
	case KindArray:
		w.add("[")
		for i, e := range v.Elems() {
			if i > 0 {
				w.add(",")
			}
			if err := writeRawJSON(w, e); err != nil || w.full {
				return err
			}
		}
		w.add("]")
	case KindRecord:
		w.add("{")
		for i, f := range v.Fields() {
			if i > 0 {
				w.add(",")
			}
			writeRawString(w, f.Name)
			w.add(":")
			if err := writeRawJSON(w, f.Value); err != nil || w.full {
				return err
			}
		}
		w.add("}")
	default:
		return Denied("tool API expects a JSON-serializable value")
	}
	return nil
}

func writeRawString(w *jsonWriter, s string) {
	if w.full {
		return
	}
	out := append(w.buf, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\b':
			out = append(out, '\\', 'b')
		case '\f':
			out = append(out, '\\', 'f')
		case '\n':
			out = append(out, '\\', 'n')
		case '\r':
			out = append(out, '\\', 'r')
		case '"':
			out = append(out, '\\', '"')
		default:
			out = append(out, c)
		}
	}
	out = append(out, '"')
	w.commit(out)
}
