// Package spec embeds the normative specification of Splash worker protocol v5 (the Markdown
// chapters in this directory) and parses its requirement IDs, so that tests and tools can check
// that every requirement is cited by a test, a vector or a conformance check, and that every
// citation names a requirement that exists.
//
// A requirement is a Markdown list item of the form
//
//   - **FRM-007** (MUST) text…
//
// whose ID is a known prefix, a hyphen and three digits, and whose level is MUST, MUST NOT,
// SHOULD, SHOULD NOT or MAY. Retired IDs are list items of the form
//
//   - **ENC-999** (retired) reason…
//
// under the heading "Retired" of README.md. Lines inside fenced code blocks are ignored.
//
// A requirement that binds only this implementation, so that no port is judged on it, carries the
// marker "[implementation only: reason]" in its first paragraph; Requirement.ImplementationOnly
// holds the reason, and Text leaves the marker out. A requirement a port can break observably
// that no check or vector judges yet carries instead the marker "[check needed: what a check
// would do]" when only a running worker or host can show it, or "[vector needed: what the
// vectors would hold]" when a golden vector can; Requirement.Needed and
// NeededKind hold it.
package spec

import (
	"bufio"
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

//go:embed *.md
var chapterFiles embed.FS

// Prefixes lists every requirement ID prefix the project uses, in chapter order.
var Prefixes = []string{
	"ENC", "MSG", "FRM", "BOOT", "MAN", "FP", "ERR",
	"STO", "AUZ", "JRN", "WRK", "CAN", "PRF", "SEC", "RUN", "SCR", "TRN", "WFL", "HDR", "IOP", "EXP", "CNF",
}

// CitationPattern is the regular expression that recognises a requirement ID wherever it is
// cited (test comments, vector files, conformance sources).
const CitationPattern = `\b(ENC|MSG|FRM|BOOT|MAN|FP|ERR|STO|AUZ|JRN|WRK|CAN|PRF|SEC|RUN|SCR|TRN|WFL|HDR|IOP|EXP|CNF)-\d{3}\b`

var (
	citationRE = regexp.MustCompile(CitationPattern)
	// candidateRE finds list items that try to define something ID-like in bold.
	candidateRE = regexp.MustCompile(`^- \*\*[A-Za-z]+-[0-9]+\*\*`)
	// definitionRE is the exact shape of a requirement item.
	definitionRE = regexp.MustCompile(`^- \*\*([A-Z]+)-(\d{3})\*\* \((MUST NOT|MUST|SHOULD NOT|SHOULD|MAY)\) \S`)
	// retiredRE is the exact shape of a retired entry.
	retiredRE = regexp.MustCompile(`^- \*\*([A-Z]+)-(\d{3})\*\* \(retired\) \S`)
	headingRE = regexp.MustCompile(`^#{1,6} `)
	// implOnlyRE is the marker of a requirement that binds only this implementation.
	implOnlyRE = regexp.MustCompile(`\s*\[implementation only: ([^\]]*)\]`)
	// neededRE is the marker of a requirement that awaits a conformance check or a vector.
	neededRE = regexp.MustCompile(`\s*\[(check|vector) needed: ([^\]]*)\]`)
)

// Level is the conformance level of a requirement as written in its item.
type Level string

// The levels a requirement may carry (RFC 2119 / RFC 8174 key words).
const (
	Must      Level = "MUST"
	MustNot   Level = "MUST NOT"
	Should    Level = "SHOULD"
	ShouldNot Level = "SHOULD NOT"
	May       Level = "MAY"
)

// Requirement is one numbered requirement of the specification.
type Requirement struct {
	ID      string // for example "FRM-007"
	Prefix  string // for example "FRM"
	Number  int    // for example 7
	Level   Level
	Chapter string // file name of the chapter, for example "03-framing.md"
	Line    int    // 1-based line of the item in its chapter
	Text    string // the item's first paragraph, without the ID, level and marker, on one line
	// ImplementationOnly, when set, is the reason the requirement binds only this
	// implementation (the marker "[implementation only: reason]"): no port is judged on it.
	ImplementationOnly string
	// Needed, when set, says what would judge a port on the requirement, which a port can break
	// observably and which nothing judges yet: a conformance check (NeededKind "check", the
	// marker "[check needed: what]") when only a running worker or host can show it, or golden
	// vectors (NeededKind "vector", the marker "[vector needed: what]").
	Needed, NeededKind string
}

// Retirement is one retired requirement ID.
type Retirement struct {
	ID     string
	Reason string
}

// Citation is one occurrence of a requirement ID outside the specification.
type Citation struct {
	ID   string
	File string // slash-separated path relative to the repository root
	Line int    // 1-based
}

// document is the parsed specification.
type document struct {
	requirements []Requirement
	retired      []Retirement
	err          error
}

var load = sync.OnceValue(func() *document { return parseChapters(chapterFiles) })

// Requirements returns every requirement of the embedded chapters, ordered by chapter file and
// line. It returns an error (together with whatever could be parsed) if an item is malformed, an
// ID is defined twice, an ID uses an unknown prefix, a chapter mixes prefixes, or a retired ID is
// defined again.
func Requirements() ([]Requirement, error) {
	d := load()
	return slices.Clone(d.requirements), d.err
}

// Retired returns the retired IDs listed in the "Retired" section of README.md.
func Retired() ([]Retirement, error) {
	d := load()
	return slices.Clone(d.retired), d.err
}

// Find returns the requirement with the given ID.
func Find(id string) (Requirement, bool) {
	for _, r := range load().requirements {
		if r.ID == id {
			return r, true
		}
	}
	return Requirement{}, false
}

// parseChapters parses every Markdown file of fsys.
func parseChapters(fsys fs.FS) *document {
	d := &document{}
	var problems []error
	names, err := fs.Glob(fsys, "*.md")
	if err != nil {
		return &document{err: err}
	}
	slices.Sort(names)
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			problems = append(problems, err)
			continue
		}
		reqs, retired, errs := parseChapter(name, data)
		d.requirements = append(d.requirements, reqs...)
		d.retired = append(d.retired, retired...)
		problems = append(problems, errs...)
	}
	problems = append(problems, checkConsistency(d.requirements, d.retired)...)
	d.err = errors.Join(problems...)
	return d
}

// parseChapter extracts the requirement and retirement items of one chapter.
func parseChapter(name string, data []byte) ([]Requirement, []Retirement, []error) {
	var (
		reqs     []Requirement
		retired  []Retirement
		problems []error
		inFence  bool
		inRetire bool
		current  *Requirement
	)
	flush := func() {
		if current != nil {
			if m := implOnlyRE.FindAllStringSubmatch(current.Text, -1); len(m) > 0 {
				current.ImplementationOnly = strings.TrimSpace(m[0][1])
				if len(m) > 1 || current.ImplementationOnly == "" {
					problems = append(problems, fmt.Errorf("%s:%d: %s: want one marker [implementation only: reason] with a reason", name, current.Line, current.ID))
				}
				current.Text = implOnlyRE.ReplaceAllString(current.Text, "")
			}
			if m := neededRE.FindAllStringSubmatch(current.Text, -1); len(m) > 0 {
				current.NeededKind, current.Needed = m[0][1], strings.TrimSpace(m[0][2])
				if len(m) > 1 || current.Needed == "" {
					problems = append(problems, fmt.Errorf("%s:%d: %s: want one marker [check needed: what] or [vector needed: what] that says what would judge it", name, current.Line, current.ID))
				}
				if current.ImplementationOnly != "" {
					problems = append(problems, fmt.Errorf("%s:%d: %s: a requirement that binds only this implementation needs no check; keep one of its two markers", name, current.Line, current.ID))
				}
				current.Text = neededRE.ReplaceAllString(current.Text, "")
			}
			current.Text = strings.TrimSpace(current.Text)
			reqs = append(reqs, *current)
			current = nil
		}
	}
	scanner := bufio.NewScanner(bytes.NewReader(data))
	scanner.Buffer(make([]byte, 0, 64*1024), 1<<20)
	lineNo := 0
	for scanner.Scan() {
		lineNo++
		line := scanner.Text()
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			flush()
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		if headingRE.MatchString(line) {
			flush()
			inRetire = strings.EqualFold(strings.TrimSpace(strings.TrimLeft(line, "#")), "Retired")
			continue
		}
		if strings.HasPrefix(line, "- ") {
			flush()
			if m := retiredRE.FindStringSubmatch(line); m != nil {
				if !inRetire {
					problems = append(problems, fmt.Errorf("%s:%d: retired entry %s-%s outside the Retired section", name, lineNo, m[1], m[2]))
					continue
				}
				retired = append(retired, Retirement{
					ID:     m[1] + "-" + m[2],
					Reason: strings.TrimSpace(line[strings.Index(line, "(retired)")+len("(retired)"):]),
				})
				continue
			}
			if m := definitionRE.FindStringSubmatch(line); m != nil {
				if inRetire {
					problems = append(problems, fmt.Errorf("%s:%d: requirement %s-%s defined inside the Retired section", name, lineNo, m[1], m[2]))
					continue
				}
				number, _ := strconv.Atoi(m[2])
				head := fmt.Sprintf("- **%s-%s** (%s)", m[1], m[2], m[3])
				current = &Requirement{
					ID:      m[1] + "-" + m[2],
					Prefix:  m[1],
					Number:  number,
					Level:   Level(m[3]),
					Chapter: name,
					Line:    lineNo,
					Text:    strings.TrimSpace(strings.TrimPrefix(line, head)),
				}
				continue
			}
			if candidateRE.MatchString(line) {
				problems = append(problems, fmt.Errorf("%s:%d: malformed requirement item %q (want \"- **PREFIX-NNN** (MUST|MUST NOT|SHOULD|SHOULD NOT|MAY) text\")", name, lineNo, truncate(line, 80)))
			}
			continue
		}
		if current != nil {
			// A continuation line of the item's first paragraph is indented and is not a nested
			// block (quote, table, list).
			if trimmed == "" || !strings.HasPrefix(line, "  ") ||
				strings.HasPrefix(trimmed, ">") || strings.HasPrefix(trimmed, "|") || strings.HasPrefix(trimmed, "- ") {
				flush()
				continue
			}
			current.Text += " " + trimmed
		}
	}
	flush()
	if err := scanner.Err(); err != nil {
		problems = append(problems, fmt.Errorf("%s: %w", name, err))
	}
	return reqs, retired, problems
}

// checkConsistency reports unknown prefixes, duplicate definitions, chapters that mix prefixes,
// and retired IDs that are defined again. Gaps in the numbering are allowed: a chapter may
// reserve number blocks per section.
func checkConsistency(reqs []Requirement, retired []Retirement) []error {
	var problems []error
	known := make(map[string]bool, len(Prefixes))
	for _, p := range Prefixes {
		known[p] = true
	}
	defined := make(map[string]Requirement, len(reqs))
	chapterPrefix := make(map[string]string)
	for _, r := range reqs {
		if !known[r.Prefix] {
			problems = append(problems, fmt.Errorf("%s:%d: %s uses an unknown prefix", r.Chapter, r.Line, r.ID))
		}
		if prev, dup := defined[r.ID]; dup {
			problems = append(problems, fmt.Errorf("%s:%d: %s is already defined at %s:%d", r.Chapter, r.Line, r.ID, prev.Chapter, prev.Line))
			continue
		}
		defined[r.ID] = r
		if p, ok := chapterPrefix[r.Chapter]; ok && p != r.Prefix {
			problems = append(problems, fmt.Errorf("%s:%d: %s does not use the chapter's prefix %s", r.Chapter, r.Line, r.ID, p))
		} else if !ok {
			chapterPrefix[r.Chapter] = r.Prefix
		}
	}
	retiredSet := make(map[string]bool, len(retired))
	for _, rt := range retired {
		if retiredSet[rt.ID] {
			problems = append(problems, fmt.Errorf("README.md: %s is retired twice", rt.ID))
		}
		retiredSet[rt.ID] = true
		if r, ok := defined[rt.ID]; ok {
			problems = append(problems, fmt.Errorf("%s:%d: %s is retired and must not be defined again", r.Chapter, r.Line, rt.ID))
		}
	}
	return problems
}

// FindModuleRoot walks up from dir to the nearest directory containing go.mod.
func FindModuleRoot(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		if info, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil && !info.IsDir() {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("spec: no go.mod found in any parent directory")
		}
		dir = parent
	}
}

// Cited scans the repository rooted at root for requirement IDs in Go test files (`*_test.go`
// anywhere except the spec directory itself), Go files of test-support packages (a directory
// named after its parent plus "test", such as impl/storage/storagetest, imported only by
// tests), vector files (`vectors/**/*.json`) and conformance sources (`conformance/**/*.go`).
// Hidden directories, directories starting with `_` and `testdata` directories are skipped. Citations are returned in file and line order.
func Cited(root string) ([]Citation, error) {
	var citations []Citation
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			base := d.Name()
			if rel != "." && (strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_") || base == "testdata") {
				return filepath.SkipDir
			}
			if rel == "spec" {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || !isCitingFile(rel) {
			return nil
		}
		found, err := scanFile(p, rel)
		if err != nil {
			return err
		}
		citations = append(citations, found...)
		return nil
	})
	return citations, err
}

// isCitingFile reports whether a repository-relative path is a place where citations count.
func isCitingFile(rel string) bool {
	top, _, _ := strings.Cut(rel, "/")
	switch {
	case strings.HasSuffix(rel, "_test.go"):
		return true
	case top == "vectors" && path.Ext(rel) == ".json":
		return true
	case top == "conformance" && path.Ext(rel) == ".go":
		return true
	case path.Ext(rel) == ".go" && isTestSupportDir(path.Dir(rel)):
		return true
	}
	return false
}

// isTestSupportDir reports whether dir holds a test-support package: its name is its parent's
// followed by "test", as impl/storage/storagetest (the Go convention of net/http/httptest).
func isTestSupportDir(dir string) bool {
	return dir != "." && path.Base(dir) == path.Base(path.Dir(dir))+"test"
}

// scanFile returns the citations in one file.
func scanFile(filename, rel string) ([]Citation, error) {
	data, err := os.ReadFile(filename)
	if err != nil {
		return nil, err
	}
	var out []Citation
	line := 1
	for len(data) > 0 {
		next := bytes.IndexByte(data, '\n')
		var text []byte
		if next < 0 {
			text, data = data, nil
		} else {
			text, data = data[:next], data[next+1:]
		}
		for _, id := range citationRE.FindAll(text, -1) {
			out = append(out, Citation{ID: string(id), File: rel, Line: line})
		}
		line++
	}
	return out, nil
}

// truncate shortens s to at most n bytes for error messages.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
