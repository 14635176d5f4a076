// Package worker is the worker runtime of Splash worker protocol v5: the code inside a
// contained worker process that turns authenticated host frames into adapter calls and sealed
// answers.
//
// A Session (chapter 13 of the specification) owns one authenticator, one session authorizer,
// one operation journal with its revision and fencing lease, and a Registry of adapters. It
// takes frame lines and returns answer lines; it persists the journal through a
// JournalPersister before an adapter runs a durable effect and before it answers, and it
// poisons itself after any persistence failure. A Driver (chapter 14) runs a session whose
// tools are all cancellable, with the adapter on its own goroutine so that cancel frames are
// still read. Serve ties both to a process's streams, and ExitCode maps how a session ended
// to the process exit status.
//
// Protocol v5 has no error frame: a session answers a frame it accepts with exactly one frame
// and answers a frame it rejects with nothing. A worker process ends the session at its first
// rejected frame.
package worker
