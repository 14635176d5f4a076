package worker

// Deliberate faults in the session flows, persistence, admission and the cancellable driver.
// Nothing here runs unless a fault is enabled.

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

// unfencedTarget returns the revision and lease of a write that ignores the session's own
// (FaultIgnoreFence): the record's current revision and fence, read just before the write, so
// that a superseded session overwrites the journal of the session that fenced it out.
func (s *Session) unfencedTarget(ctx context.Context, store JournalPersister) (uint64, Lease) {
	expected, lease := s.revision, s.lease
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
	return expected, lease
}

// durableOutcomeEffectFirst is durableOutcome with the adapter run before the pending record
// is persisted (FaultPersistAfterEffect): an effect can happen that the journal never knew
// about.
func (s *Session) durableOutcomeEffectFirst(
	ctx context.Context, store JournalPersister, tool string, before *journal.Journal,
	run func() (protocol.OperationStatus, error),
	observe func(protocol.OperationStatus) error,
	indeterminate func(cause error) error,
) (protocol.OperationStatus, error) {
	var status protocol.OperationStatus
	runErr := guard(tool, func() (e error) {
		status, e = run()
		return e
	})
	if err := s.persist(ctx, store, before); err != nil {
		return protocol.OperationStatus{}, err
	}
	if runErr != nil {
		var we *Error
		if !errors.As(runErr, &we) && AdapterKindOf(runErr) == AdapterIndeterminate {
			return protocol.OperationStatus{}, indeterminate(runErr)
		}
		return protocol.OperationStatus{}, adapterFailure(tool, runErr)
	}
	pending := s.journal.Clone()
	if err := observe(status); err != nil {
		return protocol.OperationStatus{}, indeterminate(protocolError(StageObserve, err))
	}
	if err := s.persist(ctx, store, pending); err != nil {
		return protocol.OperationStatus{}, indeterminate(err)
	}
	return status, nil
}

// faultyDuplicate answers an exact duplicate found in the journal under the enabled faults:
// a stored pending state becomes succeeded (FaultPendingAsSuccess), and with the rerun fault
// the adapter runs again, its effect happening a second time; its outcome is ignored and the
// answer is still the stored state.
func (s *Session) faultyDuplicate(stored protocol.OperationStatus, tool string, grant protocol.CapabilityGrant,
	rerunFault Fault, rerun func() (protocol.OperationStatus, error),
) protocol.OperationStatus {
	if stored.State == protocol.StatePending && s.faults.Has(FaultPendingAsSuccess) {
		stored = protocol.Succeeded(emptyPayload(grant.Format))
	}
	if s.faults.Has(rerunFault) {
		_ = guard(tool, func() error { _, e := rerun(); return e })
	}
	return stored
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
			return nil, protocolError(StageAuthorize, err)
		}
		res, err := protocol.NewWorkerCancellationResult(c.Request(), protocol.OutcomeTooLate)
		if err != nil {
			return nil, protocolError(StageResult, err)
		}
		if err := fa.ValidateCancellationResult(c, res); err != nil {
			return nil, protocolError(StageResult, err)
		}
		return s.seal(protocol.CancellationResultMessage{Result: res})
	}
	return nil, &Error{Kind: ErrUnexpectedMessage, MessageType: string(m.Type())}
}

// cancelUnderFaults acts on an authorized cancellation of r when faults are configured: with
// FaultResultAfterAck it acknowledges at once and leaves the adapter running, with
// FaultIgnoreCancel it does nothing, and otherwise it sets the token as the driver does.
func (d *Driver) cancelUnderFaults(r *running, c authorizer.AuthorizedWorkerCancellation,
	sendOutcome func(authorizer.AuthorizedWorkerCancellation, protocol.WorkerCancellationOutcome) error,
) error {
	switch faults := d.session.faults; {
	case faults.Has(FaultResultAfterAck):
		r.ackedEarly = true
		return sendOutcome(c, protocol.OutcomeAcknowledged)
	case faults.Has(FaultIgnoreCancel):
		return nil
	}
	r.token.request()
	return nil
}

// completeAfterEarlyAck writes the result of an invocation whose cancellation was already
// acknowledged (FaultResultAfterAck). The authorizer would refuse a result after an
// acknowledgement, so it is not asked.
func (d *Driver) completeAfterEarlyAck(r *running, send func(protocol.Message) error) error {
	if r.completion.Acknowledged {
		return nil
	}
	inv := r.authorized.Invocation()
	result, err := protocol.NewToolResult(inv.SessionID, inv.RequestID, r.completion.Payload)
	if err != nil {
		return protocolError(StageResult, err)
	}
	return send(protocol.ResultMessage{Result: result})
}
