package host

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/splashv5/conform/conformance"
	"github.com/splashv5/conform/conformance/driver"
	"github.com/splashv5/conform/impl/protocol"
)

// T is the context of one running check: its driver, the fake workers it started and its
// verdict.
type T struct {
	check    *Check
	run      *runState
	side     *conformance.SideChannel
	drv      *driver.Process
	features []string
	workers  []*fakeWorker
	// workDir and tmpDir are the driver's fresh working directory and TMPDIR (freshDirChecks).
	workDir, tmpDir string
	sessions        int
	// durable is the last durable command sent (dispatch, reconcile, step, compensate or
	// recover): the request id its frame must carry.
	durable struct{ op, requestID string }

	conformance.T
}

// Open starts the driver and asks for its features (HDR-010); the check is SKIP (HDR-011) when
// the driver does not declare one it needs.
func (t *T) Open() {
	side, err := conformance.OpenSideChannel(t.run.Dir, strings.ToLower(t.check.ID)+"-", "w.sock", 4)
	if err != nil {
		t.Internal(err)
	}
	t.side = side
	var d *driver.Process
	if slices.Contains(freshDirChecks, t.check.ID) {
		d, err = t.startInFreshDirs()
	} else {
		d, err = driver.Start(t.run.driver, t.run.Env, "")
	}
	t.drv = driver.Opened(&t.T, "driver", d, err)
	t.features = driver.Hello(&t.T, t.call)
	driver.RequireFeatures(&t.T, "the driver", t.features, t.check.Features)
}

// call sends a command and waits for its outcome.
func (t *T) call(c map[string]any) driver.Outcome { return t.await(t.sendCommand(c)) }

// sendCommand sends a command without waiting.
func (t *T) sendCommand(c map[string]any) uint64 {
	switch op, _ := c["op"].(string); op {
	case "dispatch", "reconcile", "step", "compensate", "recover":
		t.durable.op, t.durable.requestID = op, fmt.Sprint(c["request_id"])
	}
	return t.drv.SendFor(&t.T, "driver", c, t.run.Verbose)
}

// commandText is command c as a transcript shows it: every member, each value bounded
// (conformance.CommandTranscript).
func (t *T) commandText(c map[string]any) string {
	return conformance.CommandTranscript(c, driver.ValueBound(conformance.CommandValueBytes, t.run.Verbose))
}

// await waits for the outcome of command id until the check's deadline.
func (t *T) await(id uint64) driver.Outcome { return t.awaitUntil(id, t.Deadline) }

func (t *T) awaitUntil(id uint64, deadline time.Time) driver.Outcome {
	o, err := t.drv.Await(id, deadline)
	return t.accept(id, o, err)
}

// accept ends the check when reading the outcome of command id failed, and logs it otherwise.
func (t *T) accept(id uint64, o driver.Outcome, err error) driver.Outcome {
	return t.drv.AcceptFor(&t.T, "driver", id, o, err, "one outcome line per command, for the command waited for"+t.Cite("HDR-001", "HDR-002", "HDR-003"), t.run.Verbose)
}

// manifest returns a manifest for a fresh session id with grants.
func (t *T) manifest(grants ...protocol.CapabilityGrant) protocol.CapabilityManifest {
	t.sessions++
	sid := fmt.Sprintf("hconf-%s-%d", strings.ToLower(strings.ReplaceAll(t.check.ID, "-", "")), t.sessions)
	m, err := protocol.NewCapabilityManifest(sid, grants)
	if err != nil {
		t.Internal(err)
	}
	return m
}

// deadlineMS is the exchange deadline the checks give the driver.
const deadlineMS = 400

// workerScope is the journal scope of the fake worker, given in every start (HDR-020): not the
// reference worker's default, so that a host that does not use the scope given is seen.
const workerScope = "hconf-tenant"

// startCommand is a start command for the fake worker (extra are more fake-worker arguments)
// with manifest m and the fields of more.
func (t *T) startCommand(m protocol.CapabilityManifest, more map[string]any, extra ...string) map[string]any {
	cmd := append(slices.Clone(t.run.fake), t.side.Sock)
	c := map[string]any{"op": "start", "command": append(cmd, extra...), "manifest": rawJSON(m.AppendJSON(nil)),
		"deadline_ms": deadlineMS, "scope": workerScope}
	for k, v := range more {
		c[k] = v
	}
	return c
}

// startWorker asks the driver to start the fake worker for manifest (extra are more fake-worker
// arguments) and returns it once its bootstrap was read; the start outcome is left pending.
func (t *T) startWorker(m protocol.CapabilityManifest, extra ...string) (*fakeWorker, uint64) {
	return t.startWorkerWithin(m, deadlineMS, extra...)
}

// startWorkerWithin is startWorker with the exchange deadline ms.
func (t *T) startWorkerWithin(m protocol.CapabilityManifest, ms int, extra ...string) (*fakeWorker, uint64) {
	id := t.sendCommand(t.startCommand(m, map[string]any{"deadline_ms": ms}, extra...))
	w := t.acceptWorker("the driver starts the given worker command" + t.Cite("HDR-020"))
	return w, id
}

// session starts a worker, checks its open_session and the start outcome.
func (t *T) session(grants ...protocol.CapabilityGrant) *fakeWorker {
	m := t.manifest(grants...)
	w, id := t.startWorker(m)
	w.recv(protocol.TypeOpenSession)
	if o := t.await(id); !o.OK {
		t.Failf("start answered with ok"+t.Cite("HDR-020"), string(o.Raw()))
	}
	return w
}

// invoke sends an invoke command without waiting for its outcome.
func (t *T) invoke(requestID, tool string, p protocol.ToolPayload) uint64 {
	return t.sendCommand(map[string]any{"op": "invoke", "request_id": requestID, "tool": tool, "payload": rawJSON(p.AppendJSON(nil))})
}

// expectError waits for the outcome of id, which must be an error.
func (t *T) expectError(id uint64, why string) driver.Outcome {
	o := t.await(id)
	if o.OK {
		t.Failf("an error outcome: "+why, "ok "+conformance.Clip(string(o.Raw()), 200))
	}
	return o
}

// rawJSON marks bytes as JSON for encoding/json.
type rawJSON []byte

// MarshalJSON returns the bytes.
func (r rawJSON) MarshalJSON() ([]byte, error) { return r, nil }
