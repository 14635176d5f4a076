package main

import "encoding/json"

// command is one driver command (HDR-002).
type command struct {
	ID         uint64          `json:"id"`
	Op         string          `json:"op"`
	Command    []string        `json:"command"`
	Manifest   json.RawMessage `json:"manifest"`
	DeadlineMS int64           `json:"deadline_ms"`
	RequestID  string          `json:"request_id"`
	Tool       string          `json:"tool"`
	Payload    json.RawMessage `json:"payload"`
	Key        string          `json:"key"`
	// Cancellable starts a multiplexed session (feature cancel); CancellationID names a cancel.
	Cancellable    bool   `json:"cancellable"`
	CancellationID string `json:"cancellation_id"`
	// State is the directory of the host's durable ledger (features recover, compensate).
	State string `json:"state"`
	// Inputs is the directory of the input store (HDR-056); without it the inputs stay in State.
	Inputs string `json:"inputs"`
	// Scope is the worker's journal scope, the tenant scope of every compensation binding.
	Scope string `json:"scope"`
	// Plan is the workflow plan of start (HDR-049); Nonce the operation or compensation nonce
	// of step and compensate. Both default to the driver's own.
	Plan  *planCommand `json:"plan"`
	Nonce string       `json:"nonce"`
}

// planCommand is the plan a start names (HDR-049): its steps, from which the host derives the
// plan fingerprint (WFL-045).
type planCommand struct {
	Steps []planStep `json:"steps"`
}

// planStep is one step of a plan command.
type planStep struct {
	ID     string `json:"id"`
	Source string `json:"source"`
}

// nonce returns the command's nonce, or its request id when it names none.
func (c command) nonce() []byte {
	if c.Nonce != "" && fault != "keyinputs" {
		return []byte(c.Nonce)
	}
	return []byte(c.RequestID)
}

// outcome is one outcome line (HDR-003).
type outcome struct {
	ID       uint64          `json:"id"`
	OK       bool            `json:"ok"`
	Error    string          `json:"error,omitempty"`
	Payload  json.RawMessage `json:"payload,omitempty"`
	Status   json.RawMessage `json:"status,omitempty"`
	Features []string        `json:"features,omitempty"`
	ExitCode *int            `json:"exit_code,omitempty"`
	// Disposition is a cancel's outcome; Cancelled says that finish saw the acknowledgement.
	Disposition string `json:"disposition,omitempty"`
	Cancelled   bool   `json:"cancelled,omitempty"`
	// Key is the operation key a step was recorded under.
	Key string `json:"key,omitempty"`
}
