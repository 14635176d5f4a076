package vectors_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/splashv5/conform/vectors"
	"github.com/splashv5/conform/vectors/vectorfmt"
)

// releasedVectors maps every released vectors version to the SHA-256 of its SHA256SUMS. A
// change to any vector file changes that digest, so it cannot land without a new version.
var releasedVectors = map[string]string{
	"1.0.0": "33ee285d085c52a837929ee74d27a0ff1794afa1a2561f11b73594179b6e6b28",
	"1.1.0": "bfab442198bd65b65cf342ab7f50750bbef0685161256390a3c8a71aace7045b",
	"1.2.0": "d360acf921d91c725dd35cd109e2e57a6c36318ef792c5311773b71ee81cac60",
	"1.3.0": "400e987cd90436974bc361145fd7f7ff00e32362fa0fe02aff48d575de0cdaa8",
}

// TestManifest checks VERSION and SHA256SUMS against the vector files on disk and the
// embedded ones, and that the set of files is the version it claims to be.
func TestManifest(t *testing.T) {
	version, err := os.ReadFile(vectorfmt.VersionFile)
	if err != nil {
		t.Fatal(err)
	}
	if string(version) != vectorfmt.Version+"\n" {
		t.Errorf("%s holds %q, want %q (run make vectors)", vectorfmt.VersionFile, version, vectorfmt.Version)
	}
	names, err := filepath.Glob("*.json")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{vectorfmt.VersionFile: version}
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		embedded, err := vectors.FS.ReadFile(name)
		if err != nil || string(embedded) != string(data) {
			t.Errorf("%s: the embedded copy differs from the file (%v)", name, err)
		}
		files[name] = data
	}
	manifest, err := os.ReadFile(vectorfmt.ManifestFile)
	if err != nil {
		t.Fatal(err)
	}
	if want := vectorfmt.Manifest(files); string(manifest) != string(want) {
		t.Errorf("%s is not the SHA-256 of the vector files (run make vectors); want:\n%s", vectorfmt.ManifestFile, want)
	}
	sum := sha256.Sum256(manifest)
	digest := hex.EncodeToString(sum[:])
	if released, ok := releasedVectors[vectorfmt.Version]; !ok || released != digest {
		t.Errorf("the vector files are not those of version %s: set vectorfmt.Version to a new version, run make vectors, "+
			"add the version to releasedVectors with the digest of the new SHA256SUMS and to the versions in vectors/README.md "+
			"(this SHA256SUMS has digest %s)", vectorfmt.Version, digest)
	}
}
