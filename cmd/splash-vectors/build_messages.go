package main

import (
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/vectors/vectorfmt"
)

func buildMessages(c *checker) (string, any, *fileBuilder) {
	b := newFileBuilder(vectorfmt.MessagesFile, c)
	groups := map[canonjson.Mode]*vectorfmt.MessageGroup{}
	for _, m := range modes {
		groups[m] = &vectorfmt.MessageGroup{Type: vectorfmt.MessageDecodeType, Mode: m.String(), Tests: []vectorfmt.MessageTest{}}
	}
	for _, row := range messageCases() {
		lossy := row.lossy
		if lossy.isZero() {
			lossy = row.preserve
		}
		if (row.preserve != lossy) != hasFlag(row.flags, "ModeDependent") {
			b.failf("%q: ModeDependent flag does not match the expectations", row.comment)
		}
		for _, m := range modes {
			exp := row.preserve
			if m == canonjson.Lossy {
				exp = lossy
			}
			what := row.comment + " [" + m.String() + "]"
			t := vectorfmt.MessageTest{Case: b.newCase(row.meta, exp.err)}
			t.Input, t.InputHex = b.inputField(row.input)
			if exp.err == "" {
				t.Output = b.text(exp.out)
				indType, indSession, ok := indMessageInfo(exp.out)
				if !ok {
					b.failf("%s: expected output is not a message", what)
				}
				t.MessageType, t.SessionID = indType, indSession
			}
			groups[m].Tests = append(groups[m].Tests, t)
		}
	}
	doc := vectorfmt.Messages{}
	for _, m := range modes {
		doc.TestGroups = append(doc.TestGroups, *groups[m])
	}
	doc.Header = b.header()
	return b.name, doc, b
}
