package implreport

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// maxReportBytes bounds one input report: a JSON index keeps at most 4 MiB of frames per check,
// so a whole run with transcripts fits well within it.
const maxReportBytes = 256 << 20

// Input is one report given on the command line: the file and, for a worker or host report,
// the name of the implementation it judges; for one interop pair, HOST/WORKER.
type Input struct {
	Name string
	File string
}

// ParseInput parses NAME=FILE or FILE. Without a name, a worker or host report is named after
// its file (the base name without .json); a matrix report names its implementations itself.
func ParseInput(arg string) Input {
	if name, file, ok := strings.Cut(arg, "="); ok && name != "" && file != "" {
		return Input{Name: name, File: file}
	}
	return Input{File: arg}
}

// Source is one report read: where it came from and what suite wrote it.
type Source struct {
	File string
	// Suite is worker, host or interop.
	Suite string
	// Version is the suite version that wrote it; empty for a matrix report, which does not
	// record it.
	Version string
	// CatalogDigest is the digest of the catalog it ran, when recorded.
	CatalogDigest string
	// FormatVersion is the report layout's version.
	FormatVersion int
}

// run is one suite run over one implementation, or one interop pair.
type run struct {
	source Source
	// impl is the implementation a worker or host run judges; host and worker name the pair
	// of an interop run.
	impl, host, worker string
	results            []result
}

// result is one check's outcome as a report records it.
type result struct {
	ID           string   `json:"id"`
	Level        string   `json:"level"`
	Title        string   `json:"title"`
	Requirements []string `json:"requirements"`
	Outcome      string   `json:"outcome"`
	Detail       string   `json:"detail"`
	Transcript   []string `json:"transcript"`
	// Expected is set when an expectations file lists the failure as it is.
	Expected bool `json:"-"`
}

// indexReport is the part of a JSON index (format 2 or 3) the merge reads.
type indexReport struct {
	Tool          string `json:"tool"`
	FormatVersion int    `json:"format_version"`
	Suite         struct {
		Name          string `json:"name"`
		Version       string `json:"version"`
		CatalogDigest string `json:"catalog_digest"`
	} `json:"suite"`
	Results []struct {
		result
		Expectation *struct {
			Verdict string `json:"verdict"`
		} `json:"expectation"`
	} `json:"results"`
}

// matrixReport is the part of an interop matrix report (format 1) the merge reads.
type matrixReport struct {
	FormatVersion int `json:"format_version"`
	Suite         *struct {
		Version       string `json:"version"`
		CatalogDigest string `json:"catalog_digest"`
	} `json:"suite"`
	Cells []struct {
		Host      string `json:"host"`
		Worker    string `json:"worker"`
		Error     string `json:"error"`
		Scenarios []struct {
			result
			Expectation string `json:"expectation"`
		} `json:"scenarios"`
	} `json:"cells"`
}

// ErrInput reports an input that is not a report this package can merge.
var ErrInput = errors.New("not a splash-conform report")

// readInput reads one input into its runs: one for a worker, host or interop-pair report, one
// per cell for a matrix report.
func readInput(in Input) ([]run, error) {
	f, err := os.Open(in.File)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxReportBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxReportBytes {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrInput, in.File, maxReportBytes)
	}
	return parseReport(in, data)
}

func parseReport(in Input, data []byte) ([]run, error) {
	var probe struct {
		Tool  string          `json:"tool"`
		Cells json.RawMessage `json:"cells"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInput, in.File, err)
	}
	switch {
	case probe.Tool == "splash-conform":
		return parseIndex(in, data)
	case probe.Cells != nil:
		return parseMatrix(in, data)
	}
	return nil, fmt.Errorf("%w: %s is neither a JSON index (-json) nor an interop matrix report", ErrInput, in.File)
}

func parseIndex(in Input, data []byte) ([]run, error) {
	var idx indexReport
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&idx); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInput, in.File, err)
	}
	if idx.FormatVersion < 2 || idx.FormatVersion > 3 {
		return nil, fmt.Errorf("%w: %s has JSON index format %d; this runner reads formats 2 and 3 (a newer runner wrote it: use that runner's report command)", ErrInput, in.File, idx.FormatVersion)
	}
	r := run{source: Source{File: in.File, Suite: idx.Suite.Name, Version: idx.Suite.Version, CatalogDigest: idx.Suite.CatalogDigest, FormatVersion: idx.FormatVersion}}
	switch idx.Suite.Name {
	case "worker", "host":
		r.impl = in.Name
		if r.impl == "" {
			r.impl = strings.TrimSuffix(filepath.Base(in.File), ".json")
		}
		if strings.Contains(r.impl, "/") {
			return nil, fmt.Errorf("%s: implementation name %q holds a slash; a %s report judges one implementation", in.File, r.impl, idx.Suite.Name)
		}
	case "interop":
		host, worker, ok := strings.Cut(in.Name, "/")
		if !ok || host == "" || worker == "" || strings.Contains(worker, "/") {
			return nil, fmt.Errorf("%s: an interop pair's report judges two implementations: name them HOST/WORKER=%s", in.File, in.File)
		}
		r.host, r.worker = host, worker
	default:
		return nil, fmt.Errorf("%w: %s names suite %q", ErrInput, in.File, idx.Suite.Name)
	}
	for _, res := range idx.Results {
		x := res.result
		x.Expected = res.Expectation != nil && res.Expectation.Verdict == "expected"
		r.results = append(r.results, x)
	}
	return []run{r}, nil
}

func parseMatrix(in Input, data []byte) ([]run, error) {
	var m matrixReport
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInput, in.File, err)
	}
	if m.FormatVersion != 1 {
		return nil, fmt.Errorf("%w: %s has matrix format %d; this runner reads format 1", ErrInput, in.File, m.FormatVersion)
	}
	if in.Name != "" {
		return nil, fmt.Errorf("%s: a matrix report names its implementations itself; give it without NAME=", in.File)
	}
	src := Source{File: in.File, Suite: "interop", FormatVersion: m.FormatVersion}
	if m.Suite != nil {
		src.Version, src.CatalogDigest = m.Suite.Version, m.Suite.CatalogDigest
	}
	var runs []run
	for _, c := range m.Cells {
		if c.Host == "" || c.Worker == "" {
			return nil, fmt.Errorf("%w: %s has a cell without its host or worker", ErrInput, in.File)
		}
		r := run{source: src, host: c.Host, worker: c.Worker}
		for _, s := range c.Scenarios {
			x := s.result
			x.Expected = s.Expectation == "expected"
			r.results = append(r.results, x)
		}
		runs = append(runs, r)
	}
	return runs, nil
}
