// Package childproc handles the child processes of the module's programs and tests: it starts
// a child as the leader of a process group of its own (and, where the system can, ties its life
// to its parent's), kills such a group and waits a bounded time for it to die, keeps a bounded excerpt of a child's standard error, classifies how a
// child ended (status or signal) and builds a package of this module into an executable.
//
// It imports only the standard library, so that the conformance suites, which link the wire
// core and nothing else of the module's runtime, can use it, and so can the host transport.
package childproc
