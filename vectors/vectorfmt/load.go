package vectorfmt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
)

// MaxFileBytes bounds the size of a vector file a reader accepts.
const MaxFileBytes = 64 << 20

// Load reads the vector file name from fsys into v (a pointer to one of the file types of
// this package), rejecting unknown members and trailing data so that a misspelled field in a
// hand-edited file cannot be silently ignored.
func Load(fsys fs.FS, name string, v any) error {
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return err
	}
	if len(data) > MaxFileBytes {
		return fmt.Errorf("vectorfmt: %s is %d bytes, over the %d-byte limit", name, len(data), MaxFileBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("vectorfmt: %s: %w", name, err)
	}
	if dec.More() {
		return fmt.Errorf("vectorfmt: %s: data after the top-level object", name)
	}
	return nil
}

// LoadGeneric reads only the header and the shared test fields of a vector file. Unknown
// members are allowed here, because file-specific fields are not part of the generic view.
func LoadGeneric(fsys fs.FS, name string) (*Generic, error) {
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, err
	}
	var g Generic
	if err := json.Unmarshal(data, &g); err != nil {
		return nil, fmt.Errorf("vectorfmt: %s: %w", name, err)
	}
	return &g, nil
}
