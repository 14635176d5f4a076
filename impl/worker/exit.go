package worker

import (
	"errors"

	"github.com/splashv5/conform/impl/jsonline"
	"github.com/splashv5/conform/impl/storage"
)

// Exit statuses of a worker process (WRK-092).
const (
	// ExitClean: end of input at a frame boundary while idle, or an accepted close_session.
	ExitClean = 0
	// ExitUsage: invalid flags or configuration.
	ExitUsage = 2
	// ExitBootstrap: the private-pipe bootstrap is missing, short or invalid.
	ExitBootstrap = 3
	// ExitTransport: a frame could not be read, decoded or authenticated, or an answer could
	// not be written.
	ExitTransport = 4
	// ExitRejected: a request was refused by the opening checks, admission, authorization,
	// the journal, a contract check, a budget or the cancellation rules.
	ExitRejected = 5
	// ExitAdapter: an adapter failed or produced output the grant rejects, or an outcome is
	// indeterminate without a persistence failure.
	ExitAdapter = 6
	// ExitPersistence: the journal could not be loaded or persisted, the store failed at any
	// point of the session (admission included), or the session is poisoned.
	ExitPersistence = 7
	// ExitInternal: any other failure.
	ExitInternal = 8
	// ExitIntegrity: the store holds state that fails an integrity check (a value that does
	// not decode or authenticate, a rollback, a store below this machine's witness). Unlike
	// ExitPersistence, retrying does not help: an operator must repair or restore the store.
	ExitIntegrity = 9
)

// integrityKinds are the storage error kinds of ExitIntegrity: the stored state itself is
// wrong. Every other storage failure is ExitPersistence.
var integrityKinds = map[storage.ErrorKind]bool{
	storage.ErrInvalidEnvelope:            true,
	storage.ErrUnsupportedFormat:          true,
	storage.ErrInvalidKeyID:               true,
	storage.ErrInvalidAuthenticationTag:   true,
	storage.ErrRevisionMismatch:           true,
	storage.ErrRollbackDetected:           true,
	storage.ErrRevisionFloorMismatch:      true,
	storage.ErrRecordCommitmentMismatch:   true,
	storage.ErrMissingRecordCommitment:    true,
	storage.ErrUnexpectedRecordCommitment: true,
	storage.ErrEtcdRollback:               true,
	storage.ErrCorrupt:                    true,
	storage.ErrBelowWitness:               true,
}

// ExitClassName returns the class name of an exit status, as written in diagnostics.
func ExitClassName(code int) string {
	switch code {
	case ExitClean:
		return "clean"
	case ExitUsage:
		return "usage"
	case ExitBootstrap:
		return "bootstrap"
	case ExitTransport:
		return "transport"
	case ExitRejected:
		return "rejected"
	case ExitAdapter:
		return "adapter"
	case ExitPersistence:
		return "persistence"
	case ExitIntegrity:
		return "integrity"
	}
	return "internal"
}

// ExitCode returns the exit status for the error that ended a session (WRK-092): ExitClean
// for nil and for end of input while idle.
func ExitCode(err error) int {
	if err == nil {
		return ExitClean
	}
	// A failure of the store is its class wherever in the session it happens, whatever
	// wraps it (an admission that could not read or write its record is not a rejection).
	var se *storage.Error
	if errors.As(err, &se) {
		for kind := range integrityKinds {
			if errors.Is(err, kind) {
				return ExitIntegrity
			}
		}
		return ExitPersistence
	}
	var e *Error
	if !errors.As(err, &e) {
		var jl *jsonline.Error
		if errors.As(err, &jl) {
			return ExitTransport
		}
		return ExitInternal
	}
	switch e.Kind {
	case ErrEndOfInput:
		if e.Active {
			return ExitTransport
		}
		return ExitClean
	case ErrFrame, ErrWrite:
		return ExitTransport
	case ErrProtocol:
		switch e.Stage {
		case StageOpen:
			return ExitTransport
		case StageManifest, StageAuthorize, StageJournal:
			return ExitRejected
		case StageObserve, StageResult:
			return ExitAdapter
		}
		return ExitInternal
	case ErrUnexpectedOpeningMessage, ErrMissingAdapter, ErrAdmission, ErrInvalidJournalLease,
		ErrInvocationSafetyNotDeclared, ErrDurableOperationContractNotDeclared,
		ErrReconciliationBudgetExhausted, ErrReconciliationSessionBudgetExhausted,
		ErrUnexpectedMessage, ErrAdapterNotCancellable, ErrCancellationWithoutTarget,
		ErrCloseWhileInvocationActive:
		return ExitRejected
	case ErrAdapter, ErrPendingOperation, ErrPendingCompensation, ErrUnrequestedAcknowledgement,
		ErrAdapterPanicked:
		return ExitAdapter
	case ErrIndeterminateOperation, ErrIndeterminateCompensation:
		if errors.Is(e.Err, ErrJournal) || errors.Is(e.Err, ErrInvalidJournalRevision) {
			return ExitPersistence
		}
		return ExitAdapter
	case ErrJournal, ErrInvalidJournalRevision, ErrSessionPoisoned, ErrInvalidJournalEncoding,
		ErrStorage, ErrJournalFormat:
		return ExitPersistence
	case ErrInvalidTool, ErrDuplicateTool, ErrZeroPerToolReconciliationLimit,
		ErrZeroSessionReconciliationLimit:
		return ExitUsage
	}
	return ExitInternal
}
