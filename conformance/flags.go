package conformance

import (
	"flag"
	"time"
)

// RunFlags are the flags the suites' command lines share, declared by Register in one place
// (ParseCommandLine adds -version and the expectation flags).
type RunFlags struct {
	Run                   string
	List, Strict, Verbose bool
	Timeout               time.Duration
	JUnit, JSON, HTML     string
	Parallel              int
}

// Register declares the shared flags in fs for a suite whose checks are called unit ("check",
// "scenario"), with timeout as the default time limit. A suite of MUST checks only (the
// interop suite) takes neither -strict nor -junit: withStrict false.
func (f *RunFlags) Register(fs *flag.FlagSet, unit string, timeout time.Duration, withStrict bool) {
	fs.StringVar(&f.Run, "run", "", "run only "+unit+"s whose ID starts with, or matches the regular expression, `PATTERN` (or that cite the requirement ID PATTERN)")
	fs.BoolVar(&f.List, "list", false, "list the selected "+unit+"s and exit")
	limit := "time limit of one " + unit
	if unit == "check" {
		limit += " (of each worker start, in a check that starts several)"
	}
	fs.DurationVar(&f.Timeout, "timeout", timeout, limit)
	fs.BoolVar(&f.Verbose, "v", false, "print the transcript of every "+unit+", and keep it in the reports")
	fs.StringVar(&f.JSON, "json", "", "write the JSON report to `FILE`")
	fs.StringVar(&f.HTML, "html", "", "write a self-contained HTML report to `FILE`")
	fs.IntVar(&f.Parallel, "parallel", DefaultParallel(), "run `N` "+unit+"s at once")
	if withStrict {
		fs.BoolVar(&f.Strict, "strict", false, "make SHOULD-level checks count (a deviation fails the run instead of being INFO)")
		fs.StringVar(&f.JUnit, "junit", "", "write a JUnit XML report to `FILE`")
	}
}
