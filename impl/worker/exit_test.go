package worker_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/splashv5/conform/impl/jsonline"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/storage"
	"github.com/splashv5/conform/impl/worker"
)

// Spec: WRK-092
func TestExitCodes(t *testing.T) {
	proto := &protocol.Error{Kind: protocol.ErrUnknownTool}
	journalFailure := &worker.Error{Kind: worker.ErrJournal, Err: errors.New("disk")}
	cases := []struct {
		err  error
		want int
		name string
	}{
		{nil, 0, "clean"},
		{&worker.Error{Kind: worker.ErrEndOfInput}, 0, "clean"},
		{&worker.Error{Kind: worker.ErrEndOfInput, Active: true}, 4, "transport"},
		{&worker.Error{Kind: worker.ErrFrame, Err: &jsonline.Error{Kind: jsonline.ErrInvalidUTF8}}, 4, "transport"},
		{&jsonline.Error{Kind: jsonline.ErrProtocol}, 4, "transport"},
		{&worker.Error{Kind: worker.ErrWrite, Err: io.ErrClosedPipe}, 4, "transport"},
		{&worker.Error{Kind: worker.ErrProtocol, Stage: worker.StageOpen, Err: proto}, 4, "transport"},
		{&worker.Error{Kind: worker.ErrProtocol, Stage: worker.StageManifest, Err: proto}, 5, "rejected"},
		{&worker.Error{Kind: worker.ErrProtocol, Stage: worker.StageAuthorize, Err: proto}, 5, "rejected"},
		{&worker.Error{Kind: worker.ErrProtocol, Stage: worker.StageJournal, Err: proto}, 5, "rejected"},
		{&worker.Error{Kind: worker.ErrUnexpectedOpeningMessage}, 5, "rejected"},
		{&worker.Error{Kind: worker.ErrMissingAdapter}, 5, "rejected"},
		{&worker.Error{Kind: worker.ErrAdmission, Err: worker.ErrReplayedSession}, 5, "rejected"},
		{&worker.Error{Kind: worker.ErrInvalidJournalLease}, 5, "rejected"},
		{&worker.Error{Kind: worker.ErrUnexpectedMessage}, 5, "rejected"},
		{&worker.Error{Kind: worker.ErrInvocationSafetyNotDeclared}, 5, "rejected"},
		{&worker.Error{Kind: worker.ErrDurableOperationContractNotDeclared}, 5, "rejected"},
		{&worker.Error{Kind: worker.ErrReconciliationBudgetExhausted}, 5, "rejected"},
		{&worker.Error{Kind: worker.ErrReconciliationSessionBudgetExhausted}, 5, "rejected"},
		{&worker.Error{Kind: worker.ErrCancellationWithoutTarget}, 5, "rejected"},
		{&worker.Error{Kind: worker.ErrCloseWhileInvocationActive}, 5, "rejected"},
		{&worker.Error{Kind: worker.ErrAdapterNotCancellable}, 5, "rejected"},
		{&worker.Error{Kind: worker.ErrAdapter, Err: worker.AdapterFailed}, 6, "adapter"},
		{&worker.Error{Kind: worker.ErrProtocol, Stage: worker.StageResult, Err: proto}, 6, "adapter"},
		{&worker.Error{Kind: worker.ErrProtocol, Stage: worker.StageObserve, Err: proto}, 6, "adapter"},
		{&worker.Error{Kind: worker.ErrIndeterminateOperation, Err: worker.AdapterIndeterminate}, 6, "adapter"},
		{&worker.Error{Kind: worker.ErrIndeterminateCompensation, Err: &worker.Error{Kind: worker.ErrProtocol, Stage: worker.StageObserve, Err: proto}}, 6, "adapter"},
		{&worker.Error{Kind: worker.ErrPendingOperation}, 6, "adapter"},
		{&worker.Error{Kind: worker.ErrPendingCompensation}, 6, "adapter"},
		{&worker.Error{Kind: worker.ErrUnrequestedAcknowledgement}, 6, "adapter"},
		{&worker.Error{Kind: worker.ErrAdapterPanicked}, 6, "adapter"},
		{journalFailure, 7, "persistence"},
		{&worker.Error{Kind: worker.ErrInvalidJournalRevision}, 7, "persistence"},
		{&worker.Error{Kind: worker.ErrSessionPoisoned}, 7, "persistence"},
		{&worker.Error{Kind: worker.ErrIndeterminateOperation, Err: journalFailure}, 7, "persistence"},
		{&worker.Error{Kind: worker.ErrIndeterminateCompensation, Err: &worker.Error{Kind: worker.ErrInvalidJournalRevision}}, 7, "persistence"},
		{&worker.Error{Kind: worker.ErrStorage}, 7, "persistence"},
		{&worker.Error{Kind: worker.ErrInvalidJournalEncoding}, 7, "persistence"},
		{&worker.Error{Kind: worker.ErrAdmission, Err: &storage.Error{Kind: storage.ErrEtcd, Err: context.DeadlineExceeded}}, 7, "persistence"},
		{&worker.Error{Kind: worker.ErrAdmission, Err: &worker.Error{Kind: worker.ErrStorage, Err: &storage.Error{Kind: storage.ErrBolt}}}, 7, "persistence"},
		{&worker.Error{Kind: worker.ErrJournal, Err: &storage.Error{Kind: storage.ErrFencingTokenRejected}}, 7, "persistence"},
		{&worker.Error{Kind: worker.ErrStorage, Err: &storage.Error{Kind: storage.ErrCorrupt}}, 9, "integrity"},
		{&worker.Error{Kind: worker.ErrAdmission, Err: &storage.Error{Kind: storage.ErrInvalidAuthenticationTag}}, 9, "integrity"},
		{&worker.Error{Kind: worker.ErrIndeterminateOperation, Err: &worker.Error{Kind: worker.ErrJournal, Err: &storage.Error{Kind: storage.ErrBelowWitness}}}, 9, "integrity"},
		{&worker.Error{Kind: worker.ErrStorage, Err: &storage.Error{Kind: storage.ErrEtcdRollback}}, 9, "integrity"},
		{&worker.Error{Kind: worker.ErrStorage, Err: &storage.Error{Kind: storage.ErrBackend, Err: &storage.Error{Kind: storage.ErrCorrupt}}}, 9, "integrity"},
		{&worker.Error{Kind: worker.ErrAdmission, Err: &storage.Error{Kind: storage.ErrBackend, Err: &storage.Error{Kind: storage.ErrEtcd}}}, 7, "persistence"},
		{&worker.Error{Kind: worker.ErrProtocol, Stage: worker.StageSeal, Err: proto}, 8, "internal"},
		{&worker.Error{Kind: worker.ErrRequiresWorkerAuthenticator}, 8, "internal"},
		{errors.New("something else"), 8, "internal"},
		{&worker.Error{Kind: worker.ErrDuplicateTool}, 2, "usage"},
	}
	for _, tc := range cases {
		got := worker.ExitCode(tc.err)
		if got != tc.want || worker.ExitClassName(got) != tc.name {
			t.Errorf("ExitCode(%v) = %d (%s), want %d (%s)", tc.err, got, worker.ExitClassName(got), tc.want, tc.name)
		}
		// Wrapping must not change the class.
		if tc.err != nil && worker.ExitCode(fmt.Errorf("ctx: %w", tc.err)) != tc.want {
			t.Errorf("wrapped %v changed class", tc.err)
		}
	}
	if worker.ExitClassName(3) != "bootstrap" {
		t.Fatal("bootstrap class name")
	}
}

// Spec: WRK-093
func TestErrorTextCarriesKindsButNoKeys(t *testing.T) {
	err := &worker.Error{Kind: worker.ErrIndeterminateOperation, OperationKey: "op-1",
		Err: &worker.Error{Kind: worker.ErrJournal, Err: errors.New("disk full")}}
	if got, want := err.Error(), "worker: IndeterminateOperation operation_key=op-1: worker: Journal: disk full"; got != want {
		t.Fatalf("message %q, want %q", got, want)
	}
	key, err2 := protocol.GenerateSessionKey()
	if err2 != nil {
		t.Fatal(err2)
	}
	defer key.Close()
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%x"} {
		if s := fmt.Sprintf(verb, key); s != "SessionKey([redacted])" {
			t.Fatalf("%s prints a session key as %q", verb, s)
		}
	}
}
