package transport_test

import (
	"context"
	"errors"
	"io"
	"strconv"
	"testing"
	"time"

	"github.com/splashv5/conform/impl/host"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/transport"
)

// wideManifest grants toolText enough calls to use every identity slot of a session.
func wideManifest(t *testing.T) protocol.CapabilityManifest {
	t.Helper()
	m, err := protocol.NewCapabilityManifest(testSession, []protocol.CapabilityGrant{grant(toolText, protocol.FormatText, 2*protocol.MaxSessionRequestIDs)})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// Spec: TRN-112
// The coordinator keeps an identity slot for the cancellation of every invocation it starts
// while one is free: with 1,022 identities retained the next invocation can still be
// cancelled; with 1,023 the invoke takes the last slot, so its cancellation is refused before
// the authorizer is asked and nothing is written, while its result is still accepted.
func TestCoordinatorKeepsACancelSlot(t *testing.T) {
	hostAuth, workerAuth := authPair(t, testSession)
	c, line, err := transport.NewCoordinator(wideManifest(t), hostAuth)
	if err != nil {
		t.Fatal(err)
	}
	k := &coord{t: t, c: c, worker: workerAuth}
	openAs(t, workerAuth, line, protocol.TypeOpenSession)
	for i := range protocol.MaxSessionRequestIDs - 2 {
		id := "r" + strconv.Itoa(i)
		k.start(id)
		k.recv(textResult(t, id, "ok"))
	}
	k.start("last-cancellable")
	if !c.CancelSlotKept() {
		t.Fatal("no slot kept with 1,022 identities retained")
	}
	k.recv(textResult(t, "last-cancellable", "ok"))
	if c.CancelSlotKept() {
		t.Fatal("a slot is reported for an idle coordinator")
	}
	k.start("uncancellable")
	if c.CancelSlotKept() {
		t.Fatal("a slot is reported after the invoke took the last one")
	}
	out, err := c.Cancel("c1", "uncancellable", toolText)
	if !errors.Is(err, transport.ErrCancelSlotUnavailable) || out.Line != nil || c.Phase() != transport.PhaseActive {
		t.Fatalf("cancel: %v, line %q, phase %s", err, out.Line, c.Phase())
	}
	if out := k.recv(textResult(t, "uncancellable", "ok")); len(out.Events) != 1 || out.Events[0].Err != nil {
		t.Fatalf("result after the refused cancellation: %+v", out)
	}
}

// Spec: TRN-112
// A supervised session asked to cancel an invocation that has no cancellation slot contains
// the worker instead: nothing is sent, the worker is terminated, the session is poisoned, the
// outcome is indeterminate and the runtime's operation stays cancellation-requested, never
// confirmed.
func TestSupervisedContainsWithoutACancelSlot(t *testing.T) {
	m := wideManifest(t)
	log := &eventLog{}
	mux, w := newMultiplexedPairWith(t, &m, func(out io.Writer) io.Writer { return loggedWriter{out, log} })
	ctx := context.Background()
	for i := range protocol.MaxSessionRequestIDs - 1 {
		id := "r" + strconv.Itoa(i)
		p, err := mux.Start(textInvocation(t, id, "x"))
		if err != nil {
			t.Fatal(err)
		}
		if !p.Cancellable() {
			t.Fatalf("invocation %d has no cancellation slot", i)
		}
		w.expect(protocol.TypeInvoke)
		w.send(textResult(t, id, "ok"))
		if _, err := p.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	sup := newFakeSupervisor(log)
	s, err := transport.NewSupervisedSession(mux, sup, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	rt, inv := claimed(t, toolText, "x")
	if err := s.StartExternalTool(inv, "final"); err != nil {
		t.Fatal(err)
	}
	w.expect(protocol.TypeInvoke)
	req, err := rt.RequestExternalCancellation(inv.ID)
	if err != nil {
		t.Fatal(err)
	}
	err = s.RequestExternalToolCancellation(req, "cancel-final")
	var e *transport.Error
	if !errors.As(err, &e) || e.Kind != transport.ErrIndeterminate || e.Cause != transport.CauseContained || e.ExternalID != inv.ID {
		t.Fatalf("cancellation without a slot: %v", err)
	}
	if !errors.Is(err, transport.ErrCancelSlotUnavailable) || sup.terminated != 1 || !s.Poisoned() {
		t.Fatalf("terminated %d, poisoned %v", sup.terminated, s.Poisoned())
	}
	if info, ok := rt.Operation(inv.ID); !ok || info.State != host.StateCancellationRequested {
		t.Fatalf("operation = %+v", info)
	}
	for _, entry := range log.list() {
		if entry == "write:cancel" {
			t.Fatal("a cancel frame was written")
		}
	}
}
