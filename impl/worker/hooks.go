package worker

import (
	"context"

	"github.com/splashv5/conform/impl/authorizer"
	"github.com/splashv5/conform/impl/journal"
	"github.com/splashv5/conform/impl/protocol"
)

// testOnlyHooks is how the faulty build of this package (build tag splashfaults, files
// faults*.go) changes the runtime for the conformance suite's mutation and crash tests; see
// docs/conformance.md. Only that build has code that sets a session's hooks, so in the default
// build they are nil and every use below is one nil check that is never taken.
//
// A hook that reports handled == false leaves the step to the runtime.
type testOnlyHooks interface {
	// open may replace the parts of a session before its first frame is opened.
	open(auth *protocol.Authenticator, p *sessionParts) error
	// authorizer may wrap the session authorizer built from the manifest.
	authorizer(az *authorizer.SessionAuthorizer, journalScope string) sessionAuthorizer
	// otherMessage may answer a message that the baseline session does not handle.
	otherMessage(s *Session, m protocol.Message) (answer []byte, handled bool, err error)
	// admitCompensation may wrap the journal admission of a compensation.
	admitCompensation(s *Session, c authorizer.AuthorizedOperationCompensation, admit func() (journal.Admission, error)) func() (journal.Admission, error)
	// duplicate may answer an exact duplicate of a durable request found in the journal.
	duplicate(s *Session, stored protocol.OperationStatus, d *durableRequest) (status protocol.OperationStatus, handled bool)
	// journaledCall may replace the adapter call of a new durable request between its two
	// persistence points.
	journaledCall(ctx context.Context, s *Session, store JournalPersister, before *journal.Journal, d *durableRequest) (status protocol.OperationStatus, handled bool, err error)
	// admitDispatch may wrap the journal admission of a dispatch.
	admitDispatch(s *Session, auth authorizer.AuthorizedOperationInvocation, admit func() (journal.Admission, error)) func() (journal.Admission, error)
	// ignorePersistFailure reports whether a failed journal write is ignored: no restore, no
	// poisoning, and the flow goes on as if it had been persisted.
	ignorePersistFailure() bool
	// poisonOnFailedWrite reports whether a failed journal write poisons the session.
	poisonOnFailedWrite() bool
	// invokeWritesJournal reports whether an answered invoke (flow A) also writes the journal.
	invokeWritesJournal() bool
	// uncheckedDuplicate reports whether the answer to an exact duplicate dispatch skips the
	// check against the live grant.
	uncheckedDuplicate() bool
	// skipRejected reports whether the baseline serve loop goes on after err.
	skipRejected(err error) bool
	// cancel may act on an authorized cancellation of the running invocation r in place of
	// requesting its cancellation token.
	cancel(d *Driver, r *running, c authorizer.AuthorizedWorkerCancellation) (handled bool, err error)
	// completion may answer the completion of r in place of the driver.
	completion(d *Driver, r *running) (handled bool, err error)
	// detachOnFatal reports whether a fatal error ends the driver without waiting for the
	// running adapter.
	detachOnFatal() bool
	// unfencedEffects reports whether adapters are called without the session's fencing
	// token, as if none of them took it.
	unfencedEffects() bool
}
