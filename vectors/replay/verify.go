package replay

import (
	"fmt"
	"io/fs"

	"github.com/splashv5/conform/spec"
	"github.com/splashv5/conform/vectors/vectorfmt"
)

// Minimum sizes of the suite.
const (
	// MinTotalTests is the smallest acceptable number of tests over all files.
	MinTotalTests = 400
	// MinInvalidFrames is the smallest acceptable number of invalid tests in frames_open.json.
	MinInvalidFrames = 150
)

// Verify checks the structure of the vector files in fsys, independently of any
// implementation: every file is present with the right header, numberOfTests matches,
// tcIds are unique, every test is valid or invalid with an error exactly when invalid,
// every flag is explained in the notes and every note is used, every test cites at least
// one requirement and every cited requirement exists in the specification, and the suite
// meets its minimum sizes. It returns one line per problem.
func Verify(fsys fs.FS) []string {
	var problems []string
	bad := func(name, format string, args ...any) {
		problems = append(problems, name+": "+fmt.Sprintf(format, args...))
	}
	total := 0
	for _, name := range vectorfmt.FileNames {
		g, err := vectorfmt.LoadGeneric(fsys, name)
		if err != nil {
			bad(name, "%v", err)
			continue
		}
		if g.Schema != vectorfmt.SchemaName(name) {
			bad(name, "schema is %q, want %q", g.Schema, vectorfmt.SchemaName(name))
		}
		if g.ProtocolVersion != 5 || g.Generator != vectorfmt.GeneratorName {
			bad(name, "header names protocol %d and generator %q", g.ProtocolVersion, g.Generator)
		}
		seen := map[int]bool{}
		usedFlags := map[string]bool{}
		count, invalid := 0, 0
		for _, grp := range g.TestGroups {
			for _, c := range grp.Tests {
				count++
				if seen[c.TcID] || c.TcID < 1 {
					bad(name, "tcId %d is repeated or not positive", c.TcID)
				}
				seen[c.TcID] = true
				switch {
				case c.Result == vectorfmt.Valid && c.Error == "":
				case c.Result == vectorfmt.Invalid && c.Error != "":
					invalid++
				default:
					bad(name, "tcId %d: result %q with error %q", c.TcID, c.Result, c.Error)
				}
				if len(c.Requirements) == 0 {
					bad(name, "tcId %d cites no requirement", c.TcID)
				}
				for _, id := range c.Requirements {
					if _, ok := spec.Find(id); !ok {
						bad(name, "tcId %d cites %s, which is not in the specification", c.TcID, id)
					}
				}
				for _, f := range c.Flags {
					usedFlags[f] = true
					if g.Notes[f] == "" {
						bad(name, "tcId %d: flag %q has no note", c.TcID, f)
					}
				}
				if c.Comment == "" {
					bad(name, "tcId %d has no comment", c.TcID)
				}
			}
		}
		for _, f := range sortedNames(notesSet(g.Notes)) {
			if !usedFlags[f] {
				bad(name, "note %q belongs to no test", f)
			}
		}
		if count != g.NumberOfTests {
			bad(name, "numberOfTests is %d but the file holds %d tests", g.NumberOfTests, count)
		}
		for id := 1; id <= count; id++ {
			if !seen[id] {
				bad(name, "tcIds are not 1..%d: %d is missing", count, id)
				break
			}
		}
		if name == vectorfmt.FramesOpenFile && invalid < MinInvalidFrames {
			bad(name, "%d invalid frame tests, want at least %d", invalid, MinInvalidFrames)
		}
		total += count
	}
	if total < MinTotalTests {
		problems = append(problems, fmt.Sprintf("%d tests in total, want at least %d", total, MinTotalTests))
	}
	return problems
}

func notesSet(notes map[string]string) map[string]bool {
	out := map[string]bool{}
	for k := range notes {
		out[k] = true
	}
	return out
}
