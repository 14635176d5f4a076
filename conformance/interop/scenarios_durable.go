package interop

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/driver"
	"github.com/splashv5/conform/impl/protocol"
)

// maxEffectLog bounds the bytes of an effect log the runner reads.
const maxEffectLog = 1 << 20

// effects returns the effect log as "effect KEY" and "compensation KEY CMP-KEY" lines, sorted
// (PRF-014, PRF-015, PRF-018), without the fence lines of PRF-035.
func (t *T) effects() []string {
	f, err := os.Open(t.effectsPath())
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Internal(err)
	}
	defer f.Close()
	data, _ := io.ReadAll(io.LimitReader(f, maxEffectLog))
	var out []string
	for _, line := range bytes.Split(data, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var e struct {
			Kind            string `json:"kind"`
			OperationKey    string `json:"operation_key"`
			CompensationKey string `json:"compensation_key"`
		}
		if json.Unmarshal(line, &e) != nil {
			t.Failf("an effect log of JSON lines"+t.Cite("PRF-018"), conformance.Clip(string(line), 200))
		}
		if e.Kind == "fence" {
			continue // a fencing token shown to the effect log, not an effect (PRF-035)
		}
		out = append(out, strings.TrimSpace(e.Kind+" "+e.OperationKey+" "+e.CompensationKey))
	}
	slices.Sort(out)
	return out
}

// expectEffects requires the effect log to hold exactly want (sorted): one effect per operation
// key, none for refused work (IOP-005).
func (t *T) expectEffects(why string, want ...string) {
	slices.Sort(want)
	if got := t.effects(); !slices.Equal(got, want) {
		if len(slices.Compact(slices.Clone(got))) < len(got) {
			// The same effect twice: the worker performed a duplicate it had to answer from its
			// journal (WRK-041, PRF-015), whatever the host sent.
			t.blameHint = &blameHint{side: WorkerSide, why: "the worker's effect log holds one effect twice: a duplicate must be answered from the journal" + t.Cite("WRK-041", "PRF-015")}
		}
		t.Failf(fmt.Sprintf("the effect log %q %s", want, why), fmt.Sprintf("%q", got))
	}
}

// dispatch runs one runner-dictated durable exchange (HDR-026) and returns its outcome.
func (t *T) dispatch(requestID, key, input string) driver.Outcome {
	return t.call(map[string]any{"op": "dispatch", "request_id": requestID, "tool": toolDurable, "key": key,
		"payload": payloadJSON(protocol.JSONPayload(jsonValue(input)))})
}

// succeeded is the status of a dispatch of key with {"value":value} (PRF-008).
func succeeded(key, value string) string {
	return string(protocol.Succeeded(protocol.JSONPayload(jsonValue(`{"operation_key":"` + key + `","value":` + value + `}`))).AppendJSON(nil))
}

// expectStatus requires an ok outcome with status want.
func (t *T) expectStatus(what string, o driver.Outcome, want string) {
	if !o.OK || string(o.Status) != want {
		t.Failf(what+": "+want, string(o.Raw()))
	}
}

// stateDir is the host's durable state directory of the scenario (HDR-040).
func (t *T) stateDir() string { return filepath.Join(t.side.Dir, "host-state") }

// ledgerSession starts a session whose host keeps its ledger in the scenario's state directory.
func (t *T) ledgerSession() *relay {
	return t.start(protocol.BaselineSession, map[string]any{"state": t.stateDir()}, durableGrant())
}

// step runs one durable step (HDR-041) and returns the operation key and status.
func (t *T) step(requestID, input string) (string, driver.Outcome) {
	o := t.call(map[string]any{"op": "step", "request_id": requestID, "tool": toolDurable, "payload": payloadJSON(protocol.JSONPayload(jsonValue(input)))})
	var k struct {
		Key string `json:"key"`
	}
	_ = json.Unmarshal(o.Raw(), &k)
	return k.Key, o
}

// cutNextAnswer tells the relay to kill the worker at its next answer and drop it: the effect
// happened, the host never learns it. It returns once the relay acknowledged the order, so the
// request whose answer is cut can only be sent after the relay is armed.
func (r *relay) cutNextAnswer() {
	r.mu.Lock()
	before := r.armed
	r.mu.Unlock()
	r.order(relayOrder{Cut: true})
	r.waitFor("the relay's acknowledgement of the cut", func() bool { return r.armed > before || r.done })
}

// waitCut waits until the relay killed the worker at the answer.
func (r *relay) waitCut() { r.waitFor("the worker killed at its answer", func() bool { return r.cut }) }

func durableScenarios() []*Scenario {
	durable := []string{featureInvoke, featureDurable}
	ledger := []string{featureInvoke, featureRecover}
	workerDurable := []conformance.Need{NeedDurable, NeedJournal, NeedEffects}
	workerComp := []conformance.Need{NeedDurable, NeedCompensation, NeedJournal, NeedEffects}
	return []*Scenario{
		{ID: "CNF-IOP-DURABLE-01", Title: "a durable dispatch performs one effect; a refused second exchange and a failed dispatch perform none",
			Requirements: []string{"HDR-026", "TRN-113", "PRF-008", "PRF-010", "IOP-005"}, Features: durable, Needs: workerDurable,
			Run: func(t *T) {
				t.start(protocol.BaselineSession, nil, durableGrant())
				t.expectStatus("the dispatch of op-1", t.dispatch("req-1", "op-1", `{"value":1}`), succeeded("op-1", "1"))
				if o := t.dispatch("req-2", "op-2", `{"value":2}`); o.OK {
					t.Failf("a second exchange on the session refused (TRN-113)", string(o.Raw()))
				}
				t.start(protocol.BaselineSession, nil, durableGrant())
				if o := t.dispatch("req-3", "op-3", `{"value":3,"mode":"fail"}`); !o.OK || !strings.Contains(string(o.Status), `"failed"`) {
					t.Failf(`the status "failed" for mode fail (PRF-010)`, string(o.Raw()))
				}
				t.expectEffects("after one dispatch, a refused one and a failed one", "effect op-1")
			}},
		{ID: "CNF-IOP-DURABLE-02", Title: "an exact duplicate dispatch on a fresh session is answered from the journal, with no second effect",
			Requirements: []string{"WRK-041", "HDR-026", "IOP-005"}, Features: durable, Needs: workerDurable,
			Run: func(t *T) {
				for i := 1; i <= 2; i++ {
					t.start(protocol.BaselineSession, nil, durableGrant())
					t.expectStatus(fmt.Sprintf("dispatch %d of op-1", i), t.dispatch(fmt.Sprintf("req-%d", i), "op-1", `{"value":1}`), succeeded("op-1", "1"))
				}
				t.expectEffects("after a dispatch and its exact duplicate", "effect op-1")
			}},
		{ID: "CNF-IOP-DURABLE-03", Title: "after the worker is killed with its answer lost, reconciliation on a fresh session reports the effect, which happened once",
			Requirements: []string{"HDR-027", "RUN-187", "PRF-013", "IOP-005"}, Features: durable, Needs: workerDurable,
			Run: func(t *T) {
				r := t.start(protocol.BaselineSession, nil, durableGrant())
				r.cutNextAnswer()
				if o := t.dispatch("req-1", "op-1", `{"value":1}`); o.OK {
					t.Failf("an error: the worker died before its answer reached the host", string(o.Raw()))
				}
				r.waitCut()
				r = t.start(protocol.BaselineSession, nil, durableGrant())
				o := t.call(map[string]any{"op": "reconcile", "request_id": "req-2", "tool": toolDurable, "key": "op-1"})
				r.settle(time.Second, func() bool { return r.lines[HostSide] >= 2 })
				if got := r.keysOf(protocol.TypeReconcileOperation); r.count(HostSide, protocol.TypeDispatchOperation) > 0 || !slices.Equal(got, []string{"op-1"}) {
					t.failBlaming(HostSide, "the host did not reconcile the operation whose answer was lost (HDR-027, RUN-187)",
						"one reconcile_operation of op-1 on the wire, and no dispatch", fmt.Sprintf("reconciled %q, %d dispatches", got, r.count(HostSide, protocol.TypeDispatchOperation)))
				}
				t.expectStatus("the reconciled status of op-1", o, succeeded("op-1", "1"))
				t.expectEffects("after the lost answer and its reconciliation", "effect op-1")
			}},
		{ID: "CNF-IOP-RECOVER-01", Title: "a host killed while its step's answer is lost recovers from its ledger by reconciling, never dispatching again",
			Requirements: []string{"HDR-040", "HDR-041", "HDR-042", "WFL-041", "IOP-005"}, Features: ledger, Needs: workerDurable,
			Run: func(t *T) {
				r := t.ledgerSession()
				r.cutNextAnswer()
				t.send(map[string]any{"op": "step", "request_id": "req-1", "tool": toolDurable, "payload": payloadJSON(protocol.JSONPayload(jsonValue(`{"value":1}`)))})
				r.waitCut()
				t.restartDriver()
				r = t.ledgerSession()
				o := t.call(map[string]any{"op": "recover", "request_id": "rec-1"})
				if !o.OK || !strings.Contains(string(o.Status), `"succeeded"`) {
					t.Failf("recover answered with the reconciled status succeeded (HDR-042)", string(o.Raw()))
				}
				if n := r.count(HostSide, protocol.TypeDispatchOperation); n != 0 {
					t.Failf("a reconcile_operation, never a second dispatch"+t.Cite("RUN-187"), fmt.Sprintf("%d dispatches", n))
				}
				t.expectEffects("after the host's recovery", t.effectsOfOneStep()...)
			}},
		{ID: "CNF-IOP-RECOVER-02", Title: "a step whose dispatch never reached the worker settles: the worker refuses to reconcile the unknown key, and the host then sends the recorded dispatch under the same key, with one effect",
			Requirements: []string{"WFL-043", "WFL-044", "HDR-055", "JRN-017", "WRK-060", "IOP-005"}, Features: ledger, Needs: workerDurable,
			Run: func(t *T) {
				r := t.ledgerSession()
				r.waitLines(HostSide, protocol.TypeOpenSession, 1)
				r.dropNextHostLine()
				if _, o := t.step("req-1", `{"value":1}`); o.OK {
					t.Failf("an error: the worker ended its session before the step's dispatch reached it", string(o.Raw()))
				}
				r.waitFor("the dropped dispatch", func() bool { return r.dropped })
				t.expectEffects("after a dispatch that never reached the worker")

				r = t.ledgerSession()
				if o := t.call(map[string]any{"op": "recover", "request_id": "rec-1"}); o.OK {
					t.Failf("an error: the worker refuses to reconcile a key its journal does not hold (JRN-017)", string(o.Raw()))
				}
				if code := r.exitStatus(); code != 5 {
					t.Failf("the worker's refusal of the unknown key: no answer, exit status 5"+t.Cite("WRK-060", "WRK-092"), fmt.Sprintf("exit status %d", code))
				}
				if r.count(HostSide, protocol.TypeReconcileOperation) != 1 || r.count(HostSide, protocol.TypeDispatchOperation) != 0 {
					t.Failf("one reconcile_operation and no dispatch first"+t.Cite("WFL-044"), fmt.Sprintf("%d reconciliations, %d dispatches",
						r.count(HostSide, protocol.TypeReconcileOperation), r.count(HostSide, protocol.TypeDispatchOperation)))
				}
				key := r.hostOperationKey(protocol.TypeReconcileOperation)
				// The worker's refusal (exit 5) is the one the scenario provokes: from here on, a
				// failure no frame explains is the host's recovery.
				t.blameHint = &blameHint{side: HostSide, why: "the worker refused the unknown key as it must (exit 5); settling the operation afterwards is the host's recovery" + t.Cite("WFL-043", "HDR-055")}

				t.restartDriver()
				r = t.ledgerSession()
				o := t.call(map[string]any{"op": "recover", "request_id": "rec-2"})
				t.expectStatus("the recorded dispatch of "+key+" after the refusal (WFL-043, HDR-055)", o, succeeded(key, "1"))
				if got := r.hostOperationKey(protocol.TypeDispatchOperation); got != key {
					t.Failf("the dispatch under the recorded key "+key+" (WFL-043)", got)
				}
				t.expectEffects("after the recorded dispatch", "effect "+key)

				t.ledgerSession()
				next, o := t.step("req-2", `{"value":2}`)
				t.expectStatus("the step after the recovery", o, succeeded(next, "2"))
				t.expectEffects("after the next step", "effect "+key, "effect "+next)
			}},
		{ID: "CNF-IOP-COMP-01", Title: "a compensation performs one compensation effect bound to the worker's scope; a second one is refused by the host",
			Requirements: []string{"HDR-043", "HDR-044", "JRN-008", "PRF-015", "IOP-005"}, Features: []string{featureInvoke, featureRecover, featureCompensate}, Needs: workerComp,
			Run: func(t *T) {
				t.ledgerSession()
				key, o := t.step("req-1", `{"value":1}`)
				t.expectStatus("the step", o, succeeded(key, "1"))
				t.ledgerSession()
				o = t.call(map[string]any{"op": "compensate", "request_id": "cmp-1", "key": key, "payload": payloadJSON(protocol.JSONPayload(jsonValue(`{"value":"undo"}`)))})
				if !o.OK || !strings.Contains(string(o.Status), `"succeeded"`) {
					t.Failf("the compensation succeeded (HDR-043)", string(o.Raw()))
				}
				cmpKey := compensationKey(o)
				t.ledgerSession()
				o = t.call(map[string]any{"op": "compensate", "request_id": "cmp-2", "key": key, "payload": payloadJSON(protocol.JSONPayload(jsonValue(`{"value":"undo"}`)))})
				if o.OK || o.Error != "Denied" {
					t.Failf(`"Denied" for a second compensation (HDR-044)`, string(o.Raw()))
				}
				t.expectEffects("after one compensation", "effect "+key, "compensation "+key+" "+cmpKey)
			}},
		{ID: "CNF-IOP-COMP-02", Title: "a compensation whose answer was lost is delivered again under its key, and the worker answers the duplicate without a second effect",
			Requirements: []string{"WFL-026", "HDR-042", "PRF-015", "IOP-005"}, Features: []string{featureInvoke, featureRecover, featureCompensate}, Needs: workerComp,
			Run: func(t *T) {
				t.ledgerSession()
				key, o := t.step("req-1", `{"value":1}`)
				t.expectStatus("the step", o, succeeded(key, "1"))
				r := t.ledgerSession()
				r.cutNextAnswer()
				o = t.call(map[string]any{"op": "compensate", "request_id": "cmp-1", "key": key, "payload": payloadJSON(protocol.JSONPayload(jsonValue(`{"value":"undo"}`)))})
				if o.OK {
					t.Failf("an error: the worker died before its answer reached the host", string(o.Raw()))
				}
				r.waitCut()
				lost := r.keysOf(protocol.TypeCompensateOperation)
				r = t.ledgerSession()
				o = t.call(map[string]any{"op": "recover", "request_id": "rec-1"})
				r.settle(time.Second, func() bool { return len(r.keys[string(protocol.TypeCompensateOperation)]) > 0 })
				if again := r.keysOf(protocol.TypeCompensateOperation); len(lost) != 1 || !slices.Equal(again, lost) {
					t.failBlaming(HostSide, "the host did not deliver the lost compensation again under its compensation key (WFL-026)",
						fmt.Sprintf("the compensation delivered again under the key of the lost one, %q", lost), fmt.Sprintf("%q", again))
				}
				if !o.OK || !strings.Contains(string(o.Status), `"succeeded"`) {
					t.Failf("recover answered with the compensation's status (HDR-042)", string(o.Raw()))
				}
				t.expectEffects("after the redelivered compensation", "effect "+key, "compensation "+key+" "+compensationKey(o))
			}},
	}
}

// dropNextHostLine tells the relay to keep the host's next line from the worker and end the
// worker's input instead, so that the host writes a frame no worker ever sees, and waits until
// the relay is armed.
func (r *relay) dropNextHostLine() {
	r.mu.Lock()
	before := r.armed
	r.mu.Unlock()
	r.order(relayOrder{Drop: true})
	r.waitFor("the relay armed to drop the host's next line", func() bool { return r.armed > before || r.done })
}

// hostOperationKey returns the operation key of the first host frame of type typ the relay
// recorded, or "" when there is none.
func (r *relay) hostOperationKey(typ protocol.MessageType) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rec := range r.records {
		if rec.Side != HostSide || rec.Type != string(typ) {
			continue
		}
		var f struct {
			Message struct {
				Request struct {
					OperationKey string `json:"operation_key"`
				} `json:"request"`
			} `json:"message"`
		}
		_ = json.Unmarshal([]byte(rec.Line), &f)
		return f.Message.Request.OperationKey
	}
	return ""
}

// effectsOfOneStep is the effect log after the scenario's one step: one effect, whatever key
// the host derived for it.
func (t *T) effectsOfOneStep() []string {
	got := t.effects()
	if len(got) == 1 && strings.HasPrefix(got[0], "effect ") {
		return got
	}
	return []string{"effect (the step's key)"}
}

// compensationKey returns the compensation key a compensation's status payload names (PRF-015).
func compensationKey(o driver.Outcome) string {
	var st struct {
		Payload struct {
			Value struct {
				CompensationKey string `json:"compensation_key"`
			} `json:"value"`
		} `json:"payload"`
	}
	_ = json.Unmarshal(o.Status, &st)
	return st.Payload.Value.CompensationKey
}
