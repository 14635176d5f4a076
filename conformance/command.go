package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Bounds of one member's value in a transcript's command line (CommandTranscript): a verbose run
// shows far more.
const (
	CommandValueBytes        = 300
	CommandValueBytesVerbose = 16 << 10
)

// bulkyFields are the members of a host driver command that carry large values: the worker
// command, the manifest and the payload. A transcript line writes them after the others, so that
// a cut one hides nothing else.
var bulkyFields = []string{"command", "manifest", "payload"}

// CommandTranscript returns a driver command (spec/30-host-driver.md) as one transcript line:
// a JSON object with every member of c, id and op (ok and error, in an outcome) first, then the
// other members by name, the
// bulky ones (command, manifest, payload) last. Every member is shown; a value whose JSON text
// is longer than bound bytes is cut there and followed by its full length, so that a long
// manifest never hides the plan, scope or state a check depends on.
func CommandTranscript(c map[string]any, bound int) string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	rank := func(k string) int {
		switch {
		case k == "id":
			return 0
		case k == "op" || k == "ok" || k == "error":
			return 1
		case slices.Contains(bulkyFields, k):
			return 3
		}
		return 2
	}
	slices.SortFunc(keys, func(a, b string) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(a, b)
	})
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(jsonText(k))
		b.WriteByte(':')
		v := jsonText(c[k])
		if len(v) > bound {
			fmt.Fprintf(&b, "%s…(%d bytes)", v[:bound], len(v))
		} else {
			b.Write(v)
		}
	}
	b.WriteByte('}')
	return b.String()
}

// OutcomeTranscript returns an outcome line of a host driver for a transcript: whole when it
// is at most bound bytes; otherwise, when it is a JSON object, every member with id, ok and error
// first and each value cut at bound bytes as CommandTranscript does, so that a long payload
// never hides the key, status or exit code after it; else its first bound bytes.
func OutcomeTranscript(line []byte, bound int) string {
	if len(line) <= bound {
		return string(line)
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(line, &members) != nil {
		return string(line[:bound]) + "…"
	}
	m := make(map[string]any, len(members))
	for k, v := range members {
		m[k] = v
	}
	return CommandTranscript(m, bound)
}

// jsonText is v encoded as a driver command encodes it: HTML characters are left unescaped.
func jsonText(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Appendf(nil, "%q", fmt.Sprint(v))
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
