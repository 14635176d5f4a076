//go:build !linux

package transport

import (
	"io"
	"time"

	"github.com/splashv5/conform/impl/protocol"
)

// Process is the process supervisor; on this platform StartProcess always fails with
// ErrProcessUnsupported.
type Process struct{}

// StartProcess fails with ErrProcessUnsupported on this platform.
func StartProcess(ProcessConfig) (*Process, error) { return nil, ErrProcessUnsupported }

// SessionID returns "".
func (*Process) SessionID() string { return "" }

// Pid returns 0.
func (*Process) Pid() int { return 0 }

// HostAuthenticator returns nil.
func (*Process) HostAuthenticator() *protocol.Authenticator { return nil }

// Output returns nil.
func (*Process) Output() io.Reader { return nil }

// Input returns nil.
func (*Process) Input() io.Writer { return nil }

// CloseInput fails with ErrProcessUnsupported.
func (*Process) CloseInput() error { return ErrProcessUnsupported }

// Exited returns nil.
func (*Process) Exited() <-chan struct{} { return nil }

// BeginInvocation fails with ErrProcessUnsupported.
func (*Process) BeginInvocation(time.Duration) (SupervisionToken, error) {
	return 0, ErrProcessUnsupported
}

// FinishInvocation fails with ErrProcessUnsupported.
func (*Process) FinishInvocation(SupervisionToken) (Finish, error) {
	return Finish{}, ErrProcessUnsupported
}

// Terminate fails with ErrProcessUnsupported.
func (*Process) Terminate() (Termination, error) { return Termination{}, ErrProcessUnsupported }

// Wait returns the zero Termination.
func (*Process) Wait() Termination { return Termination{} }
