// Command host-e2e runs one external tool call from end to end and prints each step: a script
// starts conf.slow.cancellable and suspends on its promise; the host claims the operation,
// launches the reference worker under a process supervisor (the session key travels only in
// the bootstrap on the worker's standard input), dispatches the invocation over the supervised
// multiplexed transport, streams a progress chunk into the runtime, applies the worker's
// authenticated result and resumes the script.
//
//	go build -o splash-worker ./cmd/splash-worker
//	go run ./docs/examples/host-e2e -worker ./splash-worker
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/splashv5/conform/impl/host"
	"github.com/splashv5/conform/impl/profile"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/script"
	"github.com/splashv5/conform/impl/transport"
)

// source is the script: it starts the external tool, awaits it and decorates the answer.
const source = `use mod.tool
let answer = tool.start("conf.slow.cancellable", "20").await()
answer + ", checked by the script"
`

func main() {
	workerPath := flag.String("worker", "./splash-worker", "path of the splash-worker binary")
	flag.Parse()
	if err := run(os.Stdout, *workerPath); err != nil {
		fmt.Fprintln(os.Stderr, "host-e2e:", err)
		os.Exit(1)
	}
}

// run performs the whole flow against the worker at workerPath and reports it on out.
func run(out io.Writer, workerPath string) error {
	// The runtime: one external tool that may stream host-visible chunks.
	rt, err := host.New(host.Config{})
	if err != nil {
		return err
	}
	policy := host.NewPolicy(profile.ToolSlowCancellable).WithStream(host.DefaultStreamPolicy())
	if err := rt.RegisterExternalTool(policy, host.Metadata{}); err != nil {
		return err
	}
	sess, err := host.NewScriptSession(rt, script.Config{})
	if err != nil {
		return err
	}
	ev, err := sess.Eval(source)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "script: suspended on promise %d\n", ev.Awaiting)

	// The host claims the queued operation. The idempotency key stays on the host.
	inv, ok := rt.ClaimNextExternal()
	if !ok {
		return errors.New("nothing to claim")
	}
	fmt.Fprintf(out, "host: claimed operation %s: %s(%q), attempt %d\n", inv.ID, inv.Name, inv.Input, inv.Attempt)

	// The worker: its own process group, a fresh key written in the bootstrap, then the
	// multiplexed transport (which sends open_session) under an invocation deadline.
	const session = "example-session"
	proc, err := transport.StartProcess(transport.ProcessConfig{Path: workerPath, SessionID: session, Stderr: os.Stderr})
	if err != nil {
		return err
	}
	defer proc.Terminate() // a no-op once the worker has been reaped
	manifest, err := protocol.NewCapabilityManifest(session, []protocol.CapabilityGrant{protocol.TextGrant(profile.ToolSlowCancellable)})
	if err != nil {
		return err
	}
	mux, err := transport.NewMultiplexed(manifest, proc.HostAuthenticator(), proc.Output(), proc.Input())
	if err != nil {
		return err
	}
	s, err := transport.NewSupervisedSession(mux, proc, 10*time.Second)
	if err != nil {
		return err
	}
	if err := s.StartExternalTool(inv, "request-1"); err != nil {
		return err
	}
	fmt.Fprintf(out, "host: invoke request-1 sent to %s\n", session)
	chunk, err := rt.PushExternalChunk(inv.ID, "request-1 is running")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "host: stream chunk %d: %s\n", chunk.ChunkIndex, chunk.Text)

	// Wait for the worker, apply its result to the runtime, resume the script.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		if err := s.Wait(ctx); err != nil {
			return err
		}
		p, err := s.PollExternalTool(rt)
		if err != nil {
			return err // an indeterminate transport failure: reconcile before any retry
		}
		if p.Kind == transport.SupervisedIndeterminate {
			return fmt.Errorf("outcome unknown (%s): the operation stays pending", p.Cause)
		}
		if p.Poll.Kind == transport.ExternalPending {
			continue
		}
		if p.Poll.Kind != transport.ExternalCompleted {
			return fmt.Errorf("unexpected worker event %s", p.Poll.Kind)
		}
		fmt.Fprintf(out, "worker: result %q\n", p.Poll.Settlement.Output)
		resumed, err := sess.Resume(p.Poll.Settlement)
		if err != nil {
			return err
		}
		if resumed == nil || !resumed.Succeeded() {
			return fmt.Errorf("the script did not succeed: %v", resumed)
		}
		fmt.Fprintf(out, "script: value %q\n", resumed.Value.Text())
		break
	}

	// A graceful close: close_session, then the worker exits by itself.
	sup, err := s.Close()
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "host: %s\n", sup.(*transport.Process).Wait())
	for _, e := range rt.Audit() {
		fmt.Fprintf(out, "audit: %s\n", e.AppendJSON(nil))
	}
	return nil
}
