//go:build !linux

package fakeworker

import (
	"errors"
	"os"
)

// shrinkInput is Linux's only: elsewhere the frame must outgrow the host's pipe or socket by
// its size alone (undoBytes, socketUndoBytes). It still tells a socket from a pipe.
func shrinkInput(in *os.File) (kind string, capacity int, pending []byte, err error) {
	kind = InputPipe
	if info, err := in.Stat(); err == nil && info.Mode()&os.ModeSocket != 0 {
		kind = InputSocket
	}
	return kind, 0, nil, errors.ErrUnsupported
}
