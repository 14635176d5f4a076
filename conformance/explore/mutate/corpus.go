package mutate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Signature is the coverage key of a run: its abstract outputs (text forms), in order, with
// each run of equal consecutive outputs counted in a power-of-two bucket (1, 2, 3-4, 5-8, ...).
// It is the first 16 bytes, as 32 lowercase hex digits, of the SHA-256 of, for each run, the
// output's text, the byte 0x1F, the bucket's upper bound in decimal and the byte 0x1E. Two runs
// that differ only in how often an output repeats within a bucket share a key, so a long
// session that loops does not flood the corpus.
func Signature(outputs []string) string {
	var b strings.Builder
	for i := 0; i < len(outputs); {
		j := i
		for j < len(outputs) && outputs[j] == outputs[i] {
			j++
		}
		b.WriteString(outputs[i])
		b.WriteByte(0x1f)
		b.WriteString(strconv.Itoa(bucket(j - i)))
		b.WriteByte(0x1e)
		i = j
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:16])
}

// bucket returns the power-of-two bucket of a count: 1, 2, 4, 8, ...
func bucket(n int) int {
	b := 1
	for b < n {
		b *= 2
	}
	return b
}

// EntryVersion is the version of the corpus entry format.
const EntryVersion = 1

// Step is one mutation of a kept input: the frame of Symbols[At] is mutated by Kind with Seed.
type Step struct {
	At   int    `json:"at"`
	Kind Kind   `json:"kind"`
	Seed uint64 `json:"seed"`
}

// Entry is one kept input: the recipe that rebuilds it over a fresh session (the abstract word
// and the mutations of its frames), and the signature of the behaviour it reached. It holds no
// frame bytes, so no session key or tag is ever written.
type Entry struct {
	Version   int      `json:"version"`
	Symbols   []string `json:"symbols"`
	Mutations []Step   `json:"mutations"`
	Signature string   `json:"signature"`
}

// ErrEntry is returned (wrapped) for an entry that does not decode or does not hold together.
var ErrEntry = errors.New("mutate: bad corpus entry")

// MaxEntryBytes bounds an entry file.
const MaxEntryBytes = 1 << 20

// Validate checks the entry: its version, a signature, and mutations inside the word in
// increasing order with known kinds.
func (e Entry) Validate() error {
	if e.Version != EntryVersion {
		return fmt.Errorf("%w: version %d, want %d", ErrEntry, e.Version, EntryVersion)
	}
	if e.Signature == "" {
		return fmt.Errorf("%w: no signature", ErrEntry)
	}
	last := -1
	for _, m := range e.Mutations {
		if m.At <= last || m.At >= len(e.Symbols) {
			return fmt.Errorf("%w: mutation at %d (word of %d, previous at %d)", ErrEntry, m.At, len(e.Symbols), last)
		}
		if !slices.Contains(Kinds, m.Kind) {
			return fmt.Errorf("%w: unknown mutator %q", ErrEntry, m.Kind)
		}
		last = m.At
	}
	return nil
}

// Encode returns the entry's file name (the first 32 hex digits of the SHA-256 of its
// content, then ".json") and its content: indented JSON with a final newline.
func (e Entry) Encode() (name string, data []byte, err error) {
	if err := e.Validate(); err != nil {
		return "", nil, err
	}
	if e.Mutations == nil {
		e.Mutations = []Step{}
	}
	data, err = json.MarshalIndent(e, "", "  ")
	if err != nil {
		return "", nil, err
	}
	data = append(data, '\n')
	return contentName(data), data, nil
}

// contentName is the file name of an entry file: the first 32 hex digits of the SHA-256 of its
// bytes, then ".json".
func contentName(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:16]) + ".json"
}

// DecodeEntry decodes and validates one entry file; unknown fields are refused.
func DecodeEntry(data []byte) (Entry, error) {
	if len(data) > MaxEntryBytes {
		return Entry{}, fmt.Errorf("%w: %d bytes, at most %d", ErrEntry, len(data), MaxEntryBytes)
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	var e Entry
	if err := d.Decode(&e); err != nil {
		return Entry{}, fmt.Errorf("%w: %w", ErrEntry, err)
	}
	if d.More() {
		return Entry{}, fmt.Errorf("%w: data after the entry", ErrEntry)
	}
	return e, e.Validate()
}

// Corpus is the set of kept inputs, one per signature: an input is kept when it reached a
// signature no kept input has.
type Corpus struct {
	bySignature map[string]Entry
}

// NewCorpus returns an empty corpus.
func NewCorpus() *Corpus { return &Corpus{bySignature: map[string]Entry{}} }

// Offer keeps e when its signature is new and reports whether it did.
func (c *Corpus) Offer(e Entry) (bool, error) {
	if err := e.Validate(); err != nil {
		return false, err
	}
	if _, ok := c.bySignature[e.Signature]; ok {
		return false, nil
	}
	c.bySignature[e.Signature] = e
	return true, nil
}

// Entries returns the kept inputs ordered by signature.
func (c *Corpus) Entries() []Entry {
	keys := make([]string, 0, len(c.bySignature))
	for k := range c.bySignature {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]Entry, len(keys))
	for i, k := range keys {
		out[i] = c.bySignature[k]
	}
	return out
}

// Len returns the number of kept inputs.
func (c *Corpus) Len() int { return len(c.bySignature) }

// Load offers every "*.json" file at the top of fsys to the corpus, in name order, and returns
// the first error (a file that does not decode, or whose name is not its content hash).
func (c *Corpus) Load(fsys fs.FS) error {
	names, err := fs.Glob(fsys, "*.json")
	if err != nil {
		return err
	}
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		e, err := DecodeEntry(data)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if want := contentName(data); want != name {
			return fmt.Errorf("%s: %w: the name is not the content's hash (%s)", name, ErrEntry, want)
		}
		if _, err := c.Offer(e); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// Save writes e into dir under its content-hash name and returns the file's path. Writing the
// same entry twice leaves one file.
func Save(dir string, e Entry) (string, error) {
	name, data, err := e.Encode()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, name)
	return path, os.WriteFile(path, data, 0o644)
}
