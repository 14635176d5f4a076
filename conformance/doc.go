// Package conformance is the conformance runner of Splash worker protocol v5: it launches any
// worker executable as a contained child process, plays the trusted host against it over the
// private-pipe bootstrap and authenticated JSON lines, and reports, check by check, which
// behaviour of the specification in spec/ the worker conforms to.
//
// A check has a permanent ID of the form CNF-AREA-NN (two digits, so that an ID can never be
// mistaken for a requirement ID such as FRM-026), a level (MUST or SHOULD), the requirement IDs
// it proves, a one-line description and the capabilities it needs from the worker. The catalog
// is returned by Catalog; Run executes a selection of it and returns a Report, which can be
// written as a JSON index (WriteJSON), as JUnit XML (WriteJUnit) or as an HTML page
// (WriteHTML). A report can be judged against an expectations file of known failures
// (ApplyExpectations, package conformance/expect), and names its suite, SuiteVersion and the
// CatalogDigest of its catalog (CHANGELOG.md lists the catalog's changes). Main is the
// command-line front end used by cmd/splash-conform.
//
// The worker command may contain the placeholders {journal}, {effects} and {scope}. The runner
// replaces them with a journal path, an effect-log path (chapter 15) and the journal scope of
// the check, and enables the checks that need them; checks whose needs are not declared are
// skipped. Only paths and names travel on the command line: the session key reaches the worker
// through the bootstrap on its standard input and nowhere else.
package conformance
