package main

import (
	"bytes"
	"encoding/json"
)

// encodeFile renders a vector file deterministically: two-space indentation, object keys in
// sorted order at every level, no HTML escaping, and a trailing newline.
func encodeFile(v any) ([]byte, error) {
	var first bytes.Buffer
	enc := json.NewEncoder(&first)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	// Decoding into generic maps and encoding again sorts every object's keys; UseNumber keeps
	// each number's text exactly.
	dec := json.NewDecoder(&first)
	dec.UseNumber()
	var generic any
	if err := dec.Decode(&generic); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	enc = json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(generic); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
