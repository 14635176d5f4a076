//go:build splashfaults

package worker

import (
	"context"

	"github.com/splashv5/conform/impl/journal"
	"github.com/splashv5/conform/impl/protocol"
)

// observationUnchecked is the journaled part of a new durable request with the failure of its
// observation write ignored (FaultAnswerUnpersistedCompensation): the admission is persisted
// and the adapter runs as usual, but an observation that cannot be persisted is answered all
// the same, and the session goes on unpoisoned.
func (s *Session) observationUnchecked(ctx context.Context, store JournalPersister, before *journal.Journal, d *durableRequest) (protocol.OperationStatus, error) {
	if err := s.persist(ctx, store, before); err != nil {
		return protocol.OperationStatus{}, err
	}
	a, err := s.adapter(d.tool)
	if err != nil {
		return protocol.OperationStatus{}, err
	}
	var status protocol.OperationStatus
	if err := guard(d.tool, func() (e error) { status, e = d.run(a); return e }); err != nil {
		return protocol.OperationStatus{}, d.adapterError(err)
	}
	pending := s.journal.Clone()
	if err := d.observe(status); err != nil {
		return protocol.OperationStatus{}, d.indeterminate(&Error{Kind: ErrProtocol, Stage: StageObserve, Err: err})
	}
	if err := s.persist(ctx, store, pending); err != nil {
		s.poisoned = false
	}
	return status, nil
}

// rerunPending runs the adapter again for an exact duplicate whose record is still pending
// (FaultRerunPendingCompensation) and answers its outcome, which is not recorded.
func (s *Session) rerunPending(d *durableRequest) (protocol.OperationStatus, bool) {
	a, err := s.adapter(d.tool)
	if err != nil {
		return protocol.OperationStatus{}, false
	}
	var status protocol.OperationStatus
	if err := guard(d.tool, func() (e error) { status, e = d.run(a); return e }); err != nil {
		return protocol.OperationStatus{}, false
	}
	return status, true
}
