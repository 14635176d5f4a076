package worker

import "github.com/splashv5/conform/conformance"

// CatalogEntries returns the digest entries of the worker suite's catalog.
func CatalogEntries() []conformance.CatalogEntry {
	out := make([]conformance.CatalogEntry, 0, len(catalog))
	for _, c := range catalog {
		out = append(out, c.Entry())
	}
	return out
}

// Suite describes the worker suite: its version and catalog digest.
func Suite() conformance.SuiteInfo { return conformance.NewSuiteInfo("worker", CatalogEntries()) }
