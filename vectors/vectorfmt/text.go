package vectorfmt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// MinRunLength is the shortest run of one repeated byte that [Text] stores as a repeat part.
// Shorter runs are kept inline so ordinary vectors stay plain strings.
const MinRunLength = 4096

// MaxExpandedText bounds the expanded length of a compressed [Text], so that a corrupt or
// hostile vector file cannot make a reader allocate without limit. It leaves room for frame
// lines and tag inputs slightly over the 1 MiB wire limit.
const MaxExpandedText = 4 << 20

// Text is a string-valued vector field. In a file it is either a JSON string or, when it holds
// a long run of one repeated ASCII byte (boundary tests near the 1 MiB frame limit), an object
// {"parts":[...]} whose parts are strings or {"repeat":"<one ASCII byte>","count":N} items.
// The expansion is the concatenation of the parts.
type Text string

type repeatPart struct {
	Repeat string `json:"repeat"`
	Count  int    `json:"count"`
}

type compressedText struct {
	Parts []json.RawMessage `json:"parts"`
}

// MarshalJSON writes t as a plain string, or as a parts object when it contains a run of at
// least MinRunLength identical ASCII bytes.
func (t Text) MarshalJSON() ([]byte, error) {
	s := string(t)
	var parts []any
	literalStart := 0
	for i := 0; i < len(s); {
		j := i + 1
		for j < len(s) && s[j] == s[i] {
			j++
		}
		if j-i >= MinRunLength && s[i] < 0x80 {
			if literalStart < i {
				parts = append(parts, s[literalStart:i])
			}
			parts = append(parts, repeatPart{Repeat: s[i : i+1], Count: j - i})
			literalStart = j
		}
		i = j
	}
	if parts == nil {
		return marshalNoHTML(s)
	}
	if literalStart < len(s) {
		parts = append(parts, s[literalStart:])
	}
	return marshalNoHTML(map[string]any{"parts": parts})
}

// UnmarshalJSON accepts a JSON string or a parts object and stores the expanded text.
func (t *Text) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		*t = Text(s)
		return nil
	}
	var c compressedText
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return fmt.Errorf("vectorfmt: text must be a string or a parts object: %w", err)
	}
	if c.Parts == nil {
		return errors.New("vectorfmt: parts object without parts")
	}
	var b strings.Builder
	for _, raw := range c.Parts {
		raw = bytes.TrimSpace(raw)
		if len(raw) > 0 && raw[0] == '"' {
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return err
			}
			if b.Len()+len(s) > MaxExpandedText {
				return errors.New("vectorfmt: expanded text too long")
			}
			b.WriteString(s)
			continue
		}
		var r repeatPart
		pd := json.NewDecoder(bytes.NewReader(raw))
		pd.DisallowUnknownFields()
		if err := pd.Decode(&r); err != nil {
			return fmt.Errorf("vectorfmt: bad text part: %w", err)
		}
		if len(r.Repeat) != 1 || r.Repeat[0] >= 0x80 || r.Count < 1 {
			return fmt.Errorf("vectorfmt: bad repeat part %q x %d", r.Repeat, r.Count)
		}
		if b.Len()+r.Count > MaxExpandedText {
			return errors.New("vectorfmt: expanded text too long")
		}
		b.WriteString(strings.Repeat(r.Repeat, r.Count))
	}
	*t = Text(b.String())
	return nil
}

// marshalNoHTML encodes v like json.Marshal but without HTML escaping, so '<', '>' and '&'
// stay readable in vector files.
func marshalNoHTML(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
