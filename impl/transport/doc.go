// Package transport holds the host side of the channels that carry authenticated worker frames
// between a trusted host and its workers (spec chapter 22):
//
//   - Channel, the JSON-line frame channel: one frame per line, each line at most 1 MiB,
//     checked before the line is decoded; any I/O, size, UTF-8 or decoding failure poisons it.
//   - FrameTransport, the single-flight transport for ordinary invocations: seal invoke, send,
//     receive, open, require result. It cannot send a cancellation.
//   - OperationTransport, the one-shot durable operation transport: one dispatch,
//     reconciliation or compensation exchange, then it is consumed.
//   - Multiplexed, the transport for one cancellable ordinary invocation at a time, whose
//     reader and writer are owned independently so that a cancel can be sent while the worker
//     runs. Its decisions are made by Coordinator, a pure state machine; Multiplexed only
//     moves lines between Coordinator and the streams.
//   - SupervisedSession, which couples an external-tool binding on a Multiplexed transport to a
//     Supervisor that arms a deadline before each invoke, and Process, a Supervisor that runs a
//     worker command in its own process group and kills that group at the deadline.
//
// Every synchronous exchange waits at most a deadline (spec TRN-110); a Supervisor given to a
// transport stops the worker's process group when the deadline elapses.
//
// The in-process transport, which runs an opened worker session inside the host process, is
// the sub-package inprocess, so that this package links no worker code.
//
// None of these types is a sandbox or a key exchange. A stopped worker,
// an end of stream, a transport error or a deadline is never a cancellation: only a positive,
// authenticated acknowledgement from the worker is.
package transport

import "github.com/splashv5/conform/impl/host"

// The synchronous invoke transports are host worker transports, and Process is a Supervisor.
var (
	_ host.WorkerTransport = (*FrameTransport)(nil)
	_ Supervisor           = (*Process)(nil)
)
