package conformance

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"slices"
	"strings"
)

// SuiteVersion is the version of the conformance suites: the check catalogs of the worker and
// host suites and the report layouts. conformance/CHANGELOG.md lists what changed in each
// version; a test holds it to the catalogs.
const SuiteVersion = "1.4.0"

// ProtocolVersion is the Splash worker protocol version the suites judge.
const ProtocolVersion = 5

// CatalogEntry is what the catalog digest covers of one check: its ID, level and requirement
// IDs. The title and the needs are left out: they may be reworded without a new entry in the
// changelog.
type CatalogEntry struct {
	ID           string
	Level        Level
	Requirements []string
}

// Line returns the entry as one line of the digest's input: ID, level and the requirement IDs
// (comma-separated), separated by tabs.
func (e CatalogEntry) Line() string {
	return e.ID + "\t" + string(e.Level) + "\t" + strings.Join(e.Requirements, ",")
}

// CatalogDigest returns "sha256:" and the hexadecimal SHA-256 of the entries' lines, sorted by
// ID, each ended by a line feed. It names a catalog: two suites with the same digest hold the
// same checks with the same levels and citations.
func CatalogDigest(entries []CatalogEntry) string {
	lines := make([]string, 0, len(entries))
	for _, e := range entries {
		lines = append(lines, e.Line()+"\n")
	}
	slices.Sort(lines)
	sum := sha256.Sum256([]byte(strings.Join(lines, "")))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// MeaningDigest returns the digest of what a check expects, as its title states it: the first
// 16 hexadecimal digits of the SHA-256 of the title's UTF-8 bytes. The catalog digest leaves the
// title out; conformance/catalog-meanings.txt records this digest per check, and a test asks for
// a changelog line whenever it changes, so that a check whose meaning changed under the same ID,
// level and requirement IDs cannot go unannounced.
func MeaningDigest(title string) string {
	sum := sha256.Sum256([]byte(title))
	return hex.EncodeToString(sum[:8])
}

// SuiteInfo names the suite a report comes from.
type SuiteInfo struct {
	// Name is "worker" or "host".
	Name string
	// Version is SuiteVersion.
	Version string
	// ProtocolVersion is ProtocolVersion.
	ProtocolVersion int
	// Checks is the number of checks in the catalog.
	Checks int
	// CatalogDigest is the CatalogDigest of the suite's catalog.
	CatalogDigest string
}

// NewSuiteInfo describes the suite called name whose catalog holds entries.
func NewSuiteInfo(name string, entries []CatalogEntry) SuiteInfo {
	return SuiteInfo{Name: name, Version: SuiteVersion, ProtocolVersion: ProtocolVersion, Checks: len(entries), CatalogDigest: CatalogDigest(entries)}
}

// WriteVersion prints the suite version, the protocol version and, per suite, the size and
// digest of its catalog.
func WriteVersion(w io.Writer, suites ...SuiteInfo) {
	fmt.Fprintf(w, "splash-conform %s\nprotocol: Splash worker protocol v%d\n", SuiteVersion, ProtocolVersion)
	for _, s := range suites {
		fmt.Fprintf(w, "%s suite: %d checks, catalog %s\n", s.Name, s.Checks, s.CatalogDigest)
	}
}
