package host

import (
	"testing"
)

func benchRuntime(b *testing.B, maxPending int) *Runtime {
	b.Helper()
	r, _ := newTestRuntime(b, Config{MaxPendingTools: maxPending})
	p := NewPolicy("remote")
	p.MaxCalls = 1 << 62
	mustRegister(b, r.RegisterExternalTool(p, Metadata{}))
	lp := NewPolicy("local")
	lp.MaxCalls = 1 << 62
	mustRegister(b, r.RegisterTool(lp, Metadata{}, func(req ToolRequest) (string, error) { return req.Input, nil }))
	return r
}

// runLifecycle drives n external operations through start, claim-next and complete, releasing
// and collecting each batch of maxPending so the retained records never exceed the limit.
func runLifecycle(b *testing.B, r *Runtime, n, batch int) {
	ids := make([]OperationID, 0, batch)
	for done := 0; done < n; {
		ids = ids[:0]
		for len(ids) < batch && done+len(ids) < n {
			id, err := r.Start("remote", "input")
			if err != nil {
				b.Fatal(err)
			}
			ids = append(ids, id)
		}
		for range ids {
			if _, ok := r.ClaimNextExternal(); !ok {
				b.Fatal("nothing to claim")
			}
		}
		for _, id := range ids {
			if _, err := r.CompleteExternal(id, OK("done")); err != nil {
				b.Fatal(err)
			}
			r.ReleasePromise(id)
		}
		r.CollectGarbage()
		if r.PendingTools() != 0 {
			b.Fatalf("%d records retained", r.PendingTools())
		}
		done += len(ids)
	}
}

// BenchmarkExternalLifecycle10k runs 10,000 operations per iteration with the default pending
// limit of 64; ops/s is the throughput of whole start-claim-complete cycles.
func BenchmarkExternalLifecycle10k(b *testing.B) {
	const n = 10_000
	r := benchRuntime(b, DefaultMaxPendingTools)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		runLifecycle(b, r, n, DefaultMaxPendingTools)
	}
	b.StopTimer()
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "ops/s")
	if len(r.records) > DefaultMaxPendingTools || r.audit.n > r.audit.max || len(r.audit.buf) > r.audit.max {
		b.Fatalf("memory not bounded: %d records, %d audit events", len(r.records), r.audit.n)
	}
}

// BenchmarkExternalLifecycleOne measures one start-claim-complete-collect cycle.
func BenchmarkExternalLifecycleOne(b *testing.B) {
	r := benchRuntime(b, 1)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		runLifecycle(b, r, 1, 1)
	}
}

// BenchmarkHostPumpCall measures one synchronous host-pump call.
func BenchmarkHostPumpCall(b *testing.B) {
	r := benchRuntime(b, 1)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := r.Call("local", "input"); err != nil {
			b.Fatal(err)
		}
	}
}
