package explore

import (
	"context"
	"testing"
	"time"

	"github.com/splashv5/conform/conformance/explore/learn"
)

// BenchmarkProcessOracle runs the first 42 words of the reference machine's transition cover
// (the fresh state and the opened baseline session, every symbol) against the reference
// worker, two at a time, and reports membership queries and process starts per second:
//
//	go test ./conformance/explore -run - -bench ProcessOracle -benchtime 2x
func BenchmarkProcessOracle(b *testing.B) {
	ref, err := ReferenceMachine()
	if err != nil {
		b.Fatal(err)
	}
	words := transitionCover(ref)[:42]
	l := referenceLauncher(b)
	oracle := learn.Parallel(2, l.Run)
	start := time.Now()
	for b.Loop() {
		if _, err := oracle.Query(context.Background(), words); err != nil {
			b.Fatal(err)
		}
	}
	took := time.Since(start).Seconds()
	starts, queries, _ := l.Counts()
	b.ReportMetric(float64(queries)/took, "queries/s")
	b.ReportMetric(float64(starts)/took, "starts/s")
}
