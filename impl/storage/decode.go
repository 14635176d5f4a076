package storage

import (
	"unicode/utf16"
	"unicode/utf8"
)

// envelope is the decoded form of a stored envelope before any semantic
// check.
type envelope struct {
	formatVersion uint8
	keyID         string
	revision      uint64
	payload       string
	authTag       string
}

// Envelope field names, in declaration order.
var envelopeFields = [5]string{"format_version", "key_id", "revision", "payload", "auth_tag"}

// decodeEnvelope parses data with the acceptance rules the reference applies
// to its envelope type: strict JSON (UTF-8 strings, no raw control
// characters, complete surrogate pairs, no trailing data, only space, tab, LF
// and CR as whitespace), and the derived struct rules: either an object with
// exactly the five fields (matched case-sensitively after unescaping, no
// duplicates, no unknown fields) or a five-element array in field order;
// format_version an unsigned integer up to 255, revision an unsigned integer
// up to 2^64-1, written without fraction, exponent or sign.
func decodeEnvelope(data []byte) (envelope, bool) {
	d := decoder{data: data}
	var env envelope
	d.skipSpace()
	if d.pos >= len(d.data) {
		return env, false
	}
	var ok bool
	switch d.data[d.pos] {
	case '{':
		ok = d.object(&env)
	case '[':
		ok = d.array(&env)
	default:
		return env, false
	}
	if !ok {
		return env, false
	}
	d.skipSpace()
	return env, d.pos == len(d.data)
}

type decoder struct {
	data []byte
	pos  int
}

func (d *decoder) skipSpace() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// consume skips whitespace and then expects the byte c.
func (d *decoder) consume(c byte) bool {
	d.skipSpace()
	if d.pos < len(d.data) && d.data[d.pos] == c {
		d.pos++
		return true
	}
	return false
}

// peek skips whitespace and returns the next byte (0 at the end).
func (d *decoder) peek() byte {
	d.skipSpace()
	if d.pos < len(d.data) {
		return d.data[d.pos]
	}
	return 0
}

func (d *decoder) field(index int, env *envelope) bool {
	var ok bool
	switch index {
	case 0:
		var v uint64
		v, ok = d.unsigned(255)
		env.formatVersion = uint8(v)
	case 1:
		env.keyID, ok = d.str()
	case 2:
		env.revision, ok = d.unsigned(^uint64(0))
	case 3:
		env.payload, ok = d.str()
	case 4:
		env.authTag, ok = d.str()
	}
	return ok
}

func (d *decoder) object(env *envelope) bool {
	d.pos++ // '{'
	var seen [len(envelopeFields)]bool
	if !d.consume('}') {
		for {
			if d.peek() != '"' {
				return false
			}
			name, ok := d.str()
			if !ok {
				return false
			}
			index := -1
			for i, f := range envelopeFields {
				if f == name {
					index = i
				}
			}
			if index < 0 || seen[index] {
				return false
			}
			seen[index] = true
			if !d.consume(':') || !d.field(index, env) {
				return false
			}
			if d.consume(',') {
				continue
			}
			if d.consume('}') {
				break
			}
			return false
		}
	}
	for _, s := range seen {
		if !s {
			return false
		}
	}
	return true
}

func (d *decoder) array(env *envelope) bool {
	d.pos++ // '['
	for i := range envelopeFields {
		if i > 0 && !d.consume(',') {
			return false
		}
		if !d.field(i, env) {
			return false
		}
	}
	return d.consume(']')
}

// unsigned reads a JSON integer token with no sign, fraction or exponent,
// and fails when it exceeds maximum.
func (d *decoder) unsigned(maximum uint64) (uint64, bool) {
	d.skipSpace()
	start := d.pos
	for d.pos < len(d.data) && '0' <= d.data[d.pos] && d.data[d.pos] <= '9' {
		d.pos++
	}
	digits := d.data[start:d.pos]
	if len(digits) == 0 || (digits[0] == '0' && len(digits) > 1) {
		return 0, false
	}
	if d.pos < len(d.data) {
		switch d.data[d.pos] {
		case '.', 'e', 'E':
			return 0, false
		}
	}
	var v uint64
	for _, c := range digits {
		digit := uint64(c - '0')
		if v > (^uint64(0)-digit)/10 {
			return 0, false
		}
		v = v*10 + digit
	}
	if v > maximum {
		return 0, false
	}
	return v, true
}

// str reads a JSON string and returns its decoded value.
func (d *decoder) str() (string, bool) {
	if !d.consume('"') {
		return "", false
	}
	var out []byte
	for {
		start := d.pos
		for d.pos < len(d.data) {
			c := d.data[d.pos]
			if c == '"' || c == '\\' || c < 0x20 {
				break
			}
			d.pos++
		}
		raw := d.data[start:d.pos]
		if !utf8.Valid(raw) {
			return "", false
		}
		if d.pos >= len(d.data) {
			return "", false
		}
		c := d.data[d.pos]
		if c == '"' && out == nil {
			// No escape sequence: the common case.
			d.pos++
			return string(raw), true
		}
		out = append(out, raw...)
		switch {
		case c == '"':
			d.pos++
			return string(out), true
		case c < 0x20:
			return "", false
		}
		// Escape sequence.
		d.pos++
		if d.pos >= len(d.data) {
			return "", false
		}
		e := d.data[d.pos]
		d.pos++
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := d.hex4()
			if !ok {
				return "", false
			}
			switch {
			case utf16.IsSurrogate(r) && r < 0xdc00:
				if d.pos+2 > len(d.data) || d.data[d.pos] != '\\' || d.data[d.pos+1] != 'u' {
					return "", false
				}
				d.pos += 2
				low, ok := d.hex4()
				if !ok || low < 0xdc00 || low > 0xdfff {
					return "", false
				}
				r = utf16.DecodeRune(r, low)
			case utf16.IsSurrogate(r):
				return "", false
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", false
		}
	}
}

func (d *decoder) hex4() (rune, bool) {
	if d.pos+4 > len(d.data) {
		return 0, false
	}
	var r rune
	for _, c := range d.data[d.pos : d.pos+4] {
		var v byte
		switch {
		case '0' <= c && c <= '9':
			v = c - '0'
		case 'a' <= c && c <= 'f':
			v = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			v = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	d.pos += 4
	return r, true
}
