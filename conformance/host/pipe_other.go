//go:build !linux

package host

import (
	"errors"
	"os"
)

// shrinkInput is Linux's only: elsewhere the frame must outgrow the host's pipe by its size
// alone (undoBytes).
func shrinkInput(*os.File) (capacity int, pending []byte, err error) {
	return 0, nil, errors.ErrUnsupported
}
