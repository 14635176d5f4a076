package journal_test

import (
	"fmt"
	"testing"

	"github.com/splashv5/conform/impl/authorizer"
	"github.com/splashv5/conform/impl/journal"
	"github.com/splashv5/conform/impl/protocol"
)

// benchTokens authorizes one dispatch per record slot, with distinct keys and small inputs.
func benchTokens(b *testing.B) []authorizer.AuthorizedOperationInvocation {
	s := wide(b)
	out := make([]authorizer.AuthorizedOperationInvocation, protocol.MaxWorkerOperationRecords)
	for i := range out {
		out[i] = s.op("calc", fmt.Sprintf("operation-%02d", i), jp(b, fmt.Sprintf(`{"left":%d,"right":22}`, i)))
	}
	return out
}

func BenchmarkJournalAdmit(b *testing.B) {
	tokens := benchTokens(b)
	j := newJournal(b, scope)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := i % len(tokens)
		if k == 0 && i > 0 {
			b.StopTimer()
			j = newJournal(b, scope)
			b.StartTimer()
		}
		if _, err := j.Admit(tokens[k]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkJournalObserve(b *testing.B) {
	tokens := benchTokens(b)
	status := protocol.Succeeded(jp(b, `{"total":42,"note":"a small result"}`))
	var j *journal.Journal
	reset := func() {
		j = newJournal(b, scope)
		for _, tok := range tokens {
			mustAdmit(b, j, tok)
		}
	}
	reset()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := i % len(tokens)
		if k == 0 && i > 0 {
			b.StopTimer()
			reset()
			b.StartTimer()
		}
		if _, err := j.Observe(tokens[k], status); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkJournalToJSON(b *testing.B) {
	tokens := benchTokens(b)
	j := newJournal(b, scope)
	for _, tok := range tokens {
		mustAdmit(b, j, tok)
		mustObserve(b, j, tok, protocol.Succeeded(jp(b, `{"total":42,"note":"a small result"}`)))
	}
	b.ReportAllocs()
	b.SetBytes(int64(j.Size()))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := j.ToJSON(); err != nil {
			b.Fatal(err)
		}
	}
}
