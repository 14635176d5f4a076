package conformance

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/splashv5/conform/conformance/expect"
	"github.com/splashv5/conform/impl/bootstrap"
	"github.com/splashv5/conform/spec"
)

var (
	//go:embed html/report.tmpl
	htmlTemplateText string
	//go:embed html/report.css
	htmlStyle string
	//go:embed html/onerror.js
	htmlOnError string
	//go:embed html/report.js
	htmlScript string

	htmlTemplate = template.Must(template.New("report").Parse(htmlTemplateText))
)

// DefaultSpecBase is the default URL prefix of the specification chapters in the HTML report:
// a requirement ID links to DefaultSpecBase followed by its chapter file (for example
// 03-framing.md).
const DefaultSpecBase = "https://github.com/splashv5/conform/blob/main/spec/"

// DefaultHTMLBudget bounds the bytes of frames, standard error and expectations that the HTML
// report shows; beyond it each text is cut to its first bytes and the page says so.
const DefaultHTMLBudget = 8 << 20

// Bounds of single texts in the HTML report.
const (
	// htmlTextMax bounds one text (a frame, a standard-error excerpt, an expectation): room
	// for the largest frame, indented.
	htmlTextMax = 2 << 20
	// htmlClipped is what a text keeps once the page's budget is spent.
	htmlClipped = 1024
)

// ReplayTestKey is the public test key (32 bytes of 0x07, the key of docs/splash-wire.md) under
// which the HTML report's splash-wire command re-seals a failing frame's message. The session
// key itself never leaves the runner.
const ReplayTestKey = "0707070707070707070707070707070707070707070707070707070707070707"

// HTMLOptions configures WriteHTML.
type HTMLOptions struct {
	// SpecBase is the URL prefix of the specification chapters: a requirement ID links to
	// SpecBase + chapter file, with the ID as a text fragment. Empty means DefaultSpecBase;
	// "-" means no links.
	SpecBase string
	// Budget bounds the bytes of frames, standard error and expectations the page shows; 0
	// means DefaultHTMLBudget.
	Budget int
	// Figures are drawings shown before the checks (the explorer's learned machines).
	Figures []Figure
}

// Figure is one drawing of an HTML report: a self-contained SVG picture that the program
// itself wrote (it is embedded as is, so it must never carry text from a peer unescaped), and
// its caption.
type Figure struct {
	Caption string
	SVG     []byte
}

// PageAssets are the embedded style and scripts of the HTML report and the content security
// policy that admits exactly them: another page of the suites (the interop matrix) includes
// them to look and behave like the report. The script's table filters apply only where the
// page has them.
type PageAssets struct {
	CSP           string
	Style         template.CSS
	OnErrorScript template.JS
	Script        template.JS
}

// pageHead is the start of every HTML page of the suites, up to its opening body tag.
var pageHead = template.Must(template.New("head").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{.A.CSP}}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="{{.Generator}}">
<title>{{.Title}}</title>
<script>{{.A.OnErrorScript}}</script>
<style>{{.A.Style}}</style>
</head>
<body>`))

// Head returns the start of a page that uses a, named after its generator and titled title,
// up to its opening body tag.
func (a PageAssets) Head(generator, title string) (template.HTML, error) {
	var b strings.Builder
	err := pageHead.Execute(&b, map[string]any{"A": a, "Generator": generator, "Title": title})
	return template.HTML(b.String()), err
}

// HTMLAssets returns the assets of the HTML pages.
func HTMLAssets() PageAssets {
	return PageAssets{
		CSP: "default-src 'none'; script-src " + cspHash(htmlOnError) + " " + cspHash(htmlScript) +
			"; style-src " + cspHash(htmlStyle) + "; base-uri 'none'; form-action 'none'",
		Style: template.CSS(htmlStyle), OnErrorScript: template.JS(htmlOnError), Script: template.JS(htmlScript),
	}
}

// ErrSpecBase reports an HTMLOptions.SpecBase that is not an http, https or file URL or a
// relative reference.
var ErrSpecBase = errors.New("the specification base must be an http, https or file URL, or a relative reference")

// CheckSpecBase returns an error wrapping ErrSpecBase unless base is usable as
// HTMLOptions.SpecBase.
func CheckSpecBase(base string) error {
	if base == "" || base == "-" {
		return nil
	}
	u, err := url.Parse(base)
	if err != nil {
		return fmt.Errorf("%w: %q: %v", ErrSpecBase, base, err)
	}
	switch strings.ToLower(u.Scheme) {
	case "", "http", "https", "file":
		return nil
	}
	return fmt.Errorf("%w: %q", ErrSpecBase, base)
}

// WriteHTML writes the report as one self-contained HTML page: the summary, a table of areas
// by outcome, every check with links from its requirement IDs to the specification, and, for
// every check that kept them (failures, or every check under -v), its expectation, standard
// error, transcript with every frame in full, and a splash-wire command that replays its
// failing frame. The page loads nothing: its style and script are inline, and its content
// security policy allows only them.
func (r *Report) WriteHTML(w io.Writer, opts HTMLOptions) error {
	if err := CheckSpecBase(opts.SpecBase); err != nil {
		return err
	}
	return htmlTemplate.Execute(w, newHTMLPage(r, opts))
}

type htmlPage struct {
	Verdict       string
	Conforms      bool
	Strict        bool
	Summary       Summary
	Counts        []htmlCount
	Worker        string
	Offered       string
	Started       string
	Duration      string
	ExitCode      int
	Outcomes      []Outcome
	Areas         []htmlArea
	Totals        []int
	Checks        []*htmlCheck
	Omitted       int
	Budget        int
	SpecBase      string
	ReplayTestKey string
	PageAssets
	FormatVersion   int
	ProtocolVersion int
	Suite           SuiteInfo
	Expectations    *ExpectationsInfo
	Fixed           []htmlFixed
	Requirements    htmlRequirements
	Figures         []htmlFigure
}

type htmlFigure struct {
	Caption string
	SVG     template.HTML
}

// htmlRequirements is the page's requirement section: how many cited requirements of each
// level are in each state, and every one that is not met.
type htmlRequirements struct {
	States []RequirementState
	Levels []htmlLevelCounts
	Unmet  []htmlUnmet
}

type htmlLevelCounts struct {
	Level  string
	Counts []int // per state, in the order of htmlRequirements.States
}

type htmlUnmet struct {
	Req          htmlReq
	Level, State string
	Class        string
	Checks       []string
}

// unmetClass maps a requirement state to the outcome class of the report's style.
var unmetClass = map[RequirementState]string{ReqFailed: "fail", ReqExpectedFailure: "skip", ReqDeviates: "info"}

func newHTMLRequirements(r *Report, base string) htmlRequirements {
	out := htmlRequirements{States: []RequirementState{ReqMet, ReqFailed, ReqExpectedFailure, ReqDeviates, ReqNotApplicable}}
	levels := map[string]int{}
	for _, req := range r.Requirements() {
		level := string(req.Level)
		if level == "" {
			level = "unknown"
		}
		i, ok := levels[level]
		if !ok {
			i = len(out.Levels)
			levels[level] = i
			out.Levels = append(out.Levels, htmlLevelCounts{Level: level, Counts: make([]int, len(out.States))})
		}
		out.Levels[i].Counts[slices.Index(out.States, req.State)]++
		if class, unmet := unmetClass[req.State]; unmet {
			out.Unmet = append(out.Unmet, htmlUnmet{Req: newHTMLReq(req.ID, base), Level: level, State: string(req.State), Class: class, Checks: req.Checks})
		}
	}
	slices.SortStableFunc(out.Levels, func(a, b htmlLevelCounts) int { return strings.Compare(a.Level, b.Level) })
	// Failed MUSTs first: what a port must fix before anything else.
	slices.SortStableFunc(out.Unmet, func(a, b htmlUnmet) int {
		return cmpBool(!strings.HasPrefix(a.Level, "MUST") || a.State != string(ReqFailed), !strings.HasPrefix(b.Level, "MUST") || b.State != string(ReqFailed))
	})
	return out
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// newHTMLReq links a requirement ID to its chapter, titled with its level and text.
func newHTMLReq(id, base string) htmlReq {
	req := htmlReq{ID: id}
	if found, ok := spec.Find(id); ok {
		req.Title = string(found.Level) + ": " + Clip(found.Text, 400)
		if base != "" {
			req.URL = base + found.Chapter + "#:~:text=" + id
		}
	}
	return req
}

// htmlFixed is a listed check that no longer has its listed outcome.
type htmlFixed struct {
	ID, Outcome, Entry string
	Line               int
}

type htmlCount struct {
	Outcome Outcome
	Class   string
	N       int
}

type htmlArea struct {
	Name, Description string
	Total             int
	Counts            []int // per outcome, in the order of htmlPage.Outcomes
}

type htmlReq struct {
	ID, URL, Title string
}

type htmlCheck struct {
	ID, Area, Level, Title  string
	Outcome                 Outcome
	Class                   string
	Counted                 bool
	Requirements            []htmlReq
	Needs                   string
	Duration                string
	HasDetail, Open         bool
	Detail                  string
	Expected, Actual        htmlText
	Stderr                  htmlText
	Entries                 []htmlEntry
	Replay                  string
	ReplayFrame, ReplayNote string
	// Verdict, ListedOutcome, Reason and Line describe the expectation entry that lists
	// the check, if any.
	Verdict, ListedOutcome, Reason string
	Line                           int
}

type htmlEntry struct {
	Text  string
	Frame *htmlFrame
}

type htmlFrame struct {
	Anchor      string
	Direction   string
	Arrow       string
	Worker      int
	Kind        string
	Size        int
	Raw         htmlText
	Hex         htmlText
	Decoded     bool
	DecodeError string
	Sequence    uint64
	MessageType string
	SessionID   string
	Message     htmlText
	Tag         string
	TagVerified bool
	TagInput    htmlText
	Note        string
	Failing     bool
}

// htmlText is a text as the page shows it: possibly cut, with the number of bytes left out.
type htmlText struct {
	Text    string
	Omitted int
}

// budget hands out the page's bytes: texts are shown in full while it lasts, then cut.
type budget struct {
	left    int
	omitted int
}

// take returns s whole when it fits the page's budget and htmlTextMax, else its first bytes,
// with control characters made visible.
func (b *budget) take(s string) htmlText {
	s = visible(s)
	limit := htmlTextMax
	if b.left < len(s) {
		limit = min(limit, max(b.left, htmlClipped))
	}
	if len(s) <= limit {
		b.left -= len(s)
		return htmlText{Text: s}
	}
	shown := clipBytes(s, limit)
	b.left -= len(shown)
	b.omitted += len(s) - len(shown)
	return htmlText{Text: shown, Omitted: len(s) - len(shown)}
}

// visible replaces control characters other than line feed and tab by their Unicode control
// pictures (U+2400 to U+2421), so that a worker's escape sequences and NUL bytes show as what
// they are.
func visible(s string) string {
	if strings.IndexFunc(s, isControl) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r == 0x7f:
			return '\u2421'
		case isControl(r):
			return 0x2400 + r
		}
		return r
	}, s)
}

func isControl(r rune) bool { return r < 0x20 && r != '\n' && r != '\t' || r == 0x7f }

// clipBytes shortens s to at most n bytes, on a rune boundary.
func clipBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func newHTMLPage(r *Report, opts HTMLOptions) *htmlPage {
	assets := HTMLAssets()
	b := &budget{left: opts.Budget}
	if b.left <= 0 {
		b.left = DefaultHTMLBudget
	}
	base := opts.SpecBase
	switch base {
	case "":
		base = DefaultSpecBase
	case "-":
		base = ""
	}
	p := &htmlPage{
		Conforms:        r.ExitCode() == 0,
		Strict:          r.Strict,
		Summary:         r.Summary,
		Worker:          shellJoin(r.Worker),
		Started:         r.Started.UTC().Format(time.RFC3339),
		Duration:        r.Duration.Round(time.Millisecond).String(),
		ExitCode:        r.ExitCode(),
		Outcomes:        []Outcome{Pass, Fail, Crash, Timeout, Skip, Info},
		Budget:          opts.Budget,
		SpecBase:        base,
		ReplayTestKey:   ReplayTestKey,
		PageAssets:      assets,
		FormatVersion:   ReportFormatVersion,
		ProtocolVersion: r.Suite.ProtocolVersion,
		Suite:           r.Suite,
		Expectations:    r.Expectations,
		Verdict:         r.Verdict(),
		Requirements:    newHTMLRequirements(r, base),
	}
	if p.Budget <= 0 {
		p.Budget = DefaultHTMLBudget
	}
	for _, f := range opts.Figures {
		// The program drew the figure and escaped every text in it (see Figure).
		p.Figures = append(p.Figures, htmlFigure{Caption: f.Caption, SVG: template.HTML(f.SVG)})
	}
	var offered []string
	for _, n := range r.Offered {
		offered = append(offered, string(n))
	}
	p.Offered = OrDash(strings.Join(offered, ", "))
	s := r.Summary
	for i, n := range []int{s.Passed, s.Failed, s.Crashed, s.TimedOut, s.Skipped, s.Info} {
		p.Counts = append(p.Counts, htmlCount{Outcome: p.Outcomes[i], Class: outcomeClass(p.Outcomes[i]), N: n})
	}
	p.Areas, p.Totals = areaTable(r.Results, r.AreaDescriptions, p.Outcomes)
	for _, res := range r.Results {
		p.Checks = append(p.Checks, newHTMLCheck(res, base, b))
		if x := res.Expectation; x != nil && x.Verdict == expect.Fixed {
			p.Fixed = append(p.Fixed, htmlFixed{ID: res.ID, Outcome: string(res.Outcome), Entry: x.Entry.String(), Line: x.Entry.Line})
		}
	}
	p.Omitted = b.omitted
	return p
}

// areaTable counts the outcomes per area, areas in the order of the results.
func areaTable(results []Result, descriptions map[string]string, outcomes []Outcome) ([]htmlArea, []int) {
	index := map[string]int{}
	var areas []htmlArea
	totals := make([]int, len(outcomes)+1)
	for _, res := range results {
		name := AreaOf(res.ID)
		i, ok := index[name]
		if !ok {
			i = len(areas)
			index[name] = i
			areas = append(areas, htmlArea{Name: name, Description: descriptions[name], Counts: make([]int, len(outcomes))})
		}
		areas[i].Total++
		totals[len(outcomes)]++
		for j, o := range outcomes {
			if res.Outcome == o {
				areas[i].Counts[j]++
				totals[j]++
			}
		}
	}
	return areas, totals
}

func outcomeClass(o Outcome) string { return strings.ToLower(string(o)) }

func newHTMLCheck(res Result, base string, b *budget) *htmlCheck {
	c := &htmlCheck{
		ID: res.ID, Area: AreaOf(res.ID), Level: string(res.Level), Title: res.Title,
		Outcome: res.Outcome, Class: outcomeClass(res.Outcome), Counted: res.Counted,
		Duration: FormatDuration(res.Duration), Detail: visible(res.Detail),
	}
	var needs []string
	for _, n := range res.Needs {
		needs = append(needs, string(n))
	}
	c.Needs = strings.Join(needs, ", ")
	if x := res.Expectation; x != nil {
		c.Verdict, c.ListedOutcome, c.Reason, c.Line = string(x.Verdict), x.Entry.Outcome, x.Entry.Reason, x.Entry.Line
	}
	for _, id := range res.Requirements {
		c.Requirements = append(c.Requirements, newHTMLReq(id, base))
	}
	c.Expected, c.Actual, c.Stderr = b.take(res.Expected), b.take(res.Actual), b.take(res.Stderr)
	c.HasDetail = res.Detail != "" || res.Expected != "" || res.Stderr != "" || len(res.Transcript) > 0
	c.Open = res.Outcome.Failed()
	frames := map[int]*FrameRecord{}
	for i := range res.Frames {
		frames[res.Frames[i].Entry] = &res.Frames[i]
	}
	failing := failingFrame(res.Frames)
	for i, line := range res.Transcript {
		e := htmlEntry{Text: visible(line)}
		if rec := frames[i]; rec != nil {
			e.Frame = newHTMLFrame(res.ID, i, rec, b)
			if rec == failing {
				e.Frame.Failing = true
				c.ReplayFrame = e.Frame.Anchor
				c.Replay, c.ReplayNote = ReplayCommand(res.ID, rec)
				if c.Replay != "" && len(c.Replay) > b.left {
					b.omitted += len(c.Replay)
					c.Replay, c.ReplayNote = "", fmt.Sprintf("the command (%d bytes) does not fit this page's bound; build it from the frame in the JSON index", len(c.Replay))
				}
				b.left -= len(c.Replay)
			}
		}
		c.Entries = append(c.Entries, e)
	}
	return c
}

// failingFrame picks the frame a replay should show: the first that does not decode or whose
// tag does not verify, else the last frame the runner sent, else the last frame received.
func failingFrame(frames []FrameRecord) *FrameRecord {
	var lastSent, lastReceived *FrameRecord
	for i := range frames {
		f := &frames[i]
		if f.Failing() {
			return f
		}
		if f.Sent {
			lastSent = f
		} else {
			lastReceived = f
		}
	}
	if lastSent != nil {
		return lastSent
	}
	return lastReceived
}

func newHTMLFrame(checkID string, entry int, rec *FrameRecord, b *budget) *htmlFrame {
	f := &htmlFrame{
		Anchor: checkID + "-t" + strconv.Itoa(entry), Direction: rec.Direction(), Arrow: "←",
		Worker: rec.Worker, Kind: rec.Kind, Size: rec.Size, Decoded: rec.Decoded,
		DecodeError: rec.DecodeError, Sequence: rec.Sequence, MessageType: rec.MessageType,
		SessionID: rec.SessionID, Tag: rec.Tag, TagVerified: rec.TagVerified, Note: rec.Note,
	}
	if rec.Sent {
		f.Arrow = "→"
	}
	if utf8.Valid(rec.Raw) && bytes.IndexFunc(rec.Raw, isControl) < 0 {
		f.Raw = b.take(string(rec.Raw))
	} else {
		f.Raw = b.take(strings.ToValidUTF8(string(rec.Raw), "\uFFFD"))
		f.Hex = b.take(hex.EncodeToString(rec.Raw))
	}
	f.Raw.Omitted += rec.Size - len(rec.Raw)
	if rec.Decoded {
		f.Message = b.take(indentJSON(rec.Message))
		f.TagInput = b.take(rec.TagInput)
	}
	return f
}

// indentJSON indents a JSON text for reading (number spellings are kept as written).
func indentJSON(s string) string {
	var out bytes.Buffer
	if err := json.Indent(&out, []byte(s), "", "  "); err != nil {
		return s
	}
	return out.String()
}

// wireCommand is one splash-wire command (docs/splash-wire.md), fields in reading order.
type wireCommand struct {
	Op            string   `json:"op"`
	ID            string   `json:"id"`
	Hex           string   `json:"hex,omitempty"`
	Line          *string  `json:"line,omitempty"`
	KeyHex        string   `json:"key_hex,omitempty"`
	SessionID     *string  `json:"session_id,omitempty"`
	Role          string   `json:"role,omitempty"`
	StartSequence uint64   `json:"start_sequence,omitempty"`
	Messages      []string `json:"messages,omitempty"`
}

// ReplayCommand returns a shell command that feeds the frame to splash-wire, or why there is
// none. The command decodes the frame as it was exchanged; for a decoded frame it also
// re-seals the message under ReplayTestKey, which shows the tag input a conforming sealer
// hashes for it (the session key is never shown, so the frame's own tag cannot be checked).
func ReplayCommand(checkID string, rec *FrameRecord) (cmd, note string) {
	if rec.Size > len(rec.Raw) {
		return "", "the frame was not kept whole, so it cannot be replayed"
	}
	line := rec.Raw
	if rec.Kind == FrameBytes {
		if bytes.HasPrefix(line, []byte(bootstrap.Magic[:4])) {
			return heredoc(wireCommand{Op: "bootstrap_read", ID: checkID, Hex: hex.EncodeToString(line)}), ""
		}
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
	}
	if !utf8.Valid(line) {
		return "", "the line is not UTF-8, which splash-wire's decode cannot take as text"
	}
	text := string(line)
	cmds := []wireCommand{{Op: "decode", ID: checkID, Line: &text}}
	if rec.Decoded {
		sid := rec.SessionID
		cmds = append(cmds, wireCommand{
			Op: "seal", ID: checkID + " resealed under the test key", KeyHex: ReplayTestKey,
			SessionID: &sid, Role: rec.SenderRole(), StartSequence: rec.Sequence, Messages: []string{rec.Message},
		})
	}
	return heredoc(cmds...), ""
}

// heredoc writes splash-wire commands, one JSON object per line, as a shell here-document;
// its quoted delimiter makes the shell take every byte literally.
func heredoc(cmds ...wireCommand) string {
	var b bytes.Buffer
	b.WriteString("splash-wire -allow-nonportable <<'EOF'\n")
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, c := range cmds {
		_ = enc.Encode(c) // strings, numbers and lists of strings always encode
	}
	b.WriteString("EOF")
	return b.String()
}

// cspHash returns the content-security-policy source that allows exactly the inline text s.
func cspHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// shellJoin writes a command line with each argument quoted for a POSIX shell when needed.
func shellJoin(args []string) string {
	var out []string
	for _, a := range args {
		out = append(out, shellQuote(a))
	}
	return strings.Join(out, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%{}", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
