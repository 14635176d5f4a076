// Package expect reads, checks, applies and writes expectations files: the list of checks a
// port knows it does not pass yet, so that its CI fails on a regression, not on a known gap.
//
// An expectations file is a JSON object (docs/conformance.md, "Known failures"):
//
//	{
//	  "format": "splash-conform-expectations",
//	  "format_version": 1,
//	  "suite": "worker",
//	  "expectations": [
//	    {"id": "CNF-FRAME-10", "outcome": "FAIL", "reason": "session id not checked yet"},
//	    {"id": "CNF-CANCEL-*", "outcome": "SKIP", "reason": "no cancellable driver"},
//	    {"requirement": "ENC-039", "outcome": "INFO", "reason": "lossy number model"}
//	  ]
//	}
//
// An entry names one check ID, a pattern over IDs (path.Match syntax, such as CNF-CANCEL-*) or a
// requirement ID (every check citing it), the outcome expected and why. FAIL stands for any
// failing outcome (FAIL, CRASH, TIMEOUT). When several entries name a check, an exact ID wins
// over a pattern, a pattern over a requirement, and otherwise the first entry.
//
// A suite whose checks run in several places (the cells of the interop matrix) gives its checks
// qualified IDs, QUALIFIER/ID (such as "host-a/worker-b/CNF-IOP-ECHO-01"). An entry with a plain
// ID or pattern names the check in every place; an entry whose ID is qualified names it in the
// places its qualifier matches (path.Match syntax again, so "*/worker-b/CNF-IOP-*" names one
// worker's scenarios with every host), and wins over a plain entry of the same kind.
//
// The package knows checks only as IDs with their requirement IDs, and outcomes as the strings
// of the reports; only ReadFile touches the file system.
package expect

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
)

// Format is the value of the "format" member of an expectations file.
const Format = "splash-conform-expectations"

// FormatVersion is the layout version this package reads and writes.
const FormatVersion = 1

// The outcomes an entry may expect.
const (
	// Fail expects a failing outcome: FAIL, CRASH or TIMEOUT.
	Fail = "FAIL"
	// Skip expects SKIP.
	Skip = "SKIP"
	// Info expects INFO.
	Info = "INFO"
)

// Errors of Parse and Check, one kind per rule; each returned error wraps one of them.
var (
	// ErrSyntax: the file is not one JSON object of the documented layout.
	ErrSyntax = errors.New("expectations: not an expectations file")
	// ErrEntry: an entry names no check or two kinds of selector, expects an outcome other than
	// FAIL, SKIP or INFO, gives no reason, or is listed twice.
	ErrEntry = errors.New("expectations: bad entry")
	// ErrSuite: the file is for another suite.
	ErrSuite = errors.New("expectations: the file is for another suite")
	// ErrUnknownCheck: an entry names a check ID, pattern or requirement ID that selects no
	// check of the catalog (the check was retired or renamed, or the entry is mistyped).
	ErrUnknownCheck = errors.New("expectations: the entry selects no check of the catalog")
)

// Entry is one line of an expectations file.
type Entry struct {
	// ID is a check ID or a pattern over IDs (path.Match syntax), plain or qualified
	// (QUALIFIER/ID).
	ID string `json:"id,omitempty"`
	// Requirement is a requirement ID: the entry names every check that cites it.
	Requirement string `json:"requirement,omitempty"`
	// Outcome is Fail, Skip or Info.
	Outcome string `json:"outcome"`
	// Reason says why the outcome is expected.
	Reason string `json:"reason"`
	// Line is the 1-based line of the file where the entry starts (0 for an entry not read
	// from a file).
	Line int `json:"-"`
}

// String returns the entry as the one line Write gives it.
func (e Entry) String() string {
	var parts []string
	for _, kv := range [][2]string{{"id", e.ID}, {"requirement", e.Requirement}, {"outcome", e.Outcome}, {"reason", e.Reason}} {
		if kv[1] != "" || kv[0] == "outcome" || kv[0] == "reason" {
			parts = append(parts, quote(kv[0])+": "+quote(kv[1]))
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// quote writes s as a JSON string, leaving <, > and & as they are.
func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// selector returns what the entry selects, for messages.
func (e Entry) selector() string {
	if e.Requirement != "" {
		return "requirement " + e.Requirement
	}
	return e.ID
}

// The kinds of selector, from the least to the most specific.
const (
	byRequirement = 1
	byPattern     = 2
	byID          = 3
)

// kind returns the entry's kind of selector.
func (e Entry) kind() int {
	switch {
	case e.Requirement != "":
		return byRequirement
	case strings.ContainsAny(e.ID, `*?[\`):
		return byPattern
	default:
		return byID
	}
}

// qualified reports whether the entry's ID names the places of its check (QUALIFIER/ID).
func (e Entry) qualified() bool { return strings.Contains(e.ID, "/") }

// rank orders the entries that name one check: by kind of selector, then a qualified entry
// over a plain one.
func (e Entry) rank() int {
	r := 2 * e.kind()
	if e.qualified() {
		r++
	}
	return r
}

// Selects reports whether the entry names the check: a plain ID or pattern is matched against
// the check ID without its qualifier, a qualified one against the whole ID.
func (e Entry) Selects(c Check) bool {
	id := c.ID
	if !e.qualified() {
		id = id[strings.LastIndexByte(id, '/')+1:]
	}
	switch e.kind() {
	case byRequirement:
		return slices.Contains(c.Requirements, e.Requirement)
	case byPattern:
		ok, _ := path.Match(e.ID, id) // the pattern was checked by Parse
		return ok
	default:
		return e.ID == id
	}
}

// File is an expectations file.
type File struct {
	// Format is the Format constant.
	Format string `json:"format"`
	// FormatVersion is FormatVersion.
	FormatVersion int `json:"format_version"`
	// Suite is the suite the file is for ("worker", "host", ...); empty means any.
	Suite string `json:"suite,omitempty"`
	// SuiteVersion and CatalogDigest record, for the reader, the suite the file was written
	// with; they are not checked.
	SuiteVersion  string `json:"suite_version,omitempty"`
	CatalogDigest string `json:"catalog_digest,omitempty"`
	// Expectations are the entries, in file order.
	Expectations []Entry `json:"expectations"`
}

// Check is a check as the expectations see it.
type Check struct {
	// ID is the check ID, qualified (QUALIFIER/ID) when the check runs in several places.
	ID           string
	Requirements []string
}

var (
	requirementPattern = regexp.MustCompile(`^[A-Z]+-[0-9]{3}$`)
	idPattern          = regexp.MustCompile(`^(?:[^/\x00-\x1f]+/)*[A-Z][A-Z0-9*?\[\]-]*$`)
)

// MaxFileSize bounds the size of an expectations file ReadFile accepts (a file of every
// check of both suites with long reasons stays far below it).
const MaxFileSize = 4 << 20

// ReadFile reads and parses the expectations file at path, refusing one larger than
// MaxFileSize before reading it whole.
func ReadFile(path string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrSyntax, MaxFileSize)
	}
	return Parse(data)
}

// Parse reads an expectations file. It checks the layout and every entry on its own; Check
// then checks the entries against a catalog.
func Parse(data []byte) (*File, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSyntax, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: text after the object", ErrSyntax)
	}
	if f.Format != Format || f.FormatVersion != FormatVersion {
		return nil, fmt.Errorf("%w: format %q version %d, want %q version %d", ErrSyntax, f.Format, f.FormatVersion, Format, FormatVersion)
	}
	lines := entryLines(data)
	var errs []error
	seen := map[string]int{}
	for i := range f.Expectations {
		e := &f.Expectations[i]
		if i < len(lines) {
			e.Line = lines[i]
		}
		if err := e.validate(); err != nil {
			errs = append(errs, fmt.Errorf("line %d: %w", e.Line, err))
			continue
		}
		key := e.ID + "\x00" + e.Requirement
		if first, dup := seen[key]; dup {
			errs = append(errs, fmt.Errorf("line %d: %w: %s is already listed at line %d", e.Line, ErrEntry, e.selector(), first))
		}
		seen[key] = e.Line
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &f, nil
}

// validate checks one entry on its own.
func (e Entry) validate() error {
	switch {
	case (e.ID == "") == (e.Requirement == ""):
		return fmt.Errorf("%w: give exactly one of \"id\" and \"requirement\"", ErrEntry)
	case e.Requirement != "" && !requirementPattern.MatchString(e.Requirement):
		return fmt.Errorf("%w: %q is not a requirement ID such as FRM-012", ErrEntry, e.Requirement)
	case e.ID != "" && !idPattern.MatchString(e.ID):
		return fmt.Errorf("%w: %q is not a check ID or pattern such as CNF-FRAME-06 or CNF-CANCEL-*", ErrEntry, e.ID)
	case e.Outcome != Fail && e.Outcome != Skip && e.Outcome != Info:
		return fmt.Errorf("%w: %s: outcome %q, want FAIL, SKIP or INFO", ErrEntry, e.selector(), e.Outcome)
	case strings.TrimSpace(e.Reason) == "":
		return fmt.Errorf("%w: %s: no reason", ErrEntry, e.selector())
	}
	if _, err := path.Match(e.ID, ""); err != nil {
		return fmt.Errorf("%w: %q: %v", ErrEntry, e.ID, err)
	}
	return nil
}

// entryLines returns the 1-based line of each element of the top-level "expectations" array,
// in order (an empty result when the file does not have that shape; Parse has decoded it by
// then, so this only fails on files it has already rejected).
func entryLines(data []byte) []int {
	dec := json.NewDecoder(bytes.NewReader(data))
	lineAt := func(off int64) int {
		// Skip the separators before the element.
		for off < int64(len(data)) && strings.IndexByte(" \t\r\n,:", data[off]) >= 0 {
			off++
		}
		return 1 + bytes.Count(data[:off], []byte("\n"))
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil
		}
		if key != "expectations" {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return nil
			}
			continue
		}
		if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
			return nil
		}
		var lines []int
		for dec.More() {
			lines = append(lines, lineAt(dec.InputOffset()))
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return nil
			}
		}
		return lines
	}
	return nil
}

// Check checks the file against the suite it is used with: the file's suite must be suite (or
// unset), and every entry must select at least one check of the whole catalog (not only of
// the checks a run selects). It returns every problem, joined.
func (f *File) Check(suite string, catalog []Check) error {
	var errs []error
	if f.Suite != "" && f.Suite != suite {
		errs = append(errs, fmt.Errorf("%w: the file is for the %s suite, this is the %s suite", ErrSuite, f.Suite, suite))
	}
	for _, e := range f.Expectations {
		if !slices.ContainsFunc(catalog, e.Selects) {
			errs = append(errs, fmt.Errorf("line %d: %w: %s (delete the entry, or rename it after the catalog's changelog)", e.Line, ErrUnknownCheck, e.selector()))
		}
	}
	return errors.Join(errs...)
}

// Lookup returns the entry that names the check: the most specific one, and among equally
// specific ones the first.
func (f *File) Lookup(c Check) (Entry, bool) {
	var best Entry
	found := false
	for _, e := range f.Expectations {
		if e.Selects(c) && (!found || e.rank() > best.rank()) {
			best, found = e, true
		}
	}
	return best, found
}

// Verdict says how a check's outcome compares with its entry.
type Verdict string

// The verdicts of Judge.
const (
	// Unlisted: no entry names the check; the outcome counts as usual.
	Unlisted Verdict = ""
	// Expected: the outcome is the one listed; a listed failure does not fail the run.
	Expected Verdict = "expected"
	// Fixed: the check is listed but no longer has the listed outcome, and does not fail
	// (usually it now passes): the entry is stale and should be deleted.
	Fixed Verdict = "fixed"
	// Regressed: the check is listed with SKIP or INFO but now fails; the failure counts.
	Regressed Verdict = "regressed"
)

// Failing reports whether an outcome string is a failure (FAIL, CRASH or TIMEOUT).
func Failing(outcome string) bool {
	return outcome == "FAIL" || outcome == "CRASH" || outcome == "TIMEOUT"
}

// Judge compares a check's actual outcome with its entry (found says whether there is one).
func Judge(e Entry, found bool, outcome string) Verdict {
	switch {
	case !found:
		return Unlisted
	case e.Outcome == outcome || e.Outcome == Fail && Failing(outcome):
		return Expected
	case Failing(outcome):
		return Regressed
	default:
		return Fixed
	}
}

// Write writes f with one entry per line, so that an entry is deleted by deleting its line.
func Write(w io.Writer, f *File) error {
	var b bytes.Buffer
	header := func(key string, v any, last bool) {
		val, _ := json.Marshal(v) // strings and integers only: always encodes
		fmt.Fprintf(&b, "  %q: %s", key, val)
		if !last {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("{\n")
	header("format", Format, false)
	header("format_version", FormatVersion, false)
	if f.Suite != "" {
		header("suite", f.Suite, false)
	}
	if f.SuiteVersion != "" {
		header("suite_version", f.SuiteVersion, false)
	}
	if f.CatalogDigest != "" {
		header("catalog_digest", f.CatalogDigest, false)
	}
	if len(f.Expectations) == 0 {
		b.WriteString("  \"expectations\": []\n}\n")
	} else {
		b.WriteString("  \"expectations\": [\n")
		for i, e := range f.Expectations {
			b.WriteString("    " + e.String())
			if i < len(f.Expectations)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		b.WriteString("  ]\n}\n")
	}
	_, err := w.Write(b.Bytes())
	return err
}
