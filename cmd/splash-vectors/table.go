package main

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/splashv5/conform/spec"
	"github.com/splashv5/conform/vectors/vectorfmt"
)

// meta is the part of every case-table row that ends up in the test's shared fields.
type meta struct {
	comment string
	flags   []string
	reqs    []string
}

// checker collects every disagreement found while generating, so that one run reports all
// of them and the generator exits non-zero without writing anything.
type checker struct {
	problems []string
}

func (c *checker) failf(format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
}

// fileBuilder assigns tcIds in case-table order and gathers the flags a file uses.
type fileBuilder struct {
	name   string
	next   int
	used   map[string]bool
	check  *checker
	counts struct{ valid, invalid int }
}

func newFileBuilder(name string, c *checker) *fileBuilder {
	return &fileBuilder{name: name, next: 1, used: map[string]bool{}, check: c}
}

// failf records a problem attributed to this file.
func (b *fileBuilder) failf(format string, args ...any) {
	b.check.failf("%s: %s", b.name, fmt.Sprintf(format, args...))
}

// newCase allocates the next tcId and fills the shared fields. errKind is empty for a valid
// test.
func (b *fileBuilder) newCase(m meta, errKind string) vectorfmt.Case {
	id := b.next
	b.next++
	for _, f := range m.flags {
		if _, ok := flagNotes[f]; !ok {
			b.failf("tcId %d: flag %q has no note", id, f)
		}
		b.used[f] = true
	}
	c := vectorfmt.Case{
		TcID:         id,
		Comment:      m.comment,
		Flags:        append([]string{}, m.flags...),
		Requirements: append([]string{}, m.reqs...),
		Result:       vectorfmt.Valid,
	}
	if c.Flags == nil {
		c.Flags = []string{}
	}
	sort.Strings(c.Requirements)
	if errKind != "" {
		c.Result = vectorfmt.Invalid
		c.Error = errKind
		b.counts.invalid++
	} else {
		b.counts.valid++
	}
	if len(m.reqs) == 0 {
		b.failf("tcId %d (%s): no requirement cited", id, m.comment)
	}
	for _, r := range m.reqs {
		if _, ok := spec.Find(r); !ok {
			b.failf("tcId %d (%s): requirement %s does not exist in the specification", id, m.comment, r)
		}
	}
	if strings.TrimSpace(m.comment) == "" {
		b.failf("tcId %d: empty comment", id)
	}
	return c
}

// header builds the file header once all tests exist.
func (b *fileBuilder) header() vectorfmt.Header {
	notes := map[string]string{}
	for f := range b.used {
		notes[f] = flagNotes[f]
	}
	return vectorfmt.Header{
		Schema:          vectorfmt.SchemaName(b.name),
		ProtocolVersion: 5,
		Generator:       vectorfmt.GeneratorName,
		NumberOfTests:   b.next - 1,
		Notes:           notes,
	}
}

// text wraps s for a Text field, recording a problem if it is not valid UTF-8 (JSON strings
// cannot carry such bytes; use a hex field instead).
func (b *fileBuilder) text(s string) *vectorfmt.Text {
	if !utf8.ValidString(s) {
		b.failf("text field is not valid UTF-8: %q", s)
	}
	t := vectorfmt.Text(s)
	return &t
}

// inputField returns the Text form of input when it is valid UTF-8, else its hex form.
func (b *fileBuilder) inputField(input string) (*vectorfmt.Text, *string) {
	if utf8.ValidString(input) {
		return b.text(input), nil
	}
	h := fmt.Sprintf("%x", input)
	return nil, &h
}

func strPtr(s string) *string { return &s }
