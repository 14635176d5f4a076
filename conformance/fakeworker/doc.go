// Package fakeworker is the fake worker of the host-driver contract (spec chapter 30,
// HDR-030): a mode of the conformance program that a host driver starts as its worker. It
// reports its argv, environment and process identity on a side channel, relays every byte of
// its standard input to the runner and writes to its standard output only what the runner
// sends it. The host suite and the host side of the explorer both play the worker through it;
// how they judge the host's frames is theirs, by the wire core's rules (protocol.WorkerState).
package fakeworker
