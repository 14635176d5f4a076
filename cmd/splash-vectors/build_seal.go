package main

import (
	"encoding/hex"
	"fmt"

	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/vectors/vectorfmt"
)

func buildFramesSeal(c *checker) (string, any, *fileBuilder) {
	b := newFileBuilder(vectorfmt.FramesSealFile, c)
	type key struct {
		role, session string
		mode          canonjson.Mode
	}
	groups := map[key]*vectorfmt.FrameSealGroup{}
	var order []key
	for _, row := range sealCases() {
		runModes := []canonjson.Mode{canonjson.Preserve}
		if row.alsoLossy {
			runModes = modes
		}
		if len(row.preserve) != len(row.msgs) || (row.lossy != nil && len(row.lossy) != len(row.msgs)) {
			b.failf("%q: message and result counts differ", row.comment)
			continue
		}
		if (row.lossy != nil) != hasFlag(row.flags, "ModeDependent") {
			b.failf("%q: ModeDependent flag does not match the expectations", row.comment)
		}
		for _, m := range runModes {
			exp := row.preserve
			if m == canonjson.Lossy && row.lossy != nil {
				exp = row.lossy
			}
			what := fmt.Sprintf("%s [%s, %s seals]", row.comment, m, row.role)
			results := make([]vectorfmt.SealResult, len(exp))
			firstErr := ""
			for i, e := range exp {
				if e.err != "" {
					results[i] = vectorfmt.SealResult{Error: e.err}
					if firstErr == "" {
						firstErr = e.err
					}
					continue
				}
				ind := indSeal(key07, row.role, e.seq, row.session, e.canon)
				if e.recordedTag != "" && ind.tag != e.recordedTag {
					b.failf("%s: message %d: independent tag %s differs from the recorded reference tag %s", what, i+1, ind.tag, e.recordedTag)
				}
				results[i] = vectorfmt.SealResult{Sequence: ind.seq, TagInput: b.text(ind.tagInput), Tag: ind.tag, Line: b.text(ind.line)}
			}
			t := vectorfmt.SealTest{Case: b.newCase(row.meta, firstErr), Results: results}
			if row.start != 0 {
				s := row.start
				t.StartSequence = &s
			}
			for i, msg := range row.received {
				t.Received = append(t.Received, *b.text(indSeal(key07, peerRole(row.role), uint64(i+1), row.session, msg).line))
			}
			for _, msg := range row.msgs {
				t.Messages = append(t.Messages, *b.text(msg))
			}
			k := key{row.role, row.session, m}
			g, ok := groups[k]
			if !ok {
				g = &vectorfmt.FrameSealGroup{Type: vectorfmt.FrameSealType, KeyHex: hex.EncodeToString(key07[:]),
					SessionID: row.session, Role: row.role, Mode: m.String(), Tests: []vectorfmt.SealTest{}}
				groups[k] = g
				order = append(order, k)
			}
			g.Tests = append(g.Tests, t)
		}
	}
	doc := vectorfmt.FramesSeal{}
	for _, k := range order {
		doc.TestGroups = append(doc.TestGroups, *groups[k])
	}
	doc.Header = b.header()
	return b.name, doc, b
}

// peerRole returns the role that sends to role.
func peerRole(role string) string {
	if role == "host" {
		return "worker"
	}
	return "host"
}
