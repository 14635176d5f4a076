//go:build splashfaults

package main

import "encoding/json"

// runnerPayload is the float-payload fault of the interop fault table (conformance/interop): the payload of a command is read through float64
// numbers and written again, as a host port built on a plain JSON library does, so that a
// number beyond 2^53 or a spelling such as 1e2 reaches the worker altered (ENC-034, ENC-053).
func runnerPayload(p json.RawMessage) json.RawMessage {
	if fault != "float-payload" || p == nil {
		return p
	}
	var v any
	if json.Unmarshal(p, &v) != nil {
		return p
	}
	out, err := json.Marshal(v)
	if err != nil {
		return p
	}
	return out
}
