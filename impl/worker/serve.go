package worker

import (
	"context"
	"errors"
	"io"

	"github.com/splashv5/conform/impl/jsonline"
	"github.com/splashv5/conform/impl/protocol"
)

// ServeConfig is everything a worker process needs to run one session over its streams.
type ServeConfig struct {
	// Auth is the worker-role authenticator built from the bootstrap.
	Auth *protocol.Authenticator
	// Lines yields frame lines; it must read from the same buffered reader as the bootstrap.
	Lines LineReader
	// Output receives answer lines.
	Output io.Writer
	// Store loads and persists the journal and reserves fences.
	Store JournalStore
	// Registry, Limits and Admission are passed to Open.
	Registry  *Registry
	Limits    Limits
	Admission Admission
	// Opened, when set, is called once the session is open, with whether the cancellable
	// driver runs it.
	Opened func(s *Session, cancellable bool)

	hooks testOnlyHooks // set only by the faulty build
}

// Serve runs one session to its end (WRK-090 to WRK-094, CAN-023): it loads the journal,
// opens the session from the first frame line, then runs the cancellable driver when every
// granted tool is cancellable and the baseline session otherwise. Every answer is written as
// one line and flushed. Serve returns at the first rejected frame without writing anything
// for it; it returns nil after an accepted close_session and an ErrEndOfInput error when the
// input ends at a frame boundary. ExitCode maps the result to the process exit status.
func Serve(ctx context.Context, cfg ServeConfig) error {
	j, revision, err := cfg.Store.Load(ctx)
	if err != nil {
		return err
	}
	line, err := cfg.Lines.ReadLine()
	if err != nil {
		var we *Error
		if errors.As(err, &we) && we.Kind == ErrEndOfInput {
			// No session exists yet, so this end of input is not clean.
			return &Error{Kind: ErrFrame, Err: we.Err}
		}
		return err
	}
	s, err := Open(ctx, cfg.Auth, line, Config{
		Journal: j, Revision: revision, Registry: cfg.Registry, Limits: cfg.Limits,
		Admission: cfg.Admission, hooks: cfg.hooks,
	})
	if err != nil {
		return err
	}
	if AllCancellable(s) {
		if cfg.Opened != nil {
			cfg.Opened(s, true)
		}
		d, err := NewDriver(s, cfg.Lines, cfg.Output)
		if err != nil {
			return err
		}
		return d.Run()
	}
	if cfg.Opened != nil {
		cfg.Opened(s, false)
	}
	out := jsonline.NewWriter(cfg.Output)
	for {
		line, err := cfg.Lines.ReadLine()
		if err != nil {
			return err
		}
		answer, err := s.Handle(ctx, line, cfg.Store)
		if err != nil && cfg.hooks != nil && cfg.hooks.skipRejected(err) {
			continue
		}
		if err != nil {
			return err
		}
		if err := out.WriteLine(answer); err != nil {
			return &Error{Kind: ErrWrite, Err: err}
		}
	}
}
