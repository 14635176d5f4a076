package vectorfmt

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestTextRoundTrip checks both spellings of Text and the run threshold.
func TestTextRoundTrip(t *testing.T) {
	for _, s := range []string{
		"",
		"plain <&> \u2028 é",
		strings.Repeat("a", MinRunLength-1),
		strings.Repeat("a", MinRunLength),
		"{\"v\":\"" + strings.Repeat("x", 10000) + "\"}" + strings.Repeat("y", MinRunLength) + "z",
	} {
		b, err := json.Marshal(Text(s))
		if err != nil {
			t.Fatal(err)
		}
		compressed := strings.Contains(string(b), `"parts"`)
		if want := hasRun(s); compressed != want {
			t.Errorf("len %d: compressed=%v, want %v", len(s), compressed, want)
		}
		var back Text
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if string(back) != s {
			t.Errorf("len %d: round trip changed the text", len(s))
		}
	}
}

func hasRun(s string) bool {
	for i := 0; i+MinRunLength <= len(s); i++ {
		if strings.Count(s[i:i+MinRunLength], s[i:i+1]) == MinRunLength {
			return true
		}
	}
	return false
}

// TestTextRejectsBadParts checks the parts decoder's bounds and shape rules.
func TestTextRejectsBadParts(t *testing.T) {
	for _, in := range []string{
		`{"parts":[{"repeat":"ab","count":2}]}`,
		`{"parts":[{"repeat":"a","count":0}]}`,
		`{"parts":[{"repeat":"a","count":99999999999}]}`,
		`{"parts":[{"repeat":"é","count":2}]}`,
		`{"parts":[1]}`,
		`{"other":[]}`,
		`5`,
	} {
		var tx Text
		if err := json.Unmarshal([]byte(in), &tx); err == nil {
			t.Errorf("%s: accepted", in)
		}
	}
	var tx Text
	if err := json.Unmarshal([]byte(`{"parts":["a",{"repeat":"b","count":3},"c"]}`), &tx); err != nil || tx != "abbbc" {
		t.Errorf("parts: %q %v", tx, err)
	}
}
