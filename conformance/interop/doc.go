// Package interop runs real host drivers against real workers and judges every frame between
// them (spec/31-interop.md, docs/interop.md). The runner tells a host driver (the chapter-30
// contract, driven with the client of conformance/driver) to start a relay in place of the worker;
// the relay starts the worker, passes every byte through unchanged and verifies each frame of
// both directions with the wire core, blaming the side that broke a rule. A scenario is judged
// at both ends (the driver's outcomes, the worker's exit status, the profile's effect log) and
// on the wire. A matrix runs every host × worker pair of an implementations file. Scenarios are
// the framework's checks (conformance.Check), run by its loop; Main is its command line.
package interop
