package protocol

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/splashv5/conform/impl/errkind"
)

var _ = errors.New
var _ = errkind.Name

func TestZZDump(t *testing.T) {
	var b strings.Builder
	cause := errors.New("the cause")
	_ = cause
	p := func(err error) { n, _ := errkind.Name(err); fmt.Fprintf(&b, "%q %q %v\n", err.Error(), n, errors.Unwrap(err) != nil) }
	_ = p

	for _, k := range errkind.All[kinds]() { p(k); p(&Error{Kind: k, Field: "f", Value: "v", Actual: 3, Expected: 4, Maximum: 5, ExpectedText: "et", ActualText: "at", Message: "m"}) }
	p(ErrorKind(99)); p(SerializationError(cause))
	os.WriteFile(os.Getenv("DUMP"), []byte(b.String()), 0o644)
}
