// Package e2e holds the host end-to-end tests: a script calls an external tool through the host
// capability runtime, the host dispatches the claimed operation to the reference worker
// process over the supervised multiplexed transport or the durable operation transport, and the
// script resumes with the worker's authenticated answer. The package has no API; run it with
// go test ./e2e.
package e2e
