package transport

import (
	"errors"
	"io"
	"time"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/protocol"
)

// ProcessConfig describes a worker process for StartProcess.
type ProcessConfig struct {
	// Path is the worker executable and Args its arguments. Neither ever carries key
	// material: the session key reaches the worker only through the bootstrap on its
	// standard input.
	Path string
	Args []string
	// Env is the worker's environment; nil inherits the host's (as os/exec does). It never
	// carries key material either.
	Env []string
	// Dir is the worker's working directory; "" is the host's.
	Dir string
	// Stderr receives the worker's standard error; nil discards it.
	Stderr io.Writer
	// SessionID is the session the worker will serve (a token).
	SessionID string
	// Mode is the number mode in which the host decodes worker frames; 0 means
	// canonjson.Preserve.
	Mode canonjson.Mode
	// AuthOptions adjust the host authenticator, for example
	// protocol.AllowNonPortableNumbers to play a host build that keeps number text.
	AuthOptions []protocol.AuthenticatorOption
	// Clock times the deadlines; nil means SystemClock.
	Clock Clock
	// SessionDeadline, when positive, bounds the worker's whole life: when it elapses the
	// worker is killed and every later invocation is reported SessionDeadlineElapsed.
	SessionDeadline time.Duration
}

// Errors of the process supervisor.
var (
	// ErrProcessUnsupported: the platform cannot run a supervised worker process.
	ErrProcessUnsupported = errors.New("transport: supervised worker processes are not supported on this platform")
	// ErrSupervisionArmed: BeginInvocation was called while another invocation is supervised.
	ErrSupervisionArmed = errors.New("transport: an invocation deadline is already armed")
	// ErrUnknownSupervision: FinishInvocation was given a token that is not the armed one.
	ErrUnknownSupervision = errors.New("transport: unknown supervision token")
)
