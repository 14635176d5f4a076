package worker

import "encoding/xml"

// The report layouts as the tests read them back: the JSON report's frames, suite and
// expectation verdicts, and the JUnit report's counts.

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

type jsonSuite struct {
	Name          string `json:"name"`
	Version       string `json:"version"`
	Checks        int    `json:"checks"`
	CatalogDigest string `json:"catalog_digest"`
}

type jsonExpect struct {
	Verdict string `json:"verdict"`
	Outcome string `json:"outcome"`
	Reason  string `json:"reason"`
	Line    int    `json:"line"`
	Entry   string `json:"entry"`
}

type junitSuites struct {
	XMLName  xml.Name `xml:"testsuites"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Skipped  int      `xml:"skipped,attr"`
}
