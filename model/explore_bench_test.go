package model_test

import (
	"testing"
	"time"

	"github.com/splashv5/conform/model"
)

// benchExplore explores sys b.N times and reports states, transitions and states per second.
func benchExplore[S, A any](b *testing.B, sys func() model.System[S, A]) {
	b.Helper()
	var r *model.Exploration[S, A]
	began := time.Now()
	for range b.N {
		r = model.Explore(sys())
	}
	elapsed := time.Since(began).Seconds() / float64(b.N)
	if r.Violation != nil || !r.Complete {
		b.Fatalf("%s", r.Summary())
	}
	b.ReportMetric(float64(r.States), "states")
	b.ReportMetric(float64(r.Transitions), "transitions")
	b.ReportMetric(float64(r.Depth), "depth")
	b.ReportMetric(float64(r.States)/elapsed, "states/s")
}

// The explorer on every model at its CI bounds (and, with SPLASH_SOAK=1, its soak bounds):
// go test -run '^$' -bench Explore -benchtime 1x ./model/
func BenchmarkExplore(b *testing.B) {
	b.Run("cancellation", func(b *testing.B) { benchExplore(b, hostileBound().System) })
	b.Run("lifecycle", func(b *testing.B) { benchExplore(b, lifecycleBound().System) })
	b.Run("supervised", func(b *testing.B) { benchExplore(b, supervisedBound().System) })
	for _, c := range fencingBounds() {
		b.Run(c.String(), func(b *testing.B) { benchExplore(b, c.System) })
	}
}
