// Package conformance is the framework the conformance suites of Splash worker protocol v5 run
// on: the worker suite (package conformance/worker), the host suite (conformance/host) and the
// interop suite (conformance/interop). Each suite holds its checks and its peer; what they
// share is here.
//
// A check has a permanent ID of the form CNF-AREA-NN (two digits, so that an ID can never be
// mistaken for a requirement ID such as FRM-026), a level (MUST or SHOULD) and the requirement
// IDs it proves. Every suite's checks are a Check[X] over its own context X, which embeds T
// (the verdict, transcript and requirement IDs) and holds the peer; a Catalog selects them by
// ID, pattern or requirement, and CatalogEntry is what a suite's catalog digest covers of one.
// RunChecks runs a selection in parallel, and Main is every suite's command line.
// A run gives a Report, which can be written as a JSON index (WriteJSON), as JUnit XML
// (WriteJUnit) or as an HTML page (WriteHTML), judged against an expectations file of known
// failures (ApplyExpectations, package conformance/expect), and names its suite, SuiteVersion
// and the CatalogDigest of its catalog (CHANGELOG.md lists the catalogs' changes). RunFlags,
// ParseCommandLine and FinishRun are the parts of Main the explorer shares; ReferenceWorker and
// ReferenceDriver find or build the bundled reference programs.
package conformance
