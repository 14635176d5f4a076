package worker

import (
	"time"

	"github.com/splashv5/conform/conformance"
)

// newReport is the report of a run of the worker suite.
func newReport(cfg Config, st *runState, results []conformance.Result, started time.Time) *conformance.Report {
	r := conformance.NewReport(Suite(), cfg.Worker, st.strict, started, results)
	r.AreaDescriptions = areaDescriptions()
	for _, n := range AllNeeds {
		if st.offers[n] {
			r.Offered = append(r.Offered, n)
		}
	}
	return r
}

// areaDescriptions says what each area of the catalog covers.
func areaDescriptions() map[string]string {
	out := make(map[string]string, len(Areas))
	for _, a := range Areas {
		out[a.Name] = a.Description
	}
	return out
}
