package authorizer_test

import (
	"fmt"
	"testing"

	"github.com/splashv5/conform/impl/authorizer"
	"github.com/splashv5/conform/impl/protocol"
)

const benchBatch = 1000 // ids per authorizer, below the 1,024 capacity

func benchAuthorizer(b *testing.B) *authorizer.SessionAuthorizer {
	g := protocol.CapabilityGrant{Tool: "calc", Format: protocol.FormatJSON, MaxCalls: 1 << 30, MaxInputBytes: 1 << 16, MaxOutputBytes: 1 << 16}
	m, err := protocol.NewCapabilityManifest(session, []protocol.CapabilityGrant{g})
	if err != nil {
		b.Fatal(err)
	}
	a, err := authorizer.New(m)
	if err != nil {
		b.Fatal(err)
	}
	return a
}

func benchIDs() []string {
	ids := make([]string, benchBatch)
	for i := range ids {
		ids[i] = fmt.Sprintf("request-%d", i)
	}
	return ids
}

func BenchmarkAuthorize(b *testing.B) {
	ids := benchIDs()
	p := jsonPayload(b, `{"left":20,"right":22,"note":"a small json payload"}`)
	a := benchAuthorizer(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%benchBatch == 0 && i > 0 {
			b.StopTimer()
			a = benchAuthorizer(b)
			b.StartTimer()
		}
		if _, err := a.Authorize(invocation(ids[i%benchBatch], "calc", p)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidateResult(b *testing.B) {
	ids := benchIDs()
	in := jsonPayload(b, `{"left":20,"right":22}`)
	out := jsonPayload(b, `{"total":42,"note":"a small json result"}`)
	var a *authorizer.SessionAuthorizer
	tokens := make([]authorizer.AuthorizedInvocation, benchBatch)
	results := make([]protocol.ToolResult, benchBatch)
	for i := range results {
		results[i] = result(ids[i], out)
	}
	refill := func() {
		a = benchAuthorizer(b)
		for i := range tokens {
			var err error
			if tokens[i], err = a.Authorize(invocation(ids[i], "calc", in)); err != nil {
				b.Fatal(err)
			}
		}
	}
	refill()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%benchBatch == 0 && i > 0 {
			b.StopTimer()
			refill()
			b.StartTimer()
		}
		if err := a.ValidateResult(tokens[i%benchBatch], results[i%benchBatch]); err != nil {
			b.Fatal(err)
		}
	}
}
