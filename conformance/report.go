package conformance

import (
	"bytes"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/splashv5/conform/conformance/expect"
)

var (
	//go:embed schema/report.schema.json
	reportSchema []byte
	//go:embed schema/junit.schema.json
	junitSchema []byte
)

// ReportSchema returns the JSON Schema of the JSON index (schema/report.schema.json).
func ReportSchema() []byte { return bytes.Clone(reportSchema) }

// JUnitSchema returns the JSON Schema of the JUnit report's element tree
// (schema/junit.schema.json).
func JUnitSchema() []byte { return bytes.Clone(junitSchema) }

// ReportFormatVersion is the version of the JSON report layout (schema/report.schema.json).
const ReportFormatVersion = 3

// Result is the outcome of one check.
type Result struct {
	// ID, Level, Title, Requirements and Needs repeat the check.
	ID           string
	Level        Level
	Title        string
	Requirements []string
	Needs        []Need
	// Outcome is the verdict.
	Outcome Outcome
	// Counted says whether the outcome decides the exit status (MUST checks, SHOULD checks
	// under --strict; never SKIP or INFO).
	Counted bool
	// Duration is the wall time of the check, worker start and teardown included.
	Duration time.Duration
	// Detail explains a verdict other than PASS.
	Detail string
	// Expected and Actual are set for FAIL.
	Expected string
	Actual   string
	// Stderr is a bounded excerpt of the workers' standard error (failures, or -v).
	Stderr string
	// Transcript lists the frames and events of the check (failures, or -v).
	Transcript []string
	// Frames holds, in full, the frames the transcript reports (failures, or -v).
	Frames []FrameRecord
	// Expectation is set when an expectations file lists the check (ApplyExpectations).
	Expectation *Expectation
}

// Summary counts the outcomes of a run.
type Summary struct {
	Total    int `json:"total"`
	Passed   int `json:"passed"`
	Failed   int `json:"failed"`
	Crashed  int `json:"crashed"`
	TimedOut int `json:"timed_out"`
	Skipped  int `json:"skipped"`
	Info     int `json:"info"`
	// Failing is the number of counted checks that did not pass and that no expectation
	// lists; the exit status is 1 when it is not zero.
	Failing int `json:"failing"`
	// Expected is the number of checks whose outcome an expectations file lists as it is.
	Expected int `json:"expected"`
	// Fixed is the number of listed checks that no longer have the listed outcome and do
	// not fail: their entries are stale.
	Fixed int `json:"fixed"`
}

// Report is the result of one run.
type Report struct {
	// Suite names the suite, its version and its catalog digest.
	Suite SuiteInfo
	// Expectations is set when the run was judged against an expectations file.
	Expectations *ExpectationsInfo
	Worker       []string
	Strict       bool
	Offered      []Need
	Started      time.Time
	Duration     time.Duration
	Summary      Summary
	Results      []Result
	// AreaDescriptions says what each check area covers, by area name, for the area table of
	// the HTML report; a suite whose areas are not described leaves it empty.
	AreaDescriptions map[string]string
}

// NewReport is the report of a run of suite against peer (the command or commands under test)
// that started at started and ends now, with its summary.
func NewReport(suite SuiteInfo, peer []string, strict bool, started time.Time, results []Result) *Report {
	return &Report{Suite: suite, Worker: peer, Strict: strict, Started: started, Duration: time.Since(started), Results: results,
		Summary: Summarize(results)}
}

// Summarize counts the outcomes of results.
func Summarize(results []Result) Summary {
	var s Summary
	for _, r := range results {
		s.Total++
		switch r.Outcome {
		case Pass:
			s.Passed++
		case Fail:
			s.Failed++
		case Crash:
			s.Crashed++
		case Timeout:
			s.TimedOut++
		case Skip:
			s.Skipped++
		case Info:
			s.Info++
		}
		if r.Failing() {
			s.Failing++
		}
		switch r.verdict() {
		case expect.Expected:
			s.Expected++
		case expect.Fixed:
			s.Fixed++
		}
	}
	return s
}

// ExitCode returns 0 when every counted check passed or failed as the expectations list, and
// 1 otherwise (also, under -expect-strict, when a listed check no longer fails).
func (r *Report) ExitCode() int {
	if r.Summary.Failing > 0 || r.Expectations != nil && r.Expectations.Strict && r.Summary.Fixed > 0 {
		return 1
	}
	return 0
}

// ClosingLine returns the final line of the human output: "N passed, N failed, N skipped".
// INFO outcomes count as passed; CRASH and TIMEOUT count as failed.
func (r *Report) ClosingLine() string {
	s := r.Summary
	failed := s.Failed + s.Crashed + s.TimedOut
	line := fmt.Sprintf("%d passed, %d failed, %d skipped", s.Passed+s.Info, failed, s.Skipped)
	if r.Expectations != nil {
		line += fmt.Sprintf(" (%d failures expected, %d new, %d fixed)", r.expectedFailures(), s.Failing, s.Fixed)
	}
	return line
}

// jsonReport is the on-disk layout of the JSON index (schema/report.schema.json).
type jsonReport struct {
	Tool            string            `json:"tool"`
	FormatVersion   int               `json:"format_version"`
	ProtocolVersion int               `json:"protocol_version"`
	Suite           jsonSuite         `json:"suite"`
	Expectations    *jsonExpectations `json:"expectations,omitempty"`
	Worker          []string          `json:"worker"`
	Strict          bool              `json:"strict"`
	Offered         []string          `json:"offered"`
	Started         string            `json:"started"`
	DurationSeconds float64           `json:"duration_seconds"`
	ExitCode        int               `json:"exit_code"`
	Summary         Summary           `json:"summary"`
	Requirements    []jsonRequirement `json:"requirements"`
	Results         []jsonResult      `json:"results"`
}

// jsonRequirement is one entry of the JSON index's requirement list (format version 3).
type jsonRequirement struct {
	ID      string   `json:"id"`
	Level   string   `json:"level"`
	Chapter string   `json:"chapter"`
	State   string   `json:"state"`
	Checks  []string `json:"checks"`
}

type jsonResult struct {
	ID              string      `json:"id"`
	Level           string      `json:"level"`
	Title           string      `json:"title"`
	Requirements    []string    `json:"requirements"`
	Needs           []string    `json:"needs"`
	Outcome         string      `json:"outcome"`
	Counted         bool        `json:"counted"`
	DurationSeconds float64     `json:"duration_seconds"`
	Detail          string      `json:"detail,omitempty"`
	Expected        string      `json:"expected,omitempty"`
	Actual          string      `json:"actual,omitempty"`
	Stderr          string      `json:"stderr,omitempty"`
	Transcript      []string    `json:"transcript,omitempty"`
	Frames          []jsonFrame `json:"frames,omitempty"`
	Expectation     *jsonExpect `json:"expectation,omitempty"`
}

type jsonSuite struct {
	Name          string `json:"name"`
	Version       string `json:"version"`
	Checks        int    `json:"checks"`
	CatalogDigest string `json:"catalog_digest"`
}

type jsonExpectations struct {
	File    string `json:"file"`
	Strict  bool   `json:"strict"`
	Entries int    `json:"entries"`
}

type jsonExpect struct {
	Verdict string `json:"verdict"`
	Outcome string `json:"outcome"`
	Reason  string `json:"reason"`
	Line    int    `json:"line"`
	Entry   string `json:"entry"`
}

type jsonFrame struct {
	Entry       int     `json:"entry"`
	Worker      int     `json:"worker"`
	Direction   string  `json:"direction"`
	Kind        string  `json:"kind"`
	Size        int     `json:"size"`
	Raw         *string `json:"raw,omitempty"`
	RawHex      *string `json:"raw_hex,omitempty"`
	DecodeError string  `json:"decode_error,omitempty"`
	Sequence    *uint64 `json:"sequence,omitempty"`
	MessageType string  `json:"message_type,omitempty"`
	SessionID   *string `json:"session_id,omitempty"`
	Message     string  `json:"message,omitempty"`
	Tag         string  `json:"auth_tag,omitempty"`
	TagVerified *bool   `json:"tag_verified,omitempty"`
	TagInput    string  `json:"tag_input,omitempty"`
	Note        string  `json:"note,omitempty"`
}

// jsonFrames converts frame records to their JSON layout: raw is the text of a UTF-8 record,
// raw_hex the bytes of any other.
func jsonFrames(frames []FrameRecord) []jsonFrame {
	var out []jsonFrame
	for _, f := range frames {
		jf := jsonFrame{
			Entry: f.Entry, Worker: f.Worker, Direction: f.Direction(), Kind: f.Kind, Size: f.Size,
			DecodeError: f.DecodeError, Note: f.Note,
		}
		if utf8.Valid(f.Raw) {
			raw := string(f.Raw)
			jf.Raw = &raw
		} else {
			raw := hex.EncodeToString(f.Raw)
			jf.RawHex = &raw
		}
		if f.Decoded {
			seq, sid, ok := f.Sequence, f.SessionID, f.TagVerified
			jf.Sequence, jf.SessionID, jf.TagVerified = &seq, &sid, &ok
			jf.MessageType, jf.Message, jf.Tag, jf.TagInput = f.MessageType, f.Message, f.Tag, f.TagInput
		}
		out = append(out, jf)
	}
	return out
}

func seconds(d time.Duration) float64 {
	return math.Round(d.Seconds()*1e6) / 1e6
}

// WriteJSON writes the report as the JSON index described by schema/report.schema.json.
func (r *Report) WriteJSON(w io.Writer) error {
	out := jsonReport{
		Tool:            "splash-conform",
		FormatVersion:   ReportFormatVersion,
		ProtocolVersion: r.Suite.ProtocolVersion,
		Suite:           jsonSuite{Name: r.Suite.Name, Version: r.Suite.Version, Checks: r.Suite.Checks, CatalogDigest: r.Suite.CatalogDigest},
		Worker:          r.Worker,
		Strict:          r.Strict,
		Offered:         []string{},
		Started:         r.Started.UTC().Format(time.RFC3339Nano),
		DurationSeconds: seconds(r.Duration),
		ExitCode:        r.ExitCode(),
		Summary:         r.Summary,
		Requirements:    []jsonRequirement{},
		Results:         []jsonResult{},
	}
	for _, req := range r.Requirements() {
		out.Requirements = append(out.Requirements, jsonRequirement{
			ID: req.ID, Level: string(req.Level), Chapter: req.Chapter, State: string(req.State), Checks: req.Checks,
		})
	}
	if x := r.Expectations; x != nil {
		out.Expectations = &jsonExpectations{File: x.File, Strict: x.Strict, Entries: x.Entries}
	}
	for _, n := range r.Offered {
		out.Offered = append(out.Offered, string(n))
	}
	for _, res := range r.Results {
		jr := jsonResult{
			ID: res.ID, Level: string(res.Level), Title: res.Title,
			Requirements: append([]string{}, res.Requirements...), Needs: []string{},
			Outcome: string(res.Outcome), Counted: res.Counted, DurationSeconds: seconds(res.Duration),
			Detail: res.Detail, Expected: res.Expected, Actual: res.Actual, Stderr: res.Stderr,
			Transcript: res.Transcript, Frames: jsonFrames(res.Frames),
		}
		for _, n := range res.Needs {
			jr.Needs = append(jr.Needs, string(n))
		}
		if x := res.Expectation; x != nil {
			jr.Expectation = &jsonExpect{Verdict: string(x.Verdict), Outcome: x.Entry.Outcome, Reason: x.Entry.Reason, Line: x.Entry.Line, Entry: x.Entry.String()}
		}
		out.Results = append(out.Results, jr)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// JUnit XML layout, as rendered by common CI systems.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string          `xml:"name,attr"`
	Tests     int             `xml:"tests,attr"`
	Failures  int             `xml:"failures,attr"`
	Errors    int             `xml:"errors,attr"`
	Skipped   int             `xml:"skipped,attr"`
	Time      string          `xml:"time,attr"`
	Timestamp string          `xml:"timestamp,attr"`
	Props     *junitProps     `xml:"properties,omitempty"`
	Cases     []junitTestCase `xml:"testcase"`
}

type junitTestCase struct {
	Name       string         `xml:"name,attr"`
	Classname  string         `xml:"classname,attr"`
	Time       string         `xml:"time,attr"`
	Properties *junitProps    `xml:"properties,omitempty"`
	Failure    *junitProblem  `xml:"failure,omitempty"`
	Error      *junitProblem  `xml:"error,omitempty"`
	Skipped    *junitSkipped  `xml:"skipped,omitempty"`
	SystemOut  *junitCharData `xml:"system-out,omitempty"`
	SystemErr  *junitCharData `xml:"system-err,omitempty"`
}

type junitProps struct {
	Props []junitProp `xml:"property"`
}

type junitProp struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

type junitCharData struct {
	Text string `xml:",chardata"`
}

func xmlSeconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// WriteJUnit writes the report as JUnit XML: one testsuite per area, one testcase per check.
// Each testsuite's properties name the suite, its version, the protocol version and the
// catalog digest (and the expectations file, if any). Counted failures are <failure> (FAIL) or
// <error> (CRASH, TIMEOUT); SKIP and failures an expectations file lists are <skipped>; a
// listed check that no longer fails is a <failure> under -expect-strict; INFO and uncounted
// deviations are written to <system-out>.
func (r *Report) WriteJUnit(w io.Writer) error {
	suites := junitSuites{Name: "splash-conform", Time: xmlSeconds(r.Duration)}
	suiteProps := []junitProp{
		{Name: "suite", Value: r.Suite.Name},
		{Name: "suite_version", Value: r.Suite.Version},
		{Name: "protocol_version", Value: fmt.Sprint(r.Suite.ProtocolVersion)},
		{Name: "catalog_digest", Value: r.Suite.CatalogDigest},
	}
	if r.Expectations != nil {
		suiteProps = append(suiteProps, junitProp{Name: "expectations", Value: r.Expectations.File})
	}
	index := map[string]int{}
	for _, res := range r.Results {
		area := AreaOf(res.ID)
		i, ok := index[area]
		if !ok {
			i = len(suites.Suites)
			index[area] = i
			suites.Suites = append(suites.Suites, junitSuite{Name: "conformance." + area, Timestamp: r.Started.UTC().Format("2006-01-02T15:04:05"),
				Props: &junitProps{Props: suiteProps}})
		}
		s := &suites.Suites[i]
		tc := junitTestCase{
			Name:      res.ID + ": " + res.Title,
			Classname: "conformance." + area,
			Time:      xmlSeconds(res.Duration),
			Properties: &junitProps{Props: []junitProp{
				{Name: "level", Value: string(res.Level)},
				{Name: "requirements", Value: strings.Join(res.Requirements, " ")},
				{Name: "outcome", Value: string(res.Outcome)},
			}},
		}
		body := res.Detail
		if res.Expected != "" {
			body = "expected: " + res.Expected + "\nactual:   " + res.Actual
		}
		if len(res.Requirements) > 0 {
			body += "\nrequirements: " + strings.Join(res.Requirements, ", ")
		}
		listed := ""
		if x := res.Expectation; x != nil {
			tc.Properties.Props = append(tc.Properties.Props,
				junitProp{Name: "expectation", Value: string(x.Verdict)},
				junitProp{Name: "expected_outcome", Value: x.Entry.Outcome},
				junitProp{Name: "reason", Value: x.Entry.Reason})
			listed = fmt.Sprintf("listed as %s in %s line %d: %s", x.Entry.Outcome, r.Expectations.File, x.Entry.Line, x.Entry.Reason)
		}
		switch {
		case res.Outcome == Skip:
			tc.Skipped = &junitSkipped{Message: res.Detail}
			s.Skipped++
		case res.verdict() == expect.Expected && res.Outcome.Failed():
			tc.Skipped = &junitSkipped{Message: "expected failure, " + listed}
			tc.SystemOut = &junitCharData{Text: string(res.Outcome) + ": " + body}
			s.Skipped++
		case res.Failing() && res.Outcome == Fail:
			tc.Failure = &junitProblem{Message: Clip(res.Detail, 500), Type: string(res.Outcome), Text: body}
			s.Failures++
		case res.Failing():
			tc.Error = &junitProblem{Message: Clip(res.Detail, 500), Type: string(res.Outcome), Text: body}
			s.Errors++
		case res.verdict() == expect.Fixed && r.Expectations.Strict:
			tc.Failure = &junitProblem{Message: "fixed: " + listed, Type: "FIXED",
				Text: "the check is now " + string(res.Outcome) + "; delete this entry: " + res.Expectation.Entry.String()}
			s.Failures++
		case res.verdict() == expect.Fixed:
			tc.SystemOut = &junitCharData{Text: "fixed: now " + string(res.Outcome) + ", " + listed + "; delete this entry: " + res.Expectation.Entry.String()}
		case res.Outcome != Pass:
			tc.SystemOut = &junitCharData{Text: string(res.Outcome) + ": " + body}
		}
		if len(res.Transcript) > 0 {
			text := strings.Join(res.Transcript, "\n")
			if tc.SystemOut != nil {
				tc.SystemOut.Text += "\n\n" + text
			} else {
				tc.SystemOut = &junitCharData{Text: text}
			}
		}
		if res.Stderr != "" {
			tc.SystemErr = &junitCharData{Text: res.Stderr}
		}
		s.Tests++
		s.Cases = append(s.Cases, tc)
	}
	for i := range suites.Suites {
		s := &suites.Suites[i]
		var d time.Duration
		for _, res := range r.Results {
			if "conformance."+AreaOf(res.ID) == s.Name {
				d += res.Duration
			}
		}
		s.Time = xmlSeconds(d)
		suites.Tests += s.Tests
		suites.Failures += s.Failures
		suites.Errors += s.Errors
		suites.Skipped += s.Skipped
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(suites); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// AreaOf returns the AREA of a check ID: the word before the number (CNF-AREA-NN, and
// CNF-IOP-AREA-NN for an interop scenario).
func AreaOf(id string) string {
	parts := strings.Split(id, "-")
	if len(parts) >= 3 {
		return parts[len(parts)-2]
	}
	return id
}
