//go:build splashfaults

package worker_test

import (
	"errors"
	"testing"

	"github.com/splashv5/conform/impl/profile"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/impl/worker"
	"github.com/splashv5/conform/impl/worker/workertest"
)

const typed = profile.ToolJSONTyped

// Spec: WRK-005, PRF-032, PRF-025, PRF-026
func TestFaultsOfTheTypedHelper(t *testing.T) {
	g := profileGrant(typed, 5, 0)
	invoke := func(fault worker.Fault, in string) (string, error) {
		r := faultRig(t, fault, g)
		return r.send(r.host.Invoke("r1", typed, workertest.JSON(in)))
	}
	wantAdapter := func(what string, err error, kind worker.AdapterErrorKind) {
		t.Helper()
		if !errors.Is(err, worker.ErrAdapter) || worker.AdapterKindOf(err) != kind {
			t.Fatalf("%s: %v, want an adapter error %v", what, err, kind)
		}
	}
	// Without a fault the helper refuses what does not decode and a null output; a fault of
	// another part of the helper changes neither.
	for _, fault := range []worker.Fault{0, worker.FaultTypedServesDispatch} {
		for _, in := range []string{`["ab",2,true]`, `{"text":5,"repeat":2}`, `{"text":"ab","repeat":2,"x":1}`} {
			_, err := invoke(fault, in)
			wantAdapter(in, err, worker.AdapterInvalidJSONInput)
		}
		_, err := invoke(fault, `{"text":"ab","repeat":0}`)
		wantAdapter("repeat 0", err, worker.AdapterInvalidJSONOutput)
	}
	// typed-ignore-decode-error: what the decoder read is used, so a positional form with an
	// extra element and an unknown member are answered, and a text of the wrong type becomes
	// empty.
	for in, want := range map[string]string{
		`["ab",2,true]`:                  `result json:{"count":2,"text":"abab"}`,
		`{"text":"ab","repeat":2,"x":1}`: `result json:{"count":2,"text":"abab"}`,
		`{"text":5,"repeat":2}`:          `result json:{"count":2,"text":""}`,
	} {
		if got, err := invoke(worker.FaultTypedIgnoreDecodeError, in); err != nil || got != want {
			t.Errorf("ignore-decode-error, %s: %q %v, want %q", in, got, err, want)
		}
	}
	// typed-unchecked-output: the null output passes the helper, and the runtime's result
	// validation refuses it as a protocol error instead.
	_, err := invoke(worker.FaultTypedUncheckedOutput, `{"text":"ab","repeat":0}`)
	if !errors.Is(err, protocol.ErrInvalidJsonEnvelope) || worker.AdapterKindOf(err) == worker.AdapterInvalidJSONOutput {
		t.Fatalf("unchecked output: %v, want the runtime's InvalidJsonEnvelope", err)
	}
	// typed-serves-dispatch: a dispatch is answered instead of refused for want of a contract.
	for _, fault := range []worker.Fault{0, worker.FaultTypedServesDispatch} {
		r := faultRig(t, fault, g)
		got, err := r.send(r.host.Dispatch("d1", typed, "op-1", workertest.JSON(`{"text":"ab","repeat":2}`)))
		if fault == 0 {
			if !errors.Is(err, worker.ErrDurableOperationContractNotDeclared) {
				t.Fatalf("dispatch: %q %v", got, err)
			}
			continue
		}
		if want := `operation_result succeeded json:{"count":2,"text":"abab"}`; err != nil || got != want {
			t.Fatalf("dispatch with typed-serves-dispatch: %q %v, want %q", got, err, want)
		}
	}
}
