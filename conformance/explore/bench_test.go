package explore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/splashv5/conform/conformance/explore/alphabet"
	"github.com/splashv5/conform/conformance/explore/learn"
	"github.com/splashv5/conform/conformance/explore/mealy"
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

// BenchmarkLearnReference learns the reference worker's machine over the whole alphabet, with
// 1, 2 and 4 processes at once, as TestReferenceMachineGolden does, and reports the seconds of
// one learning, membership queries and process starts per second (the starts include the
// restarts the restart symbol makes and the prefix runs of EXP-018) and the prefix runs:
//
//	go test ./conformance/explore -run - -bench LearnReference/parallel=2 -benchtime 1x
func BenchmarkLearnReference(b *testing.B) {
	ref, err := ReferenceMachine()
	if err != nil {
		b.Fatal(err)
	}
	for _, parallel := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("parallel=%d", parallel), func(b *testing.B) {
			var took time.Duration
			var queries, starts, probes int64
			for b.Loop() {
				l := referenceLauncher(b)
				start := time.Now()
				m, stats, err := Learn(context.Background(), l, alphabet.For(allNeeds...), parallel, 1)
				if err != nil {
					b.Fatal(err)
				}
				took += time.Since(start)
				if diffs, err := mealy.Differences(ref, m, 1); err != nil || len(diffs) > 0 {
					b.Fatalf("the learned machine is not the committed reference machine (%v): %v", err, diffs)
				}
				s, _, _ := l.Counts()
				queries, starts, probes = queries+int64(stats.Queries), starts+s, probes+l.Probes()
			}
			b.ReportMetric(took.Seconds()/float64(b.N), "s/learn")
			b.ReportMetric(float64(queries)/took.Seconds(), "queries/s")
			b.ReportMetric(float64(starts)/took.Seconds(), "starts/s")
			b.ReportMetric(float64(probes)/float64(b.N), "prefix-runs/learn")
		})
	}
}
