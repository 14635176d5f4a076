package vectorfmt

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
)

// Version is the version of the vector files as a set. It changes whenever a file's bytes
// change (a test added, an output corrected), so that a port can pin the vectors it replays;
// the generator writes it to VersionFile and covers it in ManifestFile.
const Version = "1.3.0"

// Files that describe the vector files as a set.
const (
	// VersionFile holds Version and a line feed.
	VersionFile = "VERSION"
	// ManifestFile lists the SHA-256 of every vector file and of VersionFile in the format
	// of sha256sum (hexadecimal digest, two spaces, file name), sorted by name, so that
	// "sha256sum -c SHA256SUMS" in the directory checks a copy.
	ManifestFile = "SHA256SUMS"
)

// Manifest returns the text of ManifestFile for the files given by name.
func Manifest(files map[string][]byte) []byte {
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	var b strings.Builder
	for _, name := range names {
		sum := sha256.Sum256(files[name])
		b.WriteString(hex.EncodeToString(sum[:]) + "  " + name + "\n")
	}
	return []byte(b.String())
}
