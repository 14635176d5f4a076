//go:build !splashfaults

package main

import (
	"encoding/json"
	"io"
	"time"

	"github.com/splashv5/conform/impl/host"
	"github.com/splashv5/conform/impl/protocol"
)

// fitsInUnits is false; the test build may count sizes in UTF-16 code units.
func fitsInUnits(protocol.ToolPayload, error) bool { return false }

// commandPayload returns raw; the test build may read it through a lossy JSON parser.
func commandPayload(raw json.RawMessage) json.RawMessage { return raw }

// reported returns p; the test build may normalize its numbers.
func reported(p json.RawMessage) json.RawMessage { return p }

// workerInput returns w; the test build may write non-canonical escapes.
func workerInput(w io.Writer) io.Writer { return w }

// recompensates is false; the test build may send a recorded compensation again.
func recompensates(string, error) bool { return false }

// compensated does nothing; the test build may remember compensations in memory.
func compensated(string) {}

// began does nothing; the test build may note when an invocation began.
func began(string) {}

// finishWait returns d; the test build may count the deadline from the invocation's begin.
func finishWait(_ string, d time.Duration) time.Duration { return d }

// pace does nothing; the test build may slow the driver down.
func pace(time.Time) {}

// planFault returns p; the test build may fix the plan fingerprint instead of deriving it.
func planFault(p host.Plan) host.Plan { return p }
