//go:build splashfaults

package worker

// Deliberate faults in the session flows, persistence, admission and the cancellable driver.

import (
	"context"
	"errors"

	"github.com/splashv5/conform/impl/authorizer"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/journal"
	"github.com/splashv5/conform/impl/protocol"
)

// admission returns a, or with FaultAdmitReplayedSession a policy that, when a refuses a
// replayed session id, reserves a fence anyway.
func (f *Faults) admission(a Admission) Admission {
	if !f.Has(FaultAdmitReplayedSession) {
		return a
	}
	return AdmissionFunc(func(ctx context.Context, m protocol.CapabilityManifest, scope string) (uint64, error) {
		token, err := a.Admit(ctx, m, scope)
		if sa, ok := a.(*StoreAdmission); ok && errors.Is(err, ErrReplayedSession) {
			return sa.journal.ReserveFence(ctx)
		}
		return token, err
	})
}

// unfencedPersist writes j under the record's current revision and fence, read just before
// the write, instead of expected and lease (FaultIgnoreFence): a superseded session
// overwrites the journal of the session that fenced it out.
func unfencedPersist(ctx context.Context, store JournalPersister, j *journal.Journal, expected uint64, lease Lease) (uint64, error) {
	if js, ok := store.(JournalStore); ok {
		if _, rev, err := js.Load(ctx); err == nil {
			expected = rev
		}
	}
	if fr, ok := store.(interface {
		CurrentFence(context.Context) (uint64, error)
	}); ok {
		if t, err := fr.CurrentFence(ctx); err == nil && t != 0 {
			lease = Lease{t}
		}
	}
	return store.Persist(ctx, j, expected, lease)
}

// unfencedPersister is a persister with FaultIgnoreFence.
type unfencedPersister struct{ store JournalPersister }

// Persist writes j ignoring expected and lease.
func (u unfencedPersister) Persist(ctx context.Context, j *journal.Journal, expected uint64, lease Lease) (uint64, error) {
	return unfencedPersist(ctx, u.store, j, expected, lease)
}

// unfencedStore is a journal store with FaultIgnoreFence.
type unfencedStore struct{ JournalStore }

// Persist writes j ignoring expected and lease.
func (u unfencedStore) Persist(ctx context.Context, j *journal.Journal, expected uint64, lease Lease) (uint64, error) {
	return unfencedPersist(ctx, u.JournalStore, j, expected, lease)
}

// registry returns r, or a copy with its adapters wrapped: with FaultUndeclaredSafetyOK every
// adapter that declares no invocation safety claims to be read-only when the baseline
// session invokes it, with the typed-helper faults every TypedJSON adapter behaves as they
// say, and with At the durable calls reach the persistence points. The cancellable driver
// still sees the adapters as registered.
func (f *Faults) registry(r *Registry) *Registry {
	undeclaredOK := f.Has(FaultUndeclaredSafetyOK)
	typed := f.Enabled.Any(typedFaults...)
	union := f.Has(FaultSecretManifestSelectors)
	if !undeclaredOK && !typed && !union && f.At == nil {
		return r
	}
	c := NewRegistry()
	for tool, e := range r.entries {
		if undeclaredOK && e.adapter.InvocationSafety() == SafetyUndeclared {
			e.adapter = claimsSafety{e.adapter}
		}
		if h, ok := e.adapter.(typedHelper); ok && typed {
			e.adapter = h.withFaults(f.Enabled)
		}
		if union && e.cancellable == nil {
			e.adapter = manifestSelectorsAdapter{e.adapter, f}
		}
		if f.At != nil {
			e.adapter = pausingAdapter{e.adapter, f.pauses()}
		}
		c.entries[tool] = e
	}
	return c
}

// pauses tracks, for At, where a session's durable flow stands between the adapter's durable
// calls and the journal store's writes: a new record's pending state is durable when the
// adapter is called (PointAdmissionPersisted), the adapter has returned when its call returns
// without error (PointAdapterReturned), and the write after that makes the observed status
// durable (PointObservationPersisted, or PointReconciliationPersisted after a
// reconciliation).
type pauses struct {
	at    func(Point)
	armed Point // the point the next successful journal write reaches; 0 for none
}

// pauses returns the pause state of the session run with f.
func (f *Faults) pauses() *pauses {
	if f.paused == nil {
		f.paused = &pauses{at: f.At}
	}
	return f.paused
}

// durable runs the durable call of a new dispatch or compensation.
func (p *pauses) durable(call func() (protocol.OperationStatus, error)) (protocol.OperationStatus, error) {
	p.at(PointAdmissionPersisted)
	status, err := call()
	if err == nil {
		p.at(PointAdapterReturned)
		p.armed = PointObservationPersisted
	}
	return status, err
}

// written is called after each successful journal write.
func (p *pauses) written() {
	if armed := p.armed; armed != 0 {
		p.armed = 0
		p.at(armed)
	}
}

// pausingAdapter is an adapter whose durable calls reach the persistence points.
type pausingAdapter struct {
	Adapter
	p *pauses
}

// DispatchOperation runs the adapter's dispatch between the points around it.
func (a pausingAdapter) DispatchOperation(req protocol.OperationDispatchRequest, g protocol.CapabilityGrant) (protocol.OperationStatus, error) {
	return a.p.durable(func() (protocol.OperationStatus, error) { return a.Adapter.DispatchOperation(req, g) })
}

// CompensateOperation runs the adapter's compensation between the points around it.
func (a pausingAdapter) CompensateOperation(req protocol.OperationCompensationRequest, g protocol.CapabilityGrant) (protocol.OperationStatus, error) {
	return a.p.durable(func() (protocol.OperationStatus, error) { return a.Adapter.CompensateOperation(req, g) })
}

// ReconcileOperation runs the adapter's reconciliation; the next write makes it durable.
func (a pausingAdapter) ReconcileOperation(req protocol.OperationReconcileRequest, g protocol.CapabilityGrant) (protocol.OperationStatus, error) {
	status, err := a.Adapter.ReconcileOperation(req, g)
	if err == nil {
		a.p.armed = PointReconciliationPersisted
	}
	return status, err
}

// pausingStore is a journal store whose writes reach the persistence points.
type pausingStore struct {
	JournalStore
	p *pauses
}

// Persist writes j and then reaches the point the last durable call armed.
func (s pausingStore) Persist(ctx context.Context, j *journal.Journal, expected uint64, lease Lease) (uint64, error) {
	rev, err := s.JournalStore.Persist(ctx, j, expected, lease)
	if err == nil {
		s.p.written()
	}
	return rev, err
}

// claimsSafety is an adapter that claims to be read-only.
type claimsSafety struct{ Adapter }

// InvocationSafety returns ReadOnly.
func (claimsSafety) InvocationSafety() InvocationSafety { return ReadOnly }

// effectFirst is the journaled call of runDurable with the adapter run before the pending
// record is persisted (FaultPersistAfterEffect).
func (s *Session) effectFirst(ctx context.Context, store JournalPersister, before *journal.Journal, d *durableRequest) (protocol.OperationStatus, error) {
	a, err := s.adapter(d.tool)
	if err != nil {
		return protocol.OperationStatus{}, err
	}
	var status protocol.OperationStatus
	runErr := guard(d.tool, func() (e error) {
		status, e = d.run(a)
		return e
	})
	if err := s.persist(ctx, store, before); err != nil {
		return protocol.OperationStatus{}, err
	}
	if runErr != nil {
		return protocol.OperationStatus{}, d.adapterError(runErr)
	}
	pending := s.journal.Clone()
	if err := d.observe(status); err != nil {
		return protocol.OperationStatus{}, d.indeterminate(&Error{Kind: ErrProtocol, Stage: StageObserve, Err: err})
	}
	if err := s.persist(ctx, store, pending); err != nil {
		return protocol.OperationStatus{}, d.indeterminate(err)
	}
	return status, nil
}

// replaceCompensation admits a compensation under a new key for an operation that already
// has one (FaultAcceptSecondCompensationKey): it drops the operation's compensation from the
// in-memory journal and admits the new one in its place. refused is the journal's refusal,
// returned unchanged for any other reason.
func (s *Session) replaceCompensation(auth authorizer.AuthorizedOperationCompensation, refused error) (journal.Admission, error) {
	req := auth.Request()
	rec, ok := s.journal.Operation(req.OperationKey)
	if kind, _ := protocol.KindOf(refused); kind != protocol.ErrCompensationIdentityMismatch || !ok ||
		rec.Compensation == nil || rec.Compensation.CompensationKey == req.CompensationKey {
		return journal.Admission{}, refused
	}
	data, err := s.journal.ToJSON()
	if err != nil {
		return journal.Admission{}, refused
	}
	mode := s.auth.Mode()
	doc, err := canonjson.ParseValue(data, mode)
	if err != nil {
		return journal.Admission{}, refused
	}
	records, _ := doc.Get("records")
	elems := records.Elems()
	kept := make([]canonjson.Value, len(elems))
	for i, r := range elems {
		kept[i] = r
		if key, _ := r.Get("operation_key"); key.StringValue() == req.OperationKey {
			kept[i] = withMember(r, "compensation", canonjson.Null())
		}
	}
	stripped, err := journal.FromJSON(withMember(doc, "records", canonjson.Array(kept...)).JSON(), mode)
	if err != nil {
		return journal.Admission{}, refused
	}
	admission, err := stripped.AdmitCompensation(auth)
	if err != nil {
		return journal.Admission{}, err
	}
	s.journal = stripped
	return admission, nil
}

// withMember returns object v with member key set to value.
func withMember(v canonjson.Value, key string, value canonjson.Value) canonjson.Value {
	entries := append([]canonjson.Entry(nil), v.Entries()...)
	return canonjson.Object(append(entries, canonjson.Entry{Key: key, Value: value})...)
}

// cancelInBaseline answers cancel and close_session in a baseline session
// (FaultCancelInBaseline): a cancel of the last completed invocation is answered too_late,
// and close_session ends the session as a clean end of input would.
func (s *Session) cancelInBaseline(m protocol.Message) ([]byte, error) {
	switch m := m.(type) {
	case protocol.CloseSessionMessage:
		return nil, &Error{Kind: ErrEndOfInput, Err: errors.New("close_session accepted in a baseline session")}
	case protocol.CancelMessage:
		fa, ok := s.authorizer.(*faultyAuthorizer)
		if !ok {
			break
		}
		target, ok := fa.lastInvocation()
		if !ok {
			return nil, &Error{Kind: ErrCancellationWithoutTarget}
		}
		c, err := fa.AuthorizeCancellation(m.Request, target)
		if err != nil {
			return nil, &Error{Kind: ErrProtocol, Stage: StageAuthorize, Err: err}
		}
		res, err := protocol.NewWorkerCancellationResult(c.Request(), protocol.OutcomeTooLate)
		if err != nil {
			return nil, &Error{Kind: ErrProtocol, Stage: StageResult, Err: err}
		}
		if err := fa.ValidateCancellationResult(c, res); err != nil {
			return nil, &Error{Kind: ErrProtocol, Stage: StageResult, Err: err}
		}
		return s.seal(protocol.CancellationResultMessage{Result: res})
	}
	return nil, &Error{Kind: ErrUnexpectedMessage, MessageType: string(m.Type())}
}

// cancel acts on an authorized cancellation of r: with FaultResultAfterAck it acknowledges at
// once and leaves the adapter running, with FaultIgnoreCancel it does nothing.
func (f *Faults) cancel(d *Driver, r *running, c authorizer.AuthorizedWorkerCancellation) (bool, error) {
	switch {
	case f.Has(FaultResultAfterAck):
		return true, d.sendOutcome(c, protocol.OutcomeAcknowledged)
	case f.Has(FaultIgnoreCancel):
		return true, nil
	}
	return false, nil
}

// completion answers the completion of r: with FaultResultAfterAck, whose cancellation was
// already acknowledged, it writes the result without asking the authorizer (which would refuse
// a result after an acknowledgement); with FaultTooLateBeforeResult it writes too_late before
// the result it follows.
func (f *Faults) completion(d *Driver, r *running) (bool, error) {
	switch {
	case r.cancellation != nil && f.Has(FaultResultAfterAck):
		if !r.completion.Acknowledged {
			inv := r.authorized.Invocation()
			result, err := protocol.NewToolResult(inv.SessionID, inv.RequestID, r.completion.Payload)
			if err != nil {
				return true, &Error{Kind: ErrProtocol, Stage: StageResult, Err: err}
			}
			if err := d.send(protocol.ResultMessage{Result: result}); err != nil {
				return true, err
			}
		}
		d.permit()
		d.loop.last = nil
		return true, nil
	case r.cancellation != nil && !r.completion.Acknowledged && f.Has(FaultTooLateBeforeResult):
		inv := r.authorized.Invocation()
		result, err := protocol.NewToolResult(inv.SessionID, inv.RequestID, r.completion.Payload)
		if err != nil {
			return true, &Error{Kind: ErrProtocol, Stage: StageResult, Err: err}
		}
		if err := d.session.authorizer.ValidateResult(r.authorized, result); err != nil {
			return true, &Error{Kind: ErrProtocol, Stage: StageResult, Err: err}
		}
		if err := d.sendOutcome(*r.cancellation, protocol.OutcomeTooLate); err != nil {
			return true, err
		}
		d.permit()
		if err := d.send(protocol.ResultMessage{Result: result}); err != nil {
			return true, err
		}
		authorized := r.authorized
		d.loop.last = &authorized
		return true, nil
	}
	return false, nil
}
