// Package replay runs every golden vector against the Go implementation through its public
// APIs and reports, per file, which tests pass. It is the single replay engine used by the
// vector tests (go test ./vectors) and by the interim splash-conform command.
//
// The replay never uses the generator's code: it decodes the files with package vectorfmt and
// calls impl/canonjson, impl/protocol, impl/bootstrap, impl/authorizer, impl/journal and
// impl/storage directly, so a defect in the generator shows up as a failing replay rather
// than being hidden by a shared code path.
package replay

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"

	"github.com/splashv5/conform/impl/bootstrap"
	"github.com/splashv5/conform/impl/canonjson"
	"github.com/splashv5/conform/impl/derive"
	"github.com/splashv5/conform/impl/errkind"
	"github.com/splashv5/conform/impl/protocol"
	"github.com/splashv5/conform/vectors/vectorfmt"
)

// Failure describes one test whose replay did not match the vector.
type Failure struct {
	// TcID is the failing test's ID, or 0 for a problem with the file itself.
	TcID int
	// Comment is the test's comment.
	Comment string
	// Detail says what differed.
	Detail string
}

// FileReport is the replay result of one vector file.
type FileReport struct {
	// Name is the vector file name.
	Name string
	// Valid and Invalid count the file's tests by expected result.
	Valid, Invalid int
	// Passed counts tests whose replay matched.
	Passed int
	// Failures lists the tests that did not match, in file order.
	Failures []Failure
}

// Report is the replay result of every vector file.
type Report struct {
	Files []FileReport
}

// Passed is the number of passing tests over all files.
func (r Report) Passed() int {
	n := 0
	for _, f := range r.Files {
		n += f.Passed
	}
	return n
}

// Failed is the number of failures over all files (tests and file-level problems).
func (r Report) Failed() int {
	n := 0
	for _, f := range r.Files {
		n += len(f.Failures)
	}
	return n
}

// Run replays every file of vectorfmt.FileNames found in fsys. A file that is missing or
// cannot be decoded is reported as a file-level failure.
func Run(fsys fs.FS) Report {
	var r Report
	for _, name := range vectorfmt.FileNames {
		r.Files = append(r.Files, RunFile(fsys, name))
	}
	return r
}

// runners maps each file name to its replay function.
var runners = map[string]func(fs.FS, *fileRun) error{
	vectorfmt.CanonicalJSONFile:   replayCanonicalJSON,
	vectorfmt.MessagesFile:        replayMessages,
	vectorfmt.FramesSealFile:      replayFramesSeal,
	vectorfmt.FramesOpenFile:      replayFramesOpen,
	vectorfmt.BootstrapFile:       replayBootstrap,
	vectorfmt.ManifestsFile:       replayManifests,
	vectorfmt.AttenuationFile:     replayAttenuation,
	vectorfmt.FingerprintsFile:    replayFingerprints,
	vectorfmt.AuthorizerFile:      replayAuthorizer,
	vectorfmt.JournalFile:         replayJournal,
	vectorfmt.StorageFile:         replayStorage,
	"host_scenarios.json":         replayHostScenarios, // vectorfmt.HostScenariosFile
	"ledger.json":                 replayLedger,        // vectorfmt.LedgerFile
	vectorfmt.SecretsFile:         replaySecrets,
	vectorfmt.ScriptsFile:         replayScripts,
	vectorfmt.ContractSchemasFile: replayContractSchemas,
}

// RunFile replays one vector file.
func RunFile(fsys fs.FS, name string) FileReport {
	fr := &fileRun{report: FileReport{Name: name}}
	run, ok := runners[name]
	if !ok {
		fr.fileFail("no replay is defined for this file")
		return fr.report
	}
	if err := run(fsys, fr); err != nil {
		fr.fileFail(err.Error())
	}
	return fr.report
}

// fileRun accumulates one file's results.
type fileRun struct {
	report FileReport
}

func (fr *fileRun) fileFail(detail string) {
	fr.report.Failures = append(fr.report.Failures, Failure{Detail: detail})
}

// done records the verdict of one test: problems empty means it passed.
func (fr *fileRun) done(c *vectorfmt.Case, problems []string) {
	if c.Result == vectorfmt.Invalid {
		fr.report.Invalid++
	} else {
		fr.report.Valid++
	}
	if len(problems) == 0 {
		fr.report.Passed++
		return
	}
	detail := problems[0]
	for _, p := range problems[1:] {
		detail += "; " + p
	}
	fr.report.Failures = append(fr.report.Failures, Failure{TcID: c.TcID, Comment: c.Comment, Detail: detail})
}

// ErrorKindName names the kind of an error returned by the implementation the way the
// vectors spell it: the variant name of the outermost error kind in its chain (a protocol,
// bootstrap, storage, ledger or secret broker kind, or "NonPortableNumber" for the Go-only
// sending policy), and "Serialization" for a low-level JSON reader failure. An error of no
// known kind gives "Unclassified".
func ErrorKindName(err error) string {
	if name, ok := errkind.Name(err); ok {
		return name
	}
	if errors.Is(err, canonjson.ErrSyntax) || errors.Is(err, derive.ErrDecode) {
		return "Serialization"
	}
	return "Unclassified"
}

// WrappedKindName names the cause wrapped by a bootstrap "Protocol" or "Io" error
// ("InvalidToken", "WeakSessionKey", "UnexpectedEof"), or "" when there is none.
func WrappedKindName(err error) string {
	var be *bootstrap.Error
	if !errors.As(err, &be) {
		return ""
	}
	switch be.Kind {
	case bootstrap.ErrProtocol:
		if k, ok := protocol.KindOf(be.Err); ok {
			return k.String()
		}
	case bootstrap.ErrIO:
		if errors.Is(be.Err, io.ErrUnexpectedEOF) {
			return "UnexpectedEof"
		}
	}
	return ""
}

// replayGroups replays every test of every group of a vector file, in file order. setup
// prepares one group (its number mode, its type) and returns the group's tests and the check
// that judges one of them; an error from setup is a problem with the file and stops the
// replay.
func replayGroups[G, T any](fr *fileRun, groups []G, setup func(g *G) ([]T, func(t *T) (*vectorfmt.Case, []string), error)) error {
	for gi := range groups {
		tests, check, err := setup(&groups[gi])
		if err != nil {
			return err
		}
		for ti := range tests {
			fr.done(check(&tests[ti]))
		}
	}
	return nil
}

// judge settles a single-outcome test from the error of the operation under test: it
// reports done when the test is decided (an invalid test, or a valid test whose operation
// failed) along with its problems; otherwise the caller compares the outputs.
func judge(c *vectorfmt.Case, err error) (problems []string, done bool) {
	if c.Result == vectorfmt.Invalid {
		return expectError(c, err), true
	}
	if err != nil {
		return unexpected(err), true
	}
	return nil, false
}

// expectError compares an error (or its absence) with a test's declared error kind.
func expectError(c *vectorfmt.Case, err error) []string {
	if err == nil {
		return []string{fmt.Sprintf("expected error %s, got success", c.Error)}
	}
	return wrongKind("", c.Error, err)
}

// stepOutcome compares a step's error (or its absence) with the expected kind, "" meaning
// success; onSuccess describes a successful step in the message for a missing error.
func stepOutcome(step, want, onSuccess string, err error) []string {
	switch {
	case want == "" && err != nil:
		return []string{step + ": " + unexpected(err)[0]}
	case want != "" && err == nil:
		return []string{fmt.Sprintf("%s: expected error %s, %s", step, want, onSuccess)}
	case want != "":
		return wrongKind(step+": ", want, err)
	}
	return nil
}

// wrongKind reports a non-nil error whose kind is not want, prefixing the message.
func wrongKind(prefix, want string, err error) []string {
	if got := ErrorKindName(err); got != want {
		return []string{fmt.Sprintf("%sexpected error %s, got %s (%v)", prefix, want, got, err)}
	}
	return nil
}

func unexpected(err error) []string {
	return []string{fmt.Sprintf("expected success, got %s (%v)", ErrorKindName(err), err)}
}

func compare(what, want, got string) []string {
	if want == got {
		return nil
	}
	return []string{fmt.Sprintf("%s: want %q, got %q", what, clip(want), clip(got))}
}

func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

func textOf(t *vectorfmt.Text) string {
	if t == nil {
		return ""
	}
	return string(*t)
}

// sortedNames is used for stable iteration in diagnostics.
func sortedNames(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
