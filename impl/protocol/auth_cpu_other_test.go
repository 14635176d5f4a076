//go:build !unix

package protocol

import "testing"

// cpuMeter reports nothing where getrusage is unavailable.
type cpuMeter struct{}

func startCPU(*testing.B) cpuMeter { return cpuMeter{} }

func (cpuMeter) stop() {}
