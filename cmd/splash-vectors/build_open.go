package main

import (
	"encoding/hex"
	"fmt"
	"unicode/utf8"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/vectors/vectorfmt"
)

func buildFramesOpen(c *checker) (string, any, *fileBuilder) {
	b := newFileBuilder(vectorfmt.FramesOpenFile, c)
	type key struct {
		role string
		mode canonjson.Mode
	}
	groups := map[key]*vectorfmt.FrameOpenGroup{}
	var order []key
	for _, m := range modes {
		for _, r := range []string{"worker", "host"} {
			k := key{r, m}
			groups[k] = &vectorfmt.FrameOpenGroup{Type: vectorfmt.FrameOpenType, KeyHex: hex.EncodeToString(key07[:]),
				SessionID: sessionOne, Role: r, Mode: m.String(), Tests: []vectorfmt.OpenTest{}}
			order = append(order, k)
		}
	}
	invalidFrames := 0
	for _, row := range openCases() {
		runModes := []canonjson.Mode{canonjson.Preserve}
		if row.alsoLossy {
			runModes = modes
		}
		if len(row.preserve) != len(row.lines) || (row.lossy != nil && len(row.lossy) != len(row.lines)) {
			b.failf("%q: %d lines but a different number of expected results", row.comment, len(row.lines))
			continue
		}
		for _, m := range runModes {
			exp := row.preserve
			if m == canonjson.Lossy && row.lossy != nil {
				exp = row.lossy
			}
			what := fmt.Sprintf("%s [%s, %s opens]", row.comment, m, row.receiver)
			results := make([]vectorfmt.OpenResult, len(exp))
			firstErr := ""
			for i, e := range exp {
				if e.err != "" {
					results[i] = vectorfmt.OpenResult{Error: e.err}
					if firstErr == "" {
						firstErr = e.err
					}
					continue
				}
				typ, _, ok := indMessageInfo(e.msg)
				if !ok {
					b.failf("%s: expected message is not a message", what)
				}
				results[i] = vectorfmt.OpenResult{Sequence: e.seq, MessageType: typ, Message: b.text(e.msg)}
			}
			t := vectorfmt.OpenTest{Case: b.newCase(row.meta, firstErr), Results: results}
			if row.start != 0 {
				s := row.start
				t.StartSequence = &s
			}
			allUTF8 := true
			for _, l := range row.lines {
				allUTF8 = allUTF8 && utf8.ValidString(l)
			}
			for _, l := range row.lines {
				if allUTF8 {
					t.Lines = append(t.Lines, vectorfmt.Text(l))
				} else {
					t.LinesHex = append(t.LinesHex, hex.EncodeToString([]byte(l)))
				}
			}
			if firstErr != "" {
				invalidFrames++
			}
			g := groups[key{row.receiver, m}]
			g.Tests = append(g.Tests, t)
		}
	}
	if invalidFrames < 150 {
		b.failf("only %d invalid frame tests; at least 150 are required", invalidFrames)
	}
	doc := vectorfmt.FramesOpen{}
	for _, k := range order {
		doc.TestGroups = append(doc.TestGroups, *groups[k])
	}
	doc.Header = b.header()
	return b.name, doc, b
}
