package worker

import (
	"os"
	"strconv"
	"strings"

	"github.com/splashv5/conform/conformance"
)

// invalidScope is a journal scope that is not a token (it holds a space), so it makes no
// record key (WRK-080).
const invalidScope = "two words"

// ProcChecks returns the checks of area PROC: process behaviour, diagnostics and key hygiene.
func ProcChecks() []*Check {
	return []*Check{

		&Check{
			ID: "CNF-PROC-01", Level: conformance.Must, Requirements: []string{"WRK-093", "WRK-092"},
			Title: "a rejected frame leaves one diagnostic on standard error naming the class and the error kind",
			Run: func(t *T) {
				w := t.baseline()
				w.writeLine(flipTagDigit(w.seal(w.invocation("req-1", toolTextEcho, text("hello")))))
				w.expectExit(exitTransport, "an invoke with a wrong tag")
				diag := strings.ToLower(w.stderr.Excerpt())
				for _, word := range []string{"transport", "invalidauthenticationtag"} {
					if !strings.Contains(diag, word) {
						t.Failf("a diagnostic naming the class \"transport\" and the kind InvalidAuthenticationTag",
							"standard error: "+orNone([]string{strings.TrimSpace(w.stderr.Excerpt())}))
					}
				}
			},
		},
		&Check{
			ID: "CNF-PROC-02", Level: conformance.Must, Requirements: []string{"WRK-093", "FRM-040", "BOOT-021", "FRM-043", "BOOT-017", "ERR-014"},
			Title: "no output of a worker (standard error, frames, journal, effect log) ever contains its session key or its storage key, in any encoding, whatever it rejects",
			Run: func(t *T) {
				// After every check the runner looks for the session key and, when it gave the
				// worker one with {storage-key}, the storage key, in every encoding it knows, in
				// the worker's standard error and frames and in the journal and effect log the
				// check leaves. This check makes the worker write all of them and provokes
				// several diagnostics in a row. The runner passes the key only on the pipe.
				w := t.baseline()
				w.expectResult(w.sendInvoke(toolTextEcho, text("before")))
				if t.run.offers[NeedDurable] {
					t.expectStatus("the dispatch", succeededRecord("proc-02", `"written"`), w.dispatch("proc-02", `{"value":"written"}`))
				}
				w.writeLine(w.forge(w.host.NextOutgoing()+1, w.invocation("req-x", toolTextEcho, text("gap"))))
				w.expectExit(exitTransport, "a frame that skips a sequence number")
				b := t.launch()
				b.write(b.bootstrapBytes()[:30])
				b.closeInput()
				b.expectExit(exitBootstrap, "a bootstrap cut off inside the key")
			},
		},
		&Check{
			ID: "CNF-PROC-03", Level: conformance.Must, Requirements: []string{"WRK-090", "WRK-091", "FRM-031"},
			Title: "the answer to each frame is flushed before the worker reads again, and nothing else is written",
			Run: func(t *T) {
				w := t.baseline()
				for _, s := range []string{"a", "b", "c"} {
					t.expectPayload("the echo", text(s), w.invoke(toolTextEcho, text(s)))
				}
				w.sendInvoke(toolTextFail, text("stop"))
				w.expectExit(exitAdapter, "an adapter failure after three answers")
				if w.answers != 3 {
					t.Failf("exactly three frames", strconv.Itoa(w.answers)+" frames")
				}
			},
		},
		&Check{
			ID: "CNF-PROC-04", Level: conformance.Must, Requirements: []string{"WRK-080", "WRK-092"},
			Needs: []Need{NeedJournal},
			Title: "a worker started under a journal scope that is not a token refuses to run, with no answer to its bootstrap, and creates no journal file",
			Run: func(t *T) {
				if !t.run.command.Has(conformance.PlaceholderScope) {
					t.Skipf("the worker command has no %s placeholder, so the runner cannot start it under another journal scope", conformance.PlaceholderScope)
				}
				w := t.launchInScope(invalidScope)
				// A worker may refuse before it reads anything; one that reads its bootstrap
				// first gets it.
				w.writeRaw(w.bootstrapBytes())
				w.expectExit(exitUsage, "a start under the journal scope "+strconv.Quote(invalidScope)+" (a bootstrap written, input left open)")
				if _, err := os.Lstat(t.journalPath()); err == nil {
					t.Failf("no journal file at {journal}: a scope that makes no record key is refused before any store is created"+t.Cite("WRK-080"),
						"a journal file at {journal}; check the scope before opening or creating the journal")
				}
			},
		},
	}
}
