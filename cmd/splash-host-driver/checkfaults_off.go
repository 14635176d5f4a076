//go:build !splashfaults

package main

import (
	"encoding/json"
	"io"

	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/transport"
)

// workerOutput returns the worker's output unchanged; the test build may alter it.
func workerOutput(r io.Reader) io.Reader { return r }

// chargeEarly does nothing; the test build may charge a call before authorizing it.
func (s *session) chargeEarly(string) error { return nil }

// pastLimit does nothing; the test build may send an invocation past the identity bound.
func (s *session) pastLimit(protocol.ToolInvocation, error) (json.RawMessage, bool) {
	return nil, false
}

// frameChannel returns ch, the channel frames are read from; the test build may bound its
// lines in another unit.
func frameChannel(ch *transport.Channel, _ io.Reader) transport.FrameChannel { return ch }
