package replay_test

import (
	"io/fs"
	"regexp"
	"testing"
	"testing/fstest"

	"github.com/splashv5/conform/vectors"
	"github.com/splashv5/conform/vectors/replay"
	"github.com/splashv5/conform/vectors/vectorfmt"
)

// firstErrorKind matches the first declared, non-empty error kind of a vector file.
var firstErrorKind = regexp.MustCompile(`"error":\s*"[A-Za-z]+"`)

// TestReplayDetectsEditedErrorKind edits one expected error kind in each vector file and
// checks that the replay of that file then reports a failing test, not a file problem.
func TestReplayDetectsEditedErrorKind(t *testing.T) {
	for _, name := range vectorfmt.FileNames {
		t.Run(name, func(t *testing.T) {
			data, err := fs.ReadFile(vectors.FS, name)
			if err != nil {
				t.Fatal(err)
			}
			loc := firstErrorKind.FindIndex(data)
			if loc == nil {
				t.Fatal("the file declares no error kind")
			}
			edited := append(append(append([]byte{}, data[:loc[1]-1]...), "Edited"...), data[loc[1]-1:]...)
			r := replay.RunFile(fstest.MapFS{name: {Data: edited}}, name)
			if len(r.Failures) == 0 {
				t.Fatal("the replay passed with an edited error kind")
			}
			for _, f := range r.Failures {
				if f.TcID == 0 {
					t.Fatalf("file-level failure instead of a failing test: %s", f.Detail)
				}
			}
		})
	}
}
