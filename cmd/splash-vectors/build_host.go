package main

import (
	"encoding/hex"
	"sort"

	"github.com/splashv5/conform/vectors/vectorfmt"
)

// hostFlagNotes explains the flags of host_scenarios.json.
var hostFlagNotes = map[string]string{
	"Lifecycle":         "An allowed cell of the host-call × state table.",
	"LifecycleRefusal":  "A host call refused because of the operation's state.",
	"UnknownOperation":  "A host call naming an operation ID that was never issued.",
	"Retry":             "Retries of a claimed operation and the attempt limit.",
	"Deadline":          "Deferred deadlines: remaining time, expiry and late results.",
	"Streaming":         "Stream chunks and their limits.",
	"Cancellation":      "Cancellation requests, confirmation and direct cancel.",
	"CancellationRace":  "A result that arrives after a cancellation request wins.",
	"GarbageCollection": "Released promises, garbage collection and orphans.",
	"IdempotencyKey":    "Idempotency keys derived from the nonce label and the reservation sequence.",
	"Reservation":       "Reservation checks, denials and the reservation sequence.",
	"OutputRules":       "Terminal output checks: size, JSON envelope, host failures.",
	"Reconcile":         "Reconcile requests and applying a worker's status.",
	"Await":             "Awaiting operations from a script.",
	"Pump":              "Running host-pump operations.",
	"Registration":      "Tool registration checks and their order.",
	"AuditRing":         "The audit ring's capacity, eviction counter, clearing and export cursor.",
	"Lease":             "Capability leases: issuing, activation and reservation under a lease.",
}

func init() {
	for k, v := range hostFlagNotes {
		flagNotes[k] = v
	}
}

// hostClockStart is the fake clock's start in Unix milliseconds.
const hostClockStart = 1_700_000_000_000

func buildHostScenarios(c *checker) (string, any, *fileBuilder) {
	b := newFileBuilder(vectorfmt.HostScenariosFile, c)
	g := vectorfmt.HostScenarioGroup{Type: vectorfmt.HostScenarioType, Tests: []vectorfmt.HostScenarioTest{}}
	for _, row := range hostRows() {
		firstErr := ""
		for _, s := range row.steps {
			if s.Expect.Error != "" {
				firstErr = s.Expect.Error
				break
			}
		}
		t := vectorfmt.HostScenarioTest{
			Tools: []vectorfmt.HostTool{},
			Config: vectorfmt.HostConfig{SessionID: hostSession, NonceHex: hex.EncodeToString([]byte(hostNonce)),
				NonceLabel: indNonceLabel(hostSession, hostNonce), ClockStartMillis: hostClockStart, MaxPendingTools: row.maxPending,
				MaxTools: row.maxTools, MaxCatalogBytes: row.maxCatalogBytes},
		}
		if row.noNonce {
			t.Config.NoNonce, t.Config.NonceHex, t.Config.NonceLabel = true, "", ""
		}
		for _, s := range row.steps {
			t.Steps = append(t.Steps, vectorfmt.HostStep(s))
		}
		names := append([]string{}, row.tools...)
		sort.Strings(names)
		for _, n := range names {
			tool, ok := hostTools[n]
			if !ok {
				b.failf("%q: unknown tool %q", row.comment, n)
			}
			t.Tools = append(t.Tools, tool)
		}
		for i := range t.Steps {
			if t.Steps[i].Expect.Settlements == nil {
				t.Steps[i].Expect.Settlements = []vectorfmt.HostSettlement{}
			}
			if t.Steps[i].Expect.Audit == nil {
				t.Steps[i].Expect.Audit = []vectorfmt.HostAuditEvent{}
			}
		}
		t.Case = b.newCase(row.meta, firstErr)
		g.Tests = append(g.Tests, t)
	}
	doc := vectorfmt.HostScenarios{TestGroups: []vectorfmt.HostScenarioGroup{g}}
	doc.Header = b.header()
	return b.name, doc, b
}
