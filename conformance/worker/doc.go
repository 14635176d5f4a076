// Package worker is the worker suite of Splash worker protocol v5, on the framework of package
// conformance: it launches any worker executable as a contained child process, plays the
// trusted host against it over the private-pipe bootstrap and authenticated JSON lines, and
// reports, check by check, which behaviour of the specification in spec/ the worker conforms
// to.
//
// The catalog is returned by Catalog, one file per area (checks_<area>.go, listed by Areas);
// Run executes a selection of it on the framework's run loop and returns a conformance.Report;
// Main is the framework's command line (conformance.Main) with the suite's own flags, used by
// cmd/splash-conform.
//
// The worker command may contain the placeholders {journal}, {effects} and {scope}. The runner
// replaces them with a journal path, an effect-log path (chapter 15) and the journal scope of
// the check, and enables the checks that need them; checks whose needs are not declared are
// skipped. Only paths and names travel on the command line: the session key reaches the worker
// through the bootstrap on its standard input and nowhere else.
package worker
